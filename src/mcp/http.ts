import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../api/errors.ts';
import type { Logger } from '../lib/log.ts';
import type { ApiClient } from './client.ts';
import { createMcpServer } from './server.ts';

export const MCP_PATH = '/mcp';

/**
 * Serves the MCP server over Streamable HTTP at POST /mcp on the API's Fastify instance, in the
 * SDK's stateless mode: each request gets a fresh server and transport (no session to keep, so
 * any number of processes can serve it), answered as one JSON body.
 *
 * One POST carries one JSON-RPC message: a batch (a JSON array) is refused with -32600, since the
 * MCP revision 2025-06-18 dropped batching and the SDK would run up to 100 tool calls for it. So
 * the route's place under the API's per-client rate limit counts each tools/call once (the POST
 * that carries it); the tools' own reads of the API are not counted again (client.ts).
 *
 * GET (a server-sent event stream) and DELETE (ending a session) answer 405 with `Allow: POST`
 * and the API's error body: there is no stream to offer and no session to end. Left to the SDK,
 * GET held a stream open until the client went away and DELETE answered 200. PUT and PATCH get
 * the same 405 rather than the router's 404.
 */
export function registerMcpRoute(app: FastifyInstance, api: ApiClient, log: Logger): void {
  app.post(MCP_PATH, async (request, reply) => {
    if (Array.isArray(request.body)) {
      // The SDK's own shape for a refused message (id null: no single request to answer).
      return reply
        .code(400)
        .header('cache-control', 'no-store')
        .type('application/json; charset=utf-8')
        .send({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: ErrorCode.InvalidRequest,
            message: 'Invalid Request: batches are not supported (MCP 2025-06-18); POST one JSON-RPC message',
          },
        });
    }
    const server = createMcpServer(api, log);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });
  // HEAD comes with GET (Fastify's exposeHeadRoutes) and answers the same, without the body.
  // OPTIONS stays with the CORS plugin (a preflight).
  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: MCP_PATH,
    handler: async (request) => {
      throw new ApiError(
        405,
        'method_not_allowed',
        `${request.method} is not allowed on ${MCP_PATH}; MCP is served statelessly: POST one JSON-RPC message`,
        { allow: 'POST' },
      );
    },
  });
}

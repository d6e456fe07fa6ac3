import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../lib/log.ts';
import type { ApiClient } from './client.ts';
import { createMcpServer } from './server.ts';

export const MCP_PATH = '/mcp';

/**
 * Serves the MCP server over Streamable HTTP at POST /mcp on the API's Fastify instance, in the
 * SDK's stateless mode: each request gets a fresh server and transport (no session to keep, so
 * any number of processes can serve it), answered as one JSON body. GET and DELETE are answered
 * by the transport (405: no server-sent stream, no session). The route is under the API's
 * per-client rate limit like any other; the tools' reads of the API are not counted again.
 */
export function registerMcpRoute(app: FastifyInstance, api: ApiClient, log: Logger): void {
  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: MCP_PATH,
    handler: async (request, reply) => {
      const server = createMcpServer(api, log);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  });
}

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { jsonSchemaOf } from '../api/openapi.ts';
import { writeJson } from '../lib/json.ts';
import type { Logger } from '../lib/log.ts';
import { silentLogger } from '../lib/log.ts';
import type { ApiClient } from './client.ts';
import { TOOLS } from './tools.ts';
import { ToolFailure } from './tools/common.ts';

/**
 * The params of tools/call that this server reads, with messages that name the field. Other
 * members (`_meta`, `task`) are let through unread.
 */
const CallParams = z.looseObject({
  name: z.string({ error: 'must be a string, the name of a tool; see tools/list' }),
  arguments: z
    .record(z.string(), z.unknown(), { error: "must be an object of the tool's named arguments, or left out" })
    .optional(),
});

const INSTRUCTIONS =
  'x402-tally publishes verified 30-day revenue of the sellers of the x402 Bazaar, recomputed from Base USDC settlements on chain. ' +
  'Numbers are in micro-USDC (1 USDC = 1,000,000) and attributed to the seller (the address it is paid at), not to one listing. ' +
  'A seller is verified when the chain shows enough payments from enough distinct payers in the window; titles, descriptions and ' +
  'categories are claims of the catalog, not verified. Every result names the generation it was read from: cite it with its ' +
  'method_version, and pass generation to read the same numbers again.';

/**
 * An MCP server (the official SDK's low-level Server) whose tools read the public API through
 * `api`. Tool inputs are validated with the tools' zod schemas, and the tool list describes
 * inputs and outputs with the same JSON Schemas as the OpenAPI document (bigint as integer).
 * A result carries the API's JSON as text (exact integers) and as structuredContent; an error is
 * a tool error whose text is the API's error body, naming the argument; never a stack trace.
 */
export function createMcpServer(api: ApiClient, log: Logger = silentLogger): Server {
  const server = new Server(
    { name: 'x402-tally', version: '1.0.0' },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  const tools = TOOLS.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.input, 'input') as { type: 'object' },
    outputSchema: jsonSchemaOf(tool.output, 'output') as { type: 'object' },
    annotations: { readOnlyHint: true, openWorldHint: false },
  }));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  // tools/call is answered by the fallback handler, not by setRequestHandler(CallToolRequestSchema):
  // the SDK parses a request against the schema given there before any handler runs, and answers
  // a mismatch (`arguments: null`) with -32603 Internal error and the zod issue list as message.
  // The fallback handler gets the request as sent; CallParams parses it here, and a mismatch is
  // -32602 Invalid params naming the field.
  server.fallbackRequestHandler = async (request): Promise<CallToolResult> => {
    if (request.method !== 'tools/call') throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
    const params = CallParams.safeParse(request.params ?? {});
    if (!params.success) {
      const issue = params.error.issues[0]!;
      throw new McpError(ErrorCode.InvalidParams, `${issue.path.join('.')}: ${issue.message}`);
    }
    const { name, arguments: args } = params.data;
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}; see tools/list`);
    const parsed = tool.input.safeParse(args ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue.path.join('.') || 'arguments';
      const why = issue.code === 'unrecognized_keys' ? 'unknown argument' : issue.message;
      return failure('invalid_parameter', `${field}: ${why}`);
    }
    try {
      const text = writeJson(await tool.call(api, parsed.data));
      return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) };
    } catch (error) {
      if (error instanceof ToolFailure) return failure(error.code, error.message);
      log.error({ err: error, tool: tool.name }, 'mcp tool failed');
      return failure('internal_error', 'internal error; it has been logged');
    }
  };
  return server;
}

function failure(code: string, message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: writeJson({ error: { code, message } }) }] };
}

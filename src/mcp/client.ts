import type { FastifyInstance } from 'fastify';
import { INTERNAL_HEADER } from '../api/index.ts';

/** What the API answered to one GET: its status and its body, byte for byte. */
export interface ApiAnswer {
  status: number;
  text: string;
}

/** Reads one URL of the public API (path and query, e.g. `/api/v1/rankings?limit=5`). */
export type ApiClient = (url: string) => Promise<ApiAnswer>;

/**
 * An ApiClient over Fastify's inject: the request goes through the API's own routes, validation,
 * generation pinning and response cache, without a socket, so the MCP server can only ever say
 * what the API says. `internalToken` (ApiOptions.internalToken) exempts these reads from the
 * per-client rate limit, which the client's /mcp request has already passed.
 */
export function injectClient(app: FastifyInstance, internalToken: string): ApiClient {
  return async (url) => {
    const res = await app.inject({ method: 'GET', url, headers: { [INTERNAL_HEADER]: internalToken } });
    return { status: res.statusCode, text: res.body };
  };
}

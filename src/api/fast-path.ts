import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isCurrent, type ResponseCache } from './cache.ts';
import { wantsCsv } from './csv.ts';
import { MAX_URL_LENGTH } from './handlers/errors.ts';
import { acceptedEncoding, COMPRESS_THRESHOLD, hitAnswer } from './handlers/snapshot.ts';
import type { PublishedPointer } from './published.ts';

export interface FastPathOptions {
  readonly pointer: PublishedPointer;
  readonly cache: ResponseCache;
  readonly cadenceSeconds: number;
  /** The headers @fastify/cors gives every GET (a fixed origin), in the order it sets them. */
  readonly corsHeaders: readonly (readonly [string, string])[];
  /** Called for each request answered here (ApiOptions.onFastPath). */
  readonly onAnswer?: () => void;
}

/** Answers a request when it can (true), or leaves it to Fastify untouched (false). */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/**
 * A cache hit answered before Fastify (docs/architecture.md, "Request path"): a GET whose URL has
 * a cached body in the published state is looked up, counted by the rate limiter, and written
 * with the same status, headers and bytes Fastify's route would write (hitAnswer is the one rule
 * of both), without building Fastify's request and reply or running its hook chain: a third to
 * a half less CPU per hit (docs/benchmarks.md, "The API against nginx, quiet machine and fast
 * path"). Anything else goes to Fastify: a miss, HEAD and other methods, a request the hooks
 * would refuse (no Host, an over-long URL), CSV asked by Accept, an Accept-Encoding that
 * @fastify/compress would read differently (`*`, `deflate`, `identity`), a client over its
 * limit (Fastify answers the 429), and every request once the API is closing (Fastify's 503).
 */
export function fastPath(app: FastifyInstance, options: FastPathOptions): FastPath {
  // The rate limiter's own store, through its plugin: one count for both paths.
  const limit = app.createRateLimit();
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  return async (req, res) => {
    const url = req.url ?? '';
    if (closing || req.method !== 'GET' || url.length > MAX_URL_LENGTH || !req.headers.host) return false;
    if (wantsCsv(req, undefined)) return false;
    const state = await options.pointer.current();
    const entry = options.cache.get(`${state.version} ${url}`);
    if (!entry || !isCurrent(entry, Date.now())) return false;
    const acceptEncoding = req.headers['accept-encoding'];
    if (entry.body.length >= COMPRESS_THRESHOLD && acceptEncoding !== undefined && !acceptedEncoding(acceptEncoding))
      return false;
    // Counted before anything is written. An exceeded count goes on to Fastify, whose hook counts
    // it again: past the limit a second count changes no header or body (remaining stays 0, the
    // window's reset is not moved: no ban, continueExceeding or exponentialBackoff is set).
    const counted = await limit(asFastifyRequest(req));
    if (!counted.isAllowed && counted.isExceeded) return false;
    const answer = hitAnswer(options.cadenceSeconds, state, entry, req.headers['if-none-match'], acceptEncoding);
    // In Fastify's order: the CORS hook's, the rate limiter's, the handler's, then Content-Length.
    const headers: Record<string, string | number> = {};
    for (const [name, value] of options.corsHeaders) headers[name] = value;
    if (!counted.isAllowed) {
      headers['x-ratelimit-limit'] = counted.max;
      headers['x-ratelimit-remaining'] = counted.remaining;
      headers['x-ratelimit-reset'] = counted.ttlInSeconds;
    }
    for (const [name, value] of answer.headers) headers[name] = value;
    if (answer.body) headers['content-length'] = String(answer.body.length);
    res.writeHead(answer.status, headers);
    res.end(answer.body);
    options.onAnswer?.();
    return true;
  };
}

/**
 * What the rate limiter reads of a request: the client address as Fastify's `request.ip` gives it
 * without trustProxy (the socket's), the headers (the allow list's internal token) and the route's
 * config (no per-route limit on the cached routes).
 */
function asFastifyRequest(req: IncomingMessage): FastifyRequest {
  return { ip: req.socket.remoteAddress, headers: req.headers, raw: req, routeOptions: { config: {} } } as never;
}

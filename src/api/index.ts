import http from 'node:http';
import type { Duplex } from 'node:stream';
import zlib from 'node:zlib';
import compress from '@fastify/compress';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { silentLogger, type Logger } from '../lib/log.ts';
import { maxAgeSeconds, ResponseCache } from './cache.ts';
import { registerBundleRoute } from './bundle-route.ts';
import { registerWebRoutes } from './web.ts';
import { DOCS_HTML } from './docs-page.ts';
import { llmsTxt } from './llms-txt.ts';
import { BASE, ENDPOINTS, routePath, undecodableParameter } from './endpoints.ts';
import { ALLOWED_METHODS, ApiError, errorBody, parameterCode } from './errors.ts';
import { answerOnSocket, clientErrorHandler, installErrorHandlers, MAX_URL_LENGTH } from './handlers/errors.ts';
import { COMPRESS_THRESHOLD, metaHandler, snapshotHandler, type HandlerContext } from './handlers/snapshot.ts';
import { fastPath, type FastPath } from './fast-path.ts';
import { openApiDocument } from './openapi.ts';
import { PublishedPointer } from './published.ts';
import type { GenerationRow } from './read/generation.ts';
import { DEFAULT_SEARCH_TUNING, type SearchTuning } from './read/search.ts';
import { writeJson } from '../lib/json.ts';

export { openApiDocument } from './openapi.ts';

export interface ApiOptions {
  /** Requests per minute per client IP (RATE_LIMIT_PER_MINUTE). */
  rateLimitPerMinute: number;
  /** Seconds between scheduled runs: bounds Cache-Control max-age and drives /meta freshness. */
  cadenceSeconds: number;
  /**
   * Whether the chain the published generations were read from is the public Base mainnet
   * (PUBLIC_CHAIN; the demo: false): /meta's `chain.public`, and with it the explorer links of the
   * page. Default false: no link to an explorer that does not know the transactions.
   */
  publicChain?: boolean;
  log?: Logger;
  /** How long the published pointer may be cached, in ms (default 500; keep <= 1000). */
  cacheTtlMs?: number;
  /** Byte budget of the in-memory response cache (default 64 MiB). */
  cacheBytes?: number;
  /**
   * Requests that carry this value in the `x-tally-internal` header skip the rate limit: the MCP
   * server's own reads of the API (src/mcp), counted once already as the client's /mcp request.
   * A random value made per process; unset, no request skips the limit.
   */
  internalToken?: string;
  /**
   * Called each time the API builds the digests of a generation's audit bundle (once per
   * generation whose digests are not stored yet; concurrent requests share one build).
   */
  onBundleBuild?: (generation: number) => void;
  /** Rows per database page of a streamed bundle file (default BUNDLE_PAGE_ROWS, 1000). */
  bundlePageRows?: number;
  /**
   * A server already listening (src/cli/port.ts: the port is held from a command's start); the
   * API takes over its requests and is then made ready, not listened.
   */
  server?: http.Server;
  /**
   * The tuning of search (`/api/v1/sellers?q=`, src/api/read/search.ts): any of its settings,
   * over DEFAULT_SEARCH_TUNING (prefixes of 3 letters or more matching up to 64 catalog words,
   * address prefixes of 6 hex digits or more, and the choice of query path).
   */
  search?: Partial<SearchTuning>;
  /**
   * Whether a cache hit is answered before Fastify's hook chain (src/api/fast-path.ts; default
   * true). Off, every request takes Fastify's route: the same bytes, slower.
   */
  fastPath?: boolean;
  /** Called for each request the fast path answered. */
  onFastPath?: () => void;
}

/**
 * CORS: any origin may read (GET, HEAD), and see the validators. The fast path writes the headers
 * @fastify/cors sets for these options on a GET (FAST_CORS_HEADERS); a test compares both paths.
 */
const CORS = {
  origin: '*',
  methods: ['GET', 'HEAD'],
  exposedHeaders: ['ETag', 'Retry-After', 'Cache-Control'],
  strictPreflight: false,
  maxAge: 86_400,
} as const;
const FAST_CORS_HEADERS = [
  ['access-control-allow-origin', CORS.origin],
  ['access-control-expose-headers', CORS.exposedHeaders.join(', ')],
] as const;

/**
 * How long the server keeps an idle connection open for its next request: Fastify's default,
 * above the 60 s for which proxies (nginx, cloud load balancers) keep an upstream connection.
 * Fastify sets it only on a server it makes itself; ours is made in `serverFactory`, where Node's
 * 5 s applied: a client that sent its next request on a connection after 5 s (plus Node's 1 s of
 * grace) of other work, or of no CPU on a loaded machine, had it reset (ECONNRESET; in the tests
 * the client and the server share one event loop). test/api/keep-alive.test.ts.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** The header that carries ApiOptions.internalToken. */
export const INTERNAL_HEADER = 'x-tally-internal';

/**
 * The read-only API over published generations (SPEC 4). Returns a Fastify instance that is
 * not listening yet: the caller calls `.listen({ port, host })` and `.close()`. Only SELECTs are
 * issued, so a database role with SELECT rights is enough. Building twice is safe.
 */
export async function buildApi(db: Kysely<Schema>, options: ApiOptions): Promise<FastifyInstance> {
  const log = options.log ?? silentLogger;
  // Set once the cache and the rate limiter exist; until then every request goes to Fastify.
  let fast: FastPath | undefined;
  const app = Fastify({
    // Fastify's logger type is pino's FastifyBaseLogger; our pino Logger is one.
    loggerInstance: log as FastifyBaseLogger,
    // Per-request log lines cost throughput; failures are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    // Over-long slugs are a 400 from the schema rather than a 404 from the router.
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    return503OnClosing: true,
    clientErrorHandler,
    serverFactory: (fastify) => {
      const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
        if (!fast) return fastify(req, res);
        fast(req, res).then(
          (answered) => answered || fastify(req, res),
          // Only a read before any write can fail (the published pointer before its first load):
          // the route meets the same failure and answers it in the API's error shape.
          (error: unknown) => {
            log.debug({ err: error, url: req.url }, 'fast path declined after an error');
            if (!res.headersSent) fastify(req, res);
          },
        );
      };
      // Node answers an HTTP/1.1 request without Host with an empty 400 of its own; let it through
      // to the onRequest hook, which answers in the API's error shape. CONNECT never reaches a
      // route: Node emits 'connect', and without a listener it drops the socket unanswered.
      const server = options.server ?? http.createServer({ requireHostHeader: false }, handler);
      if (options.server) {
        server.removeAllListeners('request'); // the holder's "starting" answer
        server.on('request', handler);
      }
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      server.on('connect', (_request, socket: Duplex) =>
        answerOnSocket(
          socket,
          405,
          'Method Not Allowed',
          'method_not_allowed',
          `CONNECT is not allowed; this API is read-only (${ALLOWED_METHODS})`,
          { Allow: ALLOWED_METHODS },
        ),
      );
      return server;
    },
    // A URL that is not valid percent-encoded UTF-8 never reaches a route or the error handler.
    frameworkErrors: (_error, request, rawReply) => {
      // A path parameter over the router's limit fails here, before the onRequest hook: same 414.
      if (request.url.length > MAX_URL_LENGTH) {
        return (rawReply as FastifyReply)
          .code(414)
          .header('cache-control', 'no-store')
          .type('application/json; charset=utf-8')
          .send(errorBody('uri_too_long', `the URL is longer than ${MAX_URL_LENGTH} characters`));
      }
      // A path parameter that does not decode is named like any other bad parameter.
      const name = undecodableParameter(request.url.split('?')[0] ?? '');
      (rawReply as FastifyReply)
        .code(400)
        .header('cache-control', 'no-store')
        .type('application/json; charset=utf-8')
        .send(
          name === undefined
            ? errorBody('bad_request', 'the URL is not valid percent-encoded UTF-8')
            : errorBody(parameterCode(name), `${name}: must be valid percent-encoded UTF-8`),
        );
    },
  });

  await app.register(cors, { ...CORS, methods: [...CORS.methods], exposedHeaders: [...CORS.exposedHeaders] });
  // Bodies of 1 KB and more are compressed when the client asks (a 50-row directory page: 30,899
  // bytes as JSON, about 3 KB gzipped). Brotli at quality 4: close to gzip's CPU cost, smaller output.
  await app.register(compress, {
    global: true,
    threshold: COMPRESS_THRESHOLD,
    encodings: ['br', 'gzip'],
    brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } },
  });
  await app.register(rateLimit, {
    max: options.rateLimitPerMinute,
    timeWindow: 60_000,
    allowList: (request) =>
      options.internalToken !== undefined && request.headers[INTERNAL_HEADER] === options.internalToken,
    errorResponseBuilder: (_request, context) =>
      new ApiError(
        context.statusCode,
        'rate_limited',
        `more than ${context.max} requests per minute from this client; retry in ${context.after}`,
      ),
  });

  installErrorHandlers(app, log);

  const cache = new ResponseCache(options.cacheBytes ?? 64 * 1024 * 1024);
  const generations = new Map<number, GenerationRow>();
  const pointer = new PublishedPointer(
    db,
    options.cacheTtlMs ?? 500,
    (state) => {
      cache.retain(state.retained);
      for (const n of generations.keys()) if (!state.retained.has(n)) generations.delete(n);
    },
    (error) => log.warn({ err: error }, 'published pointer unreadable; serving the last good state'),
  );
  const ctx: HandlerContext = {
    db,
    pointer,
    cache,
    cadenceSeconds: options.cadenceSeconds,
    publicChain: options.publicChain ?? false,
    generations,
    reading: { search: { ...DEFAULT_SEARCH_TUNING, ...options.search } },
  };

  if (options.fastPath ?? true) {
    fast = fastPath(app, {
      pointer,
      cache,
      cadenceSeconds: options.cadenceSeconds,
      corsHeaders: FAST_CORS_HEADERS,
      onAnswer: options.onFastPath,
    });
  }

  for (const endpoint of ENDPOINTS) {
    const handler = endpoint.load ? snapshotHandler(ctx, endpoint) : metaHandler(ctx, endpoint);
    app.get(routePath(endpoint.path), handler);
  }

  const openapi = writeJson(openApiDocument());
  app.get(`${BASE}/openapi.json`, async (request: FastifyRequest, reply: FastifyReply) => {
    rejectQuery(request);
    return reply.header('cache-control', 'public, max-age=300').type('application/json; charset=utf-8').send(openapi);
  });
  app.get(`${BASE}/docs`, async (request: FastifyRequest, reply: FastifyReply) => {
    rejectQuery(request);
    return reply.header('cache-control', 'public, max-age=300').type('text/html; charset=utf-8').send(DOCS_HTML);
  });
  registerBundleRoute(app, db, { onBuild: options.onBundleBuild, pageRows: options.bundlePageRows });
  registerWebRoutes(app);
  app.get('/llms.txt', async (request: FastifyRequest, reply: FastifyReply) => {
    rejectQuery(request);
    // Its last section names the latest generation: cached no longer than the next run may take.
    const latest = (await pointer.current()).latest;
    const maxAge = latest ? maxAgeSeconds(latest.publishedAt, options.cadenceSeconds, Date.now()) : 0;
    return reply
      .header('cache-control', `public, max-age=${Math.min(300, maxAge)}`)
      .type('text/plain; charset=utf-8')
      .send(llmsTxt(latest));
  });
  return app;
}

function rejectQuery(request: FastifyRequest): void {
  const names = Object.keys(request.query as object);
  if (names.length > 0)
    throw new ApiError(400, 'unknown_parameter', `${names[0]}: unknown query parameter; this resource takes none`);
}

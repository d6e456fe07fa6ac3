import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Schema } from '../../db/schema.ts';
import {
  etagFor,
  etagOfBody,
  isCurrent,
  matchesIfNoneMatch,
  maxAgeSeconds,
  type CachedBody,
  type ResponseCache,
} from '../cache.ts';
import { sendCsv, wantsCsv } from '../csv.ts';
import type { Endpoint, ReadOptions } from '../endpoints.ts';
import { ApiError, badParameter, generationNotFound, noGeneration } from '../errors.ts';
import { writeJson } from '../../lib/json.ts';
import type { PublishedPointer, PublishedState } from '../published.ts';
import { readPublishedGeneration, type GenerationRow } from '../read/generation.ts';
import { metaBody, metaOfGeneration, type MetaOfGeneration } from '../read/meta.ts';

export interface HandlerContext {
  readonly db: Kysely<Schema>;
  readonly pointer: PublishedPointer;
  readonly cache: ResponseCache;
  readonly cadenceSeconds: number;
  /** Whether the chain the generations were read from is the public Base mainnet (ApiOptions.publicChain). */
  readonly publicChain: boolean;
  /** Rows of published generations (immutable), by number; pruned ones are dropped on refresh. */
  readonly generations: Map<number, GenerationRow>;
  /** What the API's options tell the readers. */
  readonly reading: ReadOptions;
}

/** Parses query or path parameters; the first problem becomes a 400 naming the parameter. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown, where: 'query' | 'path'): z.output<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const accepted = Object.keys((schema as unknown as z.ZodObject).shape);
    throw badParameter(
      issue.keys[0] ?? '?',
      `unknown query parameter; accepted: ${accepted.length ? accepted.join(', ') : 'none'}`,
      'unknown_parameter',
    );
  }
  throw badParameter(String(issue.path[0] ?? where), issue.message);
}

/**
 * Parses the query parameters of a request (see parseInput). Fastify's query parser keeps a value
 * that is not valid percent-encoded UTF-8 as its raw text (`%ED%A0%80` stays those nine
 * characters): such a value is a 400 naming its parameter, not a search for other text.
 */
export function parseQuery<T extends z.ZodType>(schema: T, request: FastifyRequest): z.output<T> {
  const at = request.url.indexOf('?');
  for (const pair of at < 0 ? [] : request.url.slice(at + 1).split('&')) {
    const [name = '', value = ''] = pair.split(/=(.*)/s);
    try {
      decodeURIComponent(value);
    } catch {
      throw badParameter(decoded(name), 'must be valid percent-encoded UTF-8');
    }
  }
  return parseInput(schema, request.query, 'query');
}

/** A parameter name as the query parser gives it: decoded, or its raw text when it does not decode. */
function decoded(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

/** The generation a request asks for: pinned and retained, or the latest; 404/503 otherwise. */
function chooseGeneration(state: PublishedState, pinned: number | undefined): number {
  if (pinned !== undefined) {
    if (!state.retained.has(pinned)) throw generationNotFound(pinned);
    return pinned;
  }
  if (!state.latest) throw noGeneration();
  return state.latest.generation;
}

/** Runs `read` inside a read-only repeatable-read transaction that first re-checks the generation. */
async function inSnapshot<T>(
  db: Kysely<Schema>,
  n: number,
  read: (trx: Kysely<Schema>, g: GenerationRow) => Promise<T>,
): Promise<T> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const g = await readPublishedGeneration(trx, n);
      if (!g) throw generationNotFound(n);
      return read(trx, g);
    });
}

/** Whether a body has no rows (then a one-statement read re-checks that its generation still exists). */
function isEmpty(body: unknown): boolean {
  const b = body as { count?: number; days?: unknown[] };
  return b.count === 0 || (Array.isArray(b.days) && b.days.length === 0);
}

/**
 * Reads a body of generation n. Generation rows are immutable, so they are cached; a
 * one-statement read sees one snapshot, and only an empty answer (or a 404) could come from a
 * generation pruned meanwhile, so only then is the generation checked again.
 */
async function readBody(
  ctx: HandlerContext,
  endpoint: Endpoint,
  n: number,
  query: unknown,
  params: unknown,
): Promise<unknown> {
  const load = endpoint.load!;
  if (endpoint.reads === 'transaction')
    return inSnapshot(ctx.db, n, (trx, g) => load(trx, g, query, params, ctx.reading));
  let g = ctx.generations.get(n);
  if (!g) {
    const row = await readPublishedGeneration(ctx.db, n);
    if (!row) throw generationNotFound(n);
    ctx.generations.set(n, row);
    g = row;
  }
  const stillPublished = async () => (await readPublishedGeneration(ctx.db, n)) !== null;
  let body: unknown;
  try {
    body = await load(ctx.db, g, query, params, ctx.reading);
  } catch (error) {
    if (error instanceof ApiError && error.statusCode === 404 && !(await stillPublished())) throw generationNotFound(n);
    throw error;
  }
  if (isEmpty(body) && !(await stillPublished())) throw generationNotFound(n);
  return body;
}

/** Bodies of this many bytes or more are compressed when the client asks (br or gzip). */
export const COMPRESS_THRESHOLD = 1024;

/** What a cached body answers to one request: its status, its headers in the order sent, its bytes. */
export interface HitAnswer {
  readonly status: 200 | 304;
  readonly headers: readonly (readonly [name: string, value: string])[];
  /** Absent for a 304. */
  readonly body?: Buffer;
}

/**
 * The answer of a cached body (SPEC 4: cache-control until the next expected run, a strong ETag,
 * a 304 for a matching If-None-Match, br or gzip when asked). One rule for the handlers below and
 * for the fast path (src/api/fast-path.ts), which must answer the same bytes.
 */
export function hitAnswer(
  cadenceSeconds: number,
  state: PublishedState,
  entry: CachedBody,
  ifNoneMatch: string | undefined,
  acceptEncoding: string | string[] | undefined,
): HitAnswer {
  const basis = state.latest ?? state.retained.get(entry.generation);
  const maxAge = basis ? maxAgeSeconds(basis.publishedAt, cadenceSeconds, Date.now()) : 0;
  const validators = [
    ['cache-control', `public, max-age=${maxAge}`],
    ['etag', entry.etag],
  ] as const;
  if (matchesIfNoneMatch(ifNoneMatch, entry.etag)) return { status: 304, headers: validators };
  const headers = [
    ...validators,
    ['vary', 'accept-encoding'],
    ['content-type', 'application/json; charset=utf-8'],
  ] as const;
  const encoding = entry.body.length >= COMPRESS_THRESHOLD ? acceptedEncoding(acceptEncoding) : undefined;
  if (!encoding) return { status: 200, headers, body: entry.body };
  // Compressed once per cached body, not once per request (on-the-fly compression of a 30 KB page
  // cut a hit from ~17,000 to ~4,000 requests/s on this 2-core machine); @fastify/compress leaves
  // a reply that already has a Content-Encoding alone.
  const compressed = (entry[encoding] ??=
    encoding === 'br'
      ? zlib.brotliCompressSync(entry.body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } })
      : zlib.gzipSync(entry.body));
  return { status: 200, headers: [...headers, ['content-encoding', encoding]], body: compressed };
}

function send(
  ctx: HandlerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  state: PublishedState,
  entry: CachedBody,
) {
  const answer = hitAnswer(
    ctx.cadenceSeconds,
    state,
    entry,
    request.headers['if-none-match'],
    request.headers['accept-encoding'],
  );
  for (const [name, value] of answer.headers) reply.header(name, value);
  return reply.code(answer.status).send(answer.body);
}

/** The encoding to answer with: br, else gzip, when the client accepts it (q=0 refuses). */
export function acceptedEncoding(header: string | string[] | undefined): 'br' | 'gzip' | undefined {
  const accepted = new Set(
    String(header ?? '')
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => !/;\s*q=0(\.0*)?$/.test(part))
      .map((part) => part.split(';')[0]!.trim()),
  );
  if (accepted.has('br')) return 'br';
  if (accepted.has('gzip')) return 'gzip';
  return undefined;
}

/**
 * A snapshot endpoint: bodies are cached per (published state, URL); the state's version changes
 * on every publish or prune, so a new generation is picked up within the pointer's TTL. A cached
 * URL was validated when it was first served, so hits skip validation. Its query did not ask for
 * CSV either (`format=csv` is never cached): only an Accept header still can.
 */
export function snapshotHandler(ctx: HandlerContext, endpoint: Endpoint) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const state = await ctx.pointer.current();
    const key = `${state.version} ${request.url}`;
    const hit = ctx.cache.get(key);
    if (hit && !(endpoint.csv && wantsCsv(request, undefined))) return send(ctx, request, reply, state, hit);
    if (endpoint.csv) {
      const query = parseQuery(endpoint.query, request) as { generation?: number; format?: string };
      if (wantsCsv(request, query.format)) {
        const n = chooseGeneration(state, query.generation);
        const g = await readPublishedGeneration(ctx.db, n);
        if (!g) throw generationNotFound(n);
        const basis = state.latest ?? state.retained.get(n);
        reply
          .header(
            'cache-control',
            `public, max-age=${basis ? maxAgeSeconds(basis.publishedAt, ctx.cadenceSeconds, Date.now()) : 0}`,
          )
          .header('vary', 'accept');
        const { columns, catalogText } = endpoint.csv;
        return sendCsv(
          reply,
          { filename: endpoint.csv.filename(g), columns, catalogText },
          endpoint.csv.rows(ctx.db, g, query, ctx.reading),
        );
      }
    }
    let entry = hit;
    if (!entry) {
      const params = endpoint.params ? parseInput(endpoint.params, request.params, 'path') : {};
      const query = parseQuery(endpoint.query, request) as { generation?: number };
      const n = chooseGeneration(state, query.generation);
      const body = endpoint.response.parse(await readBody(ctx, endpoint, n, query, params));
      entry = { generation: n, body: Buffer.from(writeJson(body)), etag: etagFor(n, request.url) };
      ctx.cache.set(key, entry);
    }
    return send(ctx, request, reply, state, entry);
  };
}

/**
 * /meta: the generation's own part is cached per generation; cadence, freshness and the
 * retained list are added per request, so the ETag is taken from the body (it changes when
 * age_seconds does). The body is cached per (published state, URL) like the others, but answers
 * only within the second it was made in (CachedBody.second).
 */
export function metaHandler(ctx: HandlerContext, endpoint: Endpoint) {
  const fixedByGeneration = new Map<number, MetaOfGeneration>();
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const state = await ctx.pointer.current();
    const key = `${state.version} ${request.url}`;
    const cached = ctx.cache.get(key);
    if (cached && isCurrent(cached, Date.now())) return send(ctx, request, reply, state, cached);
    const query = parseQuery(endpoint.query, request) as { generation?: number };
    const n = chooseGeneration(state, query.generation);
    let fixed = fixedByGeneration.get(n);
    if (!fixed) {
      const loaded = await inSnapshot(ctx.db, n, (trx, g) => metaOfGeneration(trx, g, ctx.publicChain));
      // Validate what the database holds once per generation (constants and sources are jsonb).
      endpoint.response.parse(metaBody(loaded, state, ctx.cadenceSeconds, Date.now()));
      fixed = loaded;
      for (const k of fixedByGeneration.keys()) if (!state.retained.has(k)) fixedByGeneration.delete(k);
      fixedByGeneration.set(n, fixed);
    }
    if (!state.latest) throw new ApiError(503, 'no_generation', 'no generation is published');
    const now = Date.now();
    const body = writeJson(metaBody(fixed, state, ctx.cadenceSeconds, now));
    const entry = { generation: n, body: Buffer.from(body), etag: etagOfBody(n, body), second: Math.floor(now / 1000) };
    ctx.cache.set(key, entry);
    return send(ctx, request, reply, state, entry);
  };
}

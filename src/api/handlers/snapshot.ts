import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Schema } from '../../db/schema.ts';
import {
  etagFor,
  etagOfBody,
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

function send(
  ctx: HandlerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  state: PublishedState,
  entry: CachedBody,
) {
  const basis = state.latest ?? state.retained.get(entry.generation);
  const maxAge = basis ? maxAgeSeconds(basis.publishedAt, ctx.cadenceSeconds, Date.now()) : 0;
  reply.header('cache-control', `public, max-age=${maxAge}`).header('etag', entry.etag);
  if (matchesIfNoneMatch(request.headers['if-none-match'], entry.etag)) return reply.code(304).send();
  reply.header('vary', 'accept-encoding').type('application/json; charset=utf-8');
  const encoding = entry.body.length >= 1024 ? acceptedEncoding(request.headers['accept-encoding']) : undefined;
  if (!encoding) return reply.send(entry.body);
  // Compressed once per cached body, not once per request (on-the-fly compression of a 30 KB page
  // cut a hit from ~17,000 to ~4,000 requests/s on this 2-core machine); @fastify/compress leaves
  // a reply that already has a Content-Encoding alone.
  const compressed = (entry[encoding] ??=
    encoding === 'br'
      ? zlib.brotliCompressSync(entry.body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } })
      : zlib.gzipSync(entry.body));
  return reply.header('content-encoding', encoding).send(compressed);
}

/** The encoding to answer with: br, else gzip, when the client accepts it (q=0 refuses). */
function acceptedEncoding(header: string | string[] | undefined): 'br' | 'gzip' | undefined {
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
 * URL was validated when it was first served, so hits skip validation.
 */
export function snapshotHandler(ctx: HandlerContext, endpoint: Endpoint) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const state = await ctx.pointer.current();
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
    const key = `${state.version} ${request.url}`;
    let entry = ctx.cache.get(key);
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
 * age_seconds does).
 */
export function metaHandler(ctx: HandlerContext, endpoint: Endpoint) {
  const fixedByGeneration = new Map<number, MetaOfGeneration>();
  // The body changes at most once a second (age_seconds): the last one is kept per (state, URL).
  let last: { key: string; entry: CachedBody } | undefined;
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const state = await ctx.pointer.current();
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
    const key = `${state.version} ${Math.floor(now / 1000)} ${n}`;
    if (last?.key !== key) {
      const body = writeJson(metaBody(fixed, state, ctx.cadenceSeconds, now));
      last = { key, entry: { generation: n, body: Buffer.from(body), etag: etagOfBody(n, body) } };
    }
    return send(ctx, request, reply, state, last.entry);
  };
}

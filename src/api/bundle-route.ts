import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import {
  BUNDLE_FILE_NAMES,
  buildBundleDigests,
  bundleFileText,
  bundleManifest,
  manifestText,
  readBundleDigests,
  readGenerationHead,
  storeBundleDigests,
  type BundleFileDigest,
  type GenerationHead,
} from '../publish/index.ts';
import { matchesIfNoneMatch } from './cache.ts';
import { BASE } from './endpoints.ts';
import { ApiError, generationNotFound } from './errors.ts';
import { parseInput } from './handlers/snapshot.ts';
import { readPublishedGeneration } from './read/generation.ts';
import { BundleParams } from './schemas/query.ts';

export const BUNDLE_PATH = `${BASE}/generations/{generation}/bundle/{file}`;

export interface BundleRouteOptions {
  /**
   * Called once each time the digests of a generation's bundle are built (every file streamed
   * through sha256), before the build starts: a seam for tests and metrics. Requests that find
   * the digests stored, or join a build under way, do not call it.
   */
  onBuild?: ((generation: number) => void) | undefined;
  /** Rows per database page of a streamed file (default BUNDLE_PAGE_ROWS). */
  pageRows?: number | undefined;
}

/** What the route knows of one generation's bundle once built: the manifest and each file's digest. */
interface BuiltBundle {
  head: GenerationHead;
  manifest: string;
  manifestEtag: string;
  files: Map<string, BundleFileDigest>;
}

/** Built bundles kept in memory (a few KB each: the manifest and nine digests, never the files). */
const KEEP_BUILT = 16;

/**
 * `GET /api/v1/generations/{generation}/bundle/{file}`: the audit bundle of any retained
 * generation, file by file (manifest.json and each file it lists), byte for byte what
 * `x402-tally export` writes, so an auditor of a running deployment needs no access to its
 * database: download the files into a folder and run `x402-tally audit --bundle DIR`.
 *
 * A file is streamed from the database page by page (`bundleFileText`, the reader export writes
 * with), never held whole in memory. The manifest needs each file's sha256: the first request for
 * any file of a generation builds them (one streamed pass over every file) unless they are stored
 * already (`bundle_files`), and stores them; concurrent requests wait for that one build. A
 * generation never changes, so its files are cacheable for good: Cache-Control immutable, and the
 * ETag is the file's sha256 (as listed in the manifest; for manifest.json its own sha256).
 */
export function registerBundleRoute(app: FastifyInstance, db: Kysely<Schema>, options: BundleRouteOptions = {}): void {
  const built = new Map<number, BuiltBundle>();
  const building = new Map<number, Promise<BuiltBundle>>();

  async function build(n: number): Promise<BuiltBundle> {
    const head = await readGenerationHead(db, n);
    let files = await readBundleDigests(db, n);
    if (!files) {
      options.onBuild?.(n);
      files = await buildBundleDigests(db, head);
      // Under a SELECT-only role they cannot be stored: kept in memory, built again after a restart.
      if (!(await storeBundleDigests(db, n, files)))
        app.log.warn({ generation: n }, 'bundle digests built but not stored: the database role cannot write');
    }
    const manifest = manifestText(bundleManifest(head, files));
    return {
      head,
      manifest,
      manifestEtag: `"${createHash('sha256').update(manifest, 'utf8').digest('hex')}"`,
      files: new Map(files.map((f) => [f.name, f])),
    };
  }

  /** The built bundle of generation n: from memory, else from the one build under way, else a new one. */
  function bundleOf(n: number): Promise<BuiltBundle> {
    const hit = built.get(n);
    if (hit) return Promise.resolve(hit);
    let pending = building.get(n);
    if (!pending) {
      pending = build(n)
        .then((b) => {
          built.set(n, b);
          if (built.size > KEEP_BUILT) built.delete(built.keys().next().value!);
          return b;
        })
        // A failed build (the database went away) is not remembered: the next request tries again.
        .finally(() => building.delete(n));
      building.set(n, pending);
    }
    return pending;
  }

  app.route({
    // HEAD is declared here rather than left to Fastify, whose automatic HEAD would read the whole
    // file from the database to throw it away.
    method: ['GET', 'HEAD'],
    url: BUNDLE_PATH.replace('{generation}', ':generation').replace('{file}', ':file'),
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      if (Object.keys(request.query as object).length > 0) {
        throw new ApiError(
          400,
          'unknown_parameter',
          `${Object.keys(request.query as object)[0]}: unknown query parameter; this resource takes none`,
        );
      }
      const params = parseInput(BundleParams, request.params, 'path');
      const n = params.generation;
      if (!BUNDLE_FILE_NAMES.includes(params.file)) {
        throw new ApiError(
          404,
          'not_found',
          `a bundle has no file ${params.file.slice(0, 80)}; its files: ${BUNDLE_FILE_NAMES.join(', ')}`,
        );
      }
      if (!(await readPublishedGeneration(db, n))) throw generationNotFound(n);
      const bundle = await bundleOf(n);
      const isManifest = params.file === 'manifest.json';
      const file = isManifest ? undefined : bundle.files.get(params.file);
      if (!isManifest && !file)
        throw new ApiError(404, 'not_found', `generation ${n} has no bundle file ${params.file}`);
      const etag = file ? `"${file.sha256}"` : bundle.manifestEtag;
      reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('etag', etag)
        .type(isManifest ? 'application/json; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
      if (matchesIfNoneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send();
      // The identity length; @fastify/compress drops it when it compresses the body.
      reply.header('content-length', file ? file.bytes.toString() : String(Buffer.byteLength(bundle.manifest)));
      if (request.method === 'HEAD') return reply.send();
      if (!file) return reply.send(bundle.manifest);
      // One chunk ahead at most (highWaterMark 1): memory per download is a chunk, whatever the file.
      return reply.send(Readable.from(fileText(db, bundle.head, file, options.pageRows), { highWaterMark: 1 }));
    },
  });
}

/**
 * The text of a bundle file, page by page, checked against its digest's size as it goes: a
 * response that would not be the file the manifest lists fails (the client sees the connection
 * cut, not a short file that looks complete).
 */
async function* fileText(
  db: Kysely<Schema>,
  head: GenerationHead,
  file: BundleFileDigest,
  pageRows: number | undefined,
): AsyncGenerator<Buffer> {
  let bytes = 0n;
  for await (const page of bundleFileText(db, head, file.name, pageRows)) {
    bytes += BigInt(page.bytes.length);
    if (bytes > file.bytes) break;
    yield page.bytes;
  }
  if (bytes !== file.bytes)
    throw new Error(
      `${file.name} of generation ${head.generation}: ${bytes} bytes read, its digest says ${file.bytes}`,
    );
}

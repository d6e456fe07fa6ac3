import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { BUNDLE_FILE_NAMES, bundleFiles, readGenerationRows } from '../publish/index.ts';
import { BASE } from './endpoints.ts';
import { ApiError, generationNotFound } from './errors.ts';
import { parseInput } from './handlers/snapshot.ts';
import { readPublishedGeneration } from './read/generation.ts';
import { BundleParams } from './schemas/query.ts';

export const BUNDLE_PATH = `${BASE}/generations/{generation}/bundle/{file}`;

/**
 * `GET /api/v1/generations/{generation}/bundle/{file}`: the audit bundle of any retained
 * generation, file by file (manifest.json and each file it lists), byte for byte what
 * `x402-tally export` writes, so an auditor of a running deployment needs no access to its
 * database: download the files into a folder and run `x402-tally audit --bundle DIR`.
 * A generation never changes, so its files are cacheable for good. The last two bundles built are
 * kept in memory (an auditor fetches the files one after another).
 */
export function registerBundleRoute(app: FastifyInstance, db: Kysely<Schema>): void {
  const built = new Map<number, Map<string, string>>();
  app.get(
    BUNDLE_PATH.replace('{generation}', ':generation').replace('{file}', ':file'),
    async (request: FastifyRequest, reply: FastifyReply) => {
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
      let texts = built.get(n);
      if (!texts) {
        texts = bundleFiles(await readGenerationRows(db, n)).texts;
        built.set(n, texts);
        if (built.size > 2) built.delete(built.keys().next().value!);
      }
      const text = texts.get(params.file);
      if (text === undefined) throw new ApiError(404, 'not_found', `generation ${n} has no bundle file ${params.file}`);
      return reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .type(params.file.endsWith('.json') ? 'application/json; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .send(text);
    },
  );
}

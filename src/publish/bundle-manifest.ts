import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { writeJson } from '../lib/json.ts';
import { BUNDLE_NDJSON_FILES, bundleFileText } from './bundle.ts';
import { BUNDLE_FORMAT, type GenerationHead, type Manifest, type ManifestFile } from './bundle-schema.ts';

export { BUNDLE_FORMAT, type Manifest, type ManifestFile } from './bundle-schema.ts';

/** A file of a bundle as built once and stored in `bundle_files`: the manifest's entry and its size. */
export interface BundleFileDigest extends ManifestFile {
  /** The file's length in bytes (the Content-Length the API serves it with). */
  bytes: bigint;
}

/** The manifest of a generation's bundle from its head and its files' digests (manifest order). */
export function bundleManifest(head: GenerationHead, files: readonly ManifestFile[]): Manifest {
  return { format: BUNDLE_FORMAT, ...head, files: files.map(({ name, sha256, rows }) => ({ name, sha256, rows })) };
}

/** manifest.json as `export` writes it and the API serves it. */
export function manifestText(manifest: Manifest): string {
  return `${writeJson(manifest, 2)}\n`;
}

/**
 * Streams one NDJSON file of the bundle through sha256 (and through `sink`, when given: export's
 * file on disk), page by page; returns its manifest entry and size. Memory holds one page.
 */
export async function digestBundleFile(
  db: Kysely<Schema>,
  head: GenerationHead,
  name: string,
  sink?: (bytes: Buffer) => Promise<unknown>,
): Promise<BundleFileDigest> {
  const hash = createHash('sha256');
  let rows = 0;
  let bytes = 0n;
  for await (const page of bundleFileText(db, head, name)) {
    hash.update(page.bytes);
    rows += page.rows;
    bytes += BigInt(page.bytes.length);
    await sink?.(page.bytes);
  }
  return { name, sha256: hash.digest('hex'), rows, bytes };
}

/**
 * Builds the digests of every NDJSON file of a generation's bundle: one streamed pass over each
 * file (a pass over all the generation's rows). The caller stores them (`storeBundleDigests`): a
 * generation never changes, so this runs once per generation.
 */
export async function buildBundleDigests(db: Kysely<Schema>, head: GenerationHead): Promise<BundleFileDigest[]> {
  const files: BundleFileDigest[] = [];
  for (const { name } of BUNDLE_NDJSON_FILES) files.push(await digestBundleFile(db, head, name));
  return files;
}

/**
 * The stored digests of a generation's bundle, in manifest order; null when they were never built
 * (a generation published before migration 0024, or not yet exported or downloaded).
 */
export async function readBundleDigests(db: Kysely<Schema>, generation: number): Promise<BundleFileDigest[] | null> {
  const stored = await db
    .selectFrom('bundle_files')
    .select(['name', 'sha256', 'rows', 'bytes'])
    .where('generation', '=', generation)
    .execute();
  const files = BUNDLE_NDJSON_FILES.map(({ name }) => stored.find((r) => r.name === name));
  if (files.some((f) => f === undefined)) return null;
  return files as BundleFileDigest[];
}

// A role that may only SELECT (42501 insufficient_privilege) or a read-only transaction or
// standby (25006 read_only_sql_transaction) cannot keep the digests; they are still correct.
const CANNOT_WRITE = new Set(['42501', '25006']);

/**
 * Stores a generation's bundle digests (idempotent: a concurrent store of the same digests by
 * another process is kept). Returns false, changing nothing, when this connection may not write
 * (the API under a SELECT-only role); any other error is thrown.
 */
export async function storeBundleDigests(
  db: Kysely<Schema>,
  generation: number,
  files: readonly BundleFileDigest[],
): Promise<boolean> {
  try {
    await db
      .insertInto('bundle_files')
      .values(files.map((f) => ({ generation, name: f.name, sha256: f.sha256, rows: f.rows, bytes: f.bytes })))
      .onConflict((oc) => oc.columns(['generation', 'name']).doNothing())
      .execute();
    return true;
  } catch (error) {
    if (CANNOT_WRITE.has((error as { code?: unknown }).code as string)) return false;
    throw error;
  }
}

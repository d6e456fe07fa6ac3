import { createHash } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { TallyError } from '../lib/errors.ts';
import { parseJsonLossless } from '../lib/json.ts';
import { BUNDLE_NDJSON_FILES, readGenerationHead, type GenerationRows } from './bundle.ts';
import {
  bundleManifest,
  digestBundleFile,
  manifestText,
  readBundleDigests,
  storeBundleDigests,
  type BundleFileDigest,
} from './bundle-manifest.ts';
import { firstIssue, ManifestSchema, parseBundleFile, type Manifest } from './bundle-schema.ts';

export { BUNDLE_FORMAT, type Manifest, type ManifestFile } from './bundle-manifest.ts';

/** The NDJSON files of a bundle and the rows each holds. */
const FILES = Object.fromEntries(BUNDLE_NDJSON_FILES.map((f) => [f.name, f.key])) as Record<
  string,
  Exclude<keyof GenerationRows, 'generation'>
>;

/** Files added after the first bundles (method 2.0.0, the daily series): a bundle exported before them has none. */
const OPTIONAL = new Set(['periods.ndjson', 'seller_periods.ndjson', 'seller_daily.ndjson']);

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Writes the bundle of one generation into `outDir`: `manifest.json` (generation, method version,
 * as-of point, window, constants, digests, sources, and every file with its sha256 and row count)
 * and one NDJSON file per kind of row. Each file is streamed from the database page by page
 * (`bundleFileText`, what the API serves too) and hashed as it is written, so memory holds one
 * page whatever the generation's size. The catalog items are written exactly as stored, so the
 * sha256 of catalog_items.ndjson equals the catalog digest. Files are written into a temporary
 * folder beside `outDir` and moved into place at the end: a crash leaves no half bundle.
 * `outDir` must not exist or be empty.
 *
 * The files' digests are stored for the API (`bundle_files`) when they were not yet and the
 * connection may write; when they were, the written files must match them (a published generation
 * never changes), else the export fails naming the file.
 */
export async function exportGeneration(db: Kysely<Schema>, generation: number, outDir: string): Promise<Manifest> {
  const head = await readGenerationHead(db, generation);
  const stored = await readBundleDigests(db, generation);
  const staging = `${outDir.replace(/[/\\]+$/, '')}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const files: BundleFileDigest[] = [];
  for (const { name } of BUNDLE_NDJSON_FILES) {
    const out = await open(path.join(staging, name), 'w');
    try {
      files.push(await digestBundleFile(db, head, name, (text) => out.write(text)));
    } finally {
      await out.close();
    }
    const before = stored?.find((f) => f.name === name);
    if (before && (before.sha256 !== files.at(-1)!.sha256 || before.rows !== files.at(-1)!.rows)) {
      await rm(staging, { recursive: true, force: true });
      throw new TallyError(
        `${name} of generation ${generation} is not the file its stored digest describes (sha256 ${before.sha256}); ` +
          'a published generation must never change: check what wrote to its rows',
      );
    }
  }
  if (!stored) await storeBundleDigests(db, generation, files);
  const manifest = bundleManifest(head, files);
  const out = await open(path.join(staging, 'manifest.json'), 'w');
  try {
    await out.write(manifestText(manifest));
  } finally {
    await out.close();
  }
  await rmdir(outDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw new TallyError(`${outDir} exists and is not empty; choose another --out`);
  });
  await rename(staging, outDir);
  return manifest;
}

/** The names of a bundle's files: manifest.json and the NDJSON files it lists. */
export const BUNDLE_FILE_NAMES: readonly string[] = ['manifest.json', ...Object.keys(FILES)];

/** The largest manifest.json read, in bytes. */
export const MAX_MANIFEST_BYTES = 1_000_000;

export interface Bundle {
  manifest: Manifest;
  rows: GenerationRows;
  /** Integrity problems: files whose sha256 or row count differs from the manifest. */
  integrity: string[];
}

/**
 * Reads a bundle written by `exportGeneration`. Integrity problems (a file changed after export)
 * are reported in `integrity`, not thrown, so that an audit can also say which rows differ.
 * Throws when the manifest is missing or of another format, or when a row does not fit its
 * file's schema (the error names the file, the line and the field: bundle-schema.ts).
 */
export async function readBundle(dir: string): Promise<Bundle> {
  const file = path.join(dir, 'manifest.json');
  const size = await stat(file).then(
    (s) => s.size,
    () => null,
  );
  if (size === null) throw new TallyError(`there is no ${file}: is this an x402-tally bundle?`);
  // A manifest is a few KB; a huge one is not a manifest, and is not read into memory.
  if (size > MAX_MANIFEST_BYTES)
    throw new TallyError(`${file} is ${size} bytes; a bundle manifest is at most ${MAX_MANIFEST_BYTES}`);
  let json: unknown;
  try {
    json = parseJsonLossless(await readFile(file, 'utf8'));
  } catch {
    throw new TallyError(`${file} is not valid JSON (truncated?): is this an x402-tally bundle?`);
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) throw new TallyError(`${file}: ${firstIssue(parsed.error, 'the manifest')}`);
  const manifest: Manifest = parsed.data;
  const integrity: string[] = [];
  const rows = { generation: manifest } as unknown as GenerationRows;
  for (const [name, key] of Object.entries(FILES)) {
    const entry = manifest.files.find((f) => f.name === name);
    const text = await readFile(path.join(dir, name), 'utf8').catch(() => null);
    if (text === null && !entry && OPTIONAL.has(name)) {
      (rows as any)[key] = [];
      continue;
    }
    if (text === null || !entry) {
      integrity.push(`${name}: missing`);
      (rows as any)[key] = [];
      continue;
    }
    const parsed = parseBundleFile(name, path.join(dir, name), text);
    if (sha256(text) !== entry.sha256)
      integrity.push(`${name}: sha256 differs from the manifest (the file was changed)`);
    if (parsed.length !== entry.rows) integrity.push(`${name}: ${parsed.length} rows, the manifest says ${entry.rows}`);
    (rows as any)[key] = parsed;
  }
  return { manifest, rows, integrity };
}

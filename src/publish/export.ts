import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Schema } from '../db/schema.ts';
import { TallyError } from '../lib/errors.ts';
import { parseJsonLossless, writeJson } from '../lib/json.ts';
import { readGenerationRows, type GenerationRows } from './bundle.ts';

export const BUNDLE_FORMAT = 'x402-tally-bundle/1';

/** The NDJSON files of a bundle and the rows each holds. */
const FILES = {
  'catalog_items.ndjson': 'catalogItemLines',
  'catalog_rejects.ndjson': 'rejects',
  'listings.ndjson': 'listings',
  'sellers.ndjson': 'sellers',
  'payments.ndjson': 'payments',
  'market_daily.ndjson': 'marketDaily',
  'seller_daily.ndjson': 'sellerDaily',
  'periods.ndjson': 'periods',
  'seller_periods.ndjson': 'sellerPeriods',
} as const satisfies Record<string, Exclude<keyof GenerationRows, 'generation'>>;

export interface ManifestFile {
  name: string;
  sha256: string;
  rows: number;
}

export type Manifest = GenerationRows['generation'] & { format: string; files: ManifestFile[] };

/** Files added after the first bundles (method 2.0.0, the daily series): a bundle exported before them has none. */
const OPTIONAL = new Set(['periods.ndjson', 'seller_periods.ndjson', 'seller_daily.ndjson']);

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const ndjson = (lines: string[]) => lines.map((l) => `${l}\n`).join('');

/**
 * Writes the bundle of one generation into `outDir`: `manifest.json` (generation, method version,
 * as-of point, window, constants, digests, sources, and every file with its sha256 and row count)
 * and one NDJSON file per kind of row. The catalog items are written exactly as stored, so the
 * sha256 of catalog_items.ndjson equals the catalog digest. Files are written into a temporary
 * folder beside `outDir` and moved into place at the end: a crash leaves no half bundle.
 * `outDir` must not exist or be empty.
 */
export async function exportGeneration(db: Kysely<Schema>, generation: number, outDir: string): Promise<Manifest> {
  const bundle = bundleFiles(await readGenerationRows(db, generation));
  const staging = `${outDir.replace(/[/\\]+$/, '')}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  for (const [name, text] of bundle.texts) await writeFile(path.join(staging, name), text);
  await rmdir(outDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw new TallyError(`${outDir} exists and is not empty; choose another --out`);
  });
  await rename(staging, outDir);
  return bundle.manifest;
}

/** The names of a bundle's files: manifest.json and the NDJSON files it lists. */
export const BUNDLE_FILE_NAMES: readonly string[] = ['manifest.json', ...Object.keys(FILES)];

/**
 * The files of a generation's bundle, as text, byte for byte what `exportGeneration` writes (the
 * API serves them too: GET /api/v1/generations/{n}/bundle/{file}). The whole bundle is built in
 * memory: fine for the catalog-sized generations of today, a stream per file past ~10^6 payments.
 */
export function bundleFiles(rows: GenerationRows): { manifest: Manifest; texts: Map<string, string> } {
  const texts = new Map<string, string>();
  const files: ManifestFile[] = [];
  for (const [name, key] of Object.entries(FILES)) {
    const list = rows[key];
    const lines = key === 'catalogItemLines' ? (list as string[]) : (list as unknown[]).map((r) => writeJson(r));
    const text = ndjson(lines);
    texts.set(name, text);
    files.push({ name, sha256: sha256(text), rows: lines.length });
  }
  const manifest: Manifest = { format: BUNDLE_FORMAT, ...rows.generation, files };
  texts.set('manifest.json', `${writeJson(manifest, 2)}\n`);
  return { manifest, texts };
}

/** The largest manifest.json read, in bytes. */
export const MAX_MANIFEST_BYTES = 1_000_000;

const chainInt = z
  .union([z.bigint(), z.int()], { error: 'must be a whole number' })
  .transform((v) => BigInt(v))
  .pipe(z.bigint().nonnegative('must not be negative'));
const hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits');

/**
 * A bundle's manifest as `exportGeneration` writes it. A bundle is untrusted input: the manifest
 * is parsed field by field, and the first field that does not fit is named.
 */
const ManifestSchema = z.looseObject({
  format: z.literal(BUNDLE_FORMAT, { error: (i) => `is ${JSON.stringify(i.input)}, not ${BUNDLE_FORMAT}` }),
  generation: z.int().positive(),
  method_version: z.string().regex(/^\d+\.\d+\.\d+$/, 'must be a version like 1.0.0'),
  generated_at: z.string(),
  as_of: z.looseObject({
    block_number: chainInt,
    block_hash: z.string().regex(/^0x[0-9a-f]{64}$/, 'must be 0x + 64 hex digits'),
    timestamp: chainInt,
  }),
  window: z.looseObject({ start: chainInt, end: chainInt, seconds: chainInt, market_from: chainInt }),
  constants: z.record(z.string(), z.unknown()),
  sources: z.array(z.unknown()),
  digests: z.looseObject({ catalog_sha256: hex64, evidence_sha256: hex64.nullable() }),
  catalog: z.looseObject({
    snapshot_id: chainInt,
    source: z.string(),
    fetched_at: z.string(),
    items: z.int(),
    listings: z.int(),
    rejected: z.int(),
  }),
  files: z.array(z.strictObject({ name: z.string(), sha256: hex64, rows: z.int().nonnegative() })),
});

export interface Bundle {
  manifest: Manifest;
  rows: GenerationRows;
  /** Integrity problems: files whose sha256 or row count differs from the manifest. */
  integrity: string[];
}

/**
 * Reads a bundle written by `exportGeneration`. Integrity problems (a file changed after export)
 * are reported in `integrity`, not thrown, so that an audit can also say which rows differ.
 * Throws when the manifest is missing or of another format.
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
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new TallyError(`${file}: ${issue.path.join('.') || 'the manifest'}: ${issue.message}`);
  }
  const manifest = parsed.data as Manifest;
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
    const lines = text.split('\n').filter((l) => l.length > 0);
    if (sha256(text) !== entry.sha256)
      integrity.push(`${name}: sha256 differs from the manifest (the file was changed)`);
    if (lines.length !== entry.rows) integrity.push(`${name}: ${lines.length} rows, the manifest says ${entry.rows}`);
    (rows as any)[key] = key === 'catalogItemLines' ? lines : lines.map((l) => parseJsonLossless(l));
  }
  return { manifest, rows, integrity };
}

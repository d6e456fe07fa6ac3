import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
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
  'periods.ndjson': 'periods',
  'seller_periods.ndjson': 'sellerPeriods',
} as const satisfies Record<string, Exclude<keyof GenerationRows, 'generation'>>;

export interface ManifestFile {
  name: string;
  sha256: string;
  rows: number;
}

export type Manifest = GenerationRows['generation'] & { format: string; files: ManifestFile[] };

/** Files added with method 2.0.0: a bundle of a 1.0.0 generation exported before them has none. */
const OPTIONAL = new Set(['periods.ndjson', 'seller_periods.ndjson']);

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
  const rows = await readGenerationRows(db, generation);
  const staging = `${outDir.replace(/[/\\]+$/, '')}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const files: ManifestFile[] = [];
  for (const [name, key] of Object.entries(FILES)) {
    const list = rows[key];
    const lines = key === 'catalogItemLines' ? (list as string[]) : (list as unknown[]).map((r) => writeJson(r));
    const text = ndjson(lines);
    await writeFile(path.join(staging, name), text);
    files.push({ name, sha256: sha256(text), rows: lines.length });
  }
  const manifest: Manifest = { format: BUNDLE_FORMAT, ...rows.generation, files };
  await writeFile(path.join(staging, 'manifest.json'), `${writeJson(manifest, 2)}\n`);
  await rmdir(outDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw new TallyError(`${outDir} exists and is not empty; choose another --out`);
  });
  await rename(staging, outDir);
  return manifest;
}

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
  let manifest: Manifest;
  try {
    manifest = parseJsonLossless(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  } catch (cause) {
    throw new TallyError(`cannot read ${path.join(dir, 'manifest.json')}: is this an x402-tally bundle?`, { cause });
  }
  if (manifest.format !== BUNDLE_FORMAT) {
    throw new TallyError(`bundle format ${String(manifest.format)} is not ${BUNDLE_FORMAT}`);
  }
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
    if (sha256(text) !== entry.sha256) integrity.push(`${name}: sha256 differs from the manifest (the file was changed)`);
    if (lines.length !== entry.rows) integrity.push(`${name}: ${lines.length} rows, the manifest says ${entry.rows}`);
    (rows as any)[key] = key === 'catalogItemLines' ? lines : lines.map((l) => parseJsonLossless(l));
  }
  return { manifest, rows, integrity };
}

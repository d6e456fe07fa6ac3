import { z } from 'zod';
import { TallyError } from '../lib/errors.ts';
import { parseJsonLossless } from '../lib/json.ts';

/**
 * The shapes of a bundle's files, as zod schemas: manifest.json and one schema per NDJSON file.
 * A bundle is untrusted input (anyone may hand one to `audit`), so each file is parsed against
 * its schema and the first thing that does not fit is named: the file, the line and the field.
 * The types of the manifest and of a generation's head are inferred from these schemas, so the
 * reader and the writer cannot drift apart.
 */

export const BUNDLE_FORMAT = 'x402-tally-bundle/1';

const wholeNumber = 'must be a whole number';
/** An integer as parseJsonLossless returns it: a number up to 15 digits, a bigint beyond. */
const int = z.union([z.int(), z.bigint()], { error: wholeNumber });
/** An integer of the chain (block, timestamp, snapshot id): read as a bigint whatever its size. */
const chainInt = z
  .union([z.bigint(), z.int()], { error: wholeNumber })
  .transform((v) => BigInt(v))
  .pipe(z.bigint().nonnegative('must not be negative'));
const hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits');
const hash = z.string().regex(/^0x[0-9a-f]{64}$/, 'must be 0x + 64 hex digits');
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a day like 2026-01-31');
const tier = z.enum(['verified', 'listed_only']);
const evidenceState = z.enum(['verified', 'insufficient', 'not_observed']);

/** What a generation's manifest says of it before its list of files (readGenerationHead). */
const HEAD_SHAPE = {
  generation: z.int().positive(),
  method_version: z.string().regex(/^\d+\.\d+\.\d+$/, 'must be a version like 1.0.0'),
  generated_at: z.string(),
  as_of: z.looseObject({ block_number: chainInt, block_hash: hash, timestamp: chainInt }),
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
};

/** A generation's head alone (the manifest without `format` and `files`). */
export const GenerationHeadSchema = z.object(HEAD_SHAPE);
export type GenerationHead = z.output<typeof GenerationHeadSchema>;

export const ManifestFileSchema = z.strictObject({ name: z.string(), sha256: hex64, rows: z.int().nonnegative() });
export type ManifestFile = z.output<typeof ManifestFileSchema>;

/** A bundle's manifest as `exportGeneration` writes it; fields a later version may add are kept. */
export const ManifestSchema = z.looseObject({
  format: z.literal(BUNDLE_FORMAT, { error: (i) => `is ${JSON.stringify(i.input)}, not ${BUNDLE_FORMAT}` }),
  ...HEAD_SHAPE,
  files: z.array(ManifestFileSchema),
});
export type Manifest = z.output<typeof ManifestSchema>;

// Method 3.0.0's columns are absent from the files of 1.x and 2.x generations (bundle.ts'
// `columns3`), hence optional; a 3.0.0 file without them differs from its recomputation, which
// the audit reports as a difference.
const later = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

/**
 * The rows of each NDJSON file but catalog_items.ndjson (whose lines are the catalog's own JSON,
 * kept verbatim): one schema per file, the columns bundle.ts writes. Extra fields are kept, so
 * the audit names them as differences rather than refusing the bundle.
 */
export const BUNDLE_ROW_SCHEMAS: Readonly<Record<string, z.ZodType<Record<string, unknown>>>> = {
  'catalog_rejects.ndjson': z.looseObject({
    item_index: int,
    accept_index: int.nullable(),
    reason: z.string(),
    detail: z.string(),
  }),
  'listings.ndjson': z.looseObject({
    listing_id: z.string(),
    seller_address: z.string().nullable(),
    verifiability: z.enum(['base_usdc', 'other_rail']),
    resource_url: z.string(),
    title: z.string().nullable(),
    network: z.string(),
    description: z.string().nullable(),
    category: z.string(),
    category_source: z.enum(['auto', 'seller_asserted']),
    tier,
    evidence_state: evidenceState,
    verified_revenue_30d_micro: int.nullable(),
    median_payment_30d_micro: int.nullable(),
    farm_flag: int.nullable(),
    farm_reasons: z.string().nullable(),
    sibling_listings: int,
  }),
  'sellers.ndjson': z.looseObject({
    seller_address: z.string(),
    listing_count: int,
    payments_30d: int,
    payers_30d: int,
    verified_revenue_30d_micro: int,
    median_payment_30d_micro: int.nullable(),
    evidence_state: evidenceState,
    tier,
    farm_flag: int,
    farm_reasons: z.string().nullable(),
    rank: int.nullable(),
    categories: z.array(z.string()),
    evidence_sha256: z.string(),
    first_payment_ts: int.nullable(),
    last_payment_ts: int.nullable(),
    first_block: int.nullable(),
    last_block: int.nullable(),
    class_payments_30d: later(z.array(int)),
    class_revenue_30d_micro: later(z.array(int)),
    external_payments_30d: later(int),
    external_revenue_30d_micro: later(int),
    external_payers_30d: later(int),
    internal_seller_funded_payments_30d: later(int),
    internal_seller_funded_revenue_30d_micro: later(int),
    internal_seller_funded_payers_30d: later(int),
    internal_same_operator_payments_30d: later(int),
    internal_same_operator_revenue_30d_micro: later(int),
    internal_same_operator_payers_30d: later(int),
  }),
  'payments.ndjson': z.looseObject({
    tx_hash: hash,
    log_index: int,
    block_number: int,
    block_hash: hash,
    block_timestamp: int,
    payer: z.string(),
    seller_address: z.string(),
    value: int,
    in_window: z.boolean(),
    class: later(z.string()),
    internal_reason: later(z.string()),
  }),
  'market_daily.ndjson': z.looseObject({
    day,
    payments: int,
    volume_micro: int,
    payers: int,
    sellers_paid: int,
    median_payment_micro: int.nullable(),
    tracked_sellers: int,
    tracked_listings: int,
    external_volume_micro: later(int),
  }),
  'seller_daily.ndjson': z.looseObject({
    seller_address: z.string(),
    day,
    payments: int,
    revenue_micro: int,
    payers: int,
  }),
  'periods.ndjson': z.looseObject({ period_start: int, payments: int, sha256: z.string() }),
  'seller_periods.ndjson': z.looseObject({
    seller_address: z.string(),
    period_start: int,
    payments: int,
    sha256: z.string(),
  }),
};

/** The first issue of a failed parse, said as `field: why` (`whole: why` when the whole value is wrong). */
export function firstIssue(error: z.ZodError, whole = 'the row'): string {
  const issue = error.issues[0]!;
  return `${issue.path.join('.') || whole}: ${issue.message}`;
}

/**
 * Parses one NDJSON file of a bundle (`file` is how an error names it), one row per non-empty
 * line. A catalog item line must be JSON and is kept as its text; any other line must fit its
 * file's schema and is returned as parsed (integers beyond 15 digits as bigints, values
 * untouched). Throws a TallyError naming the file, the line (from 1) and the field of the first
 * line that does not fit.
 */
export function parseBundleFile(name: string, file: string, text: string): unknown[] {
  const schema = BUNDLE_ROW_SCHEMAS[name];
  const rows: unknown[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length === 0) continue;
    let value: unknown;
    try {
      value = parseJsonLossless(line);
    } catch {
      throw new TallyError(`${file} line ${i + 1}: not valid JSON: is this an x402-tally bundle?`);
    }
    if (!schema) {
      rows.push(line);
      continue;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new TallyError(`${file} line ${i + 1}: ${firstIssue(parsed.error)}`);
    rows.push(value);
  }
  return rows;
}

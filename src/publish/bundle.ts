import { sql, type Kysely } from 'kysely';
import { to as copyTo } from 'pg-copy-streams';
import { pagesOf } from '../db/cursor.ts';
import { pgPoolOf } from '../db/index.ts';
import { GEN_LISTING_COLUMNS, type Schema } from '../db/schema.ts';
import { TallyError } from '../lib/errors.ts';
import type { GenerationHead } from './bundle-schema.ts';

/** What a generation's manifest says of it, before its list of files (the manifest's schema). */
export type { GenerationHead } from './bundle-schema.ts';

/**
 * A generation as plain rows: what `export` writes and what `audit` compares. Every value is
 * JSON-ready (bigint for integers that may exceed 2^53, ISO text for times).
 */
export interface GenerationRows {
  generation: GenerationHead;
  catalogItemLines: string[];
  rejects: Record<string, unknown>[];
  listings: Record<string, unknown>[];
  sellers: Record<string, unknown>[];
  payments: Record<string, unknown>[];
  marketDaily: Record<string, unknown>[];
  /** The daily series of each seller (UTC days of the window with payments), by seller then day. */
  sellerDaily: Record<string, unknown>[];
  /** Method 2.0.0: the period digests of the generation (all sellers), by period_start; [] under 1.0.0. */
  periods: Record<string, unknown>[];
  /** Method 2.0.0: the period digests of each seller, by seller_address then period_start. */
  sellerPeriods: Record<string, unknown>[];
}

type RowsKey = Exclude<keyof GenerationRows, 'generation'>;

/**
 * One NDJSON file of a bundle: the rows it holds (`key` of GenerationRows), where they are read
 * (`from`: one generation's rows by `generation`, or one catalog snapshot's by `snapshot_id`),
 * their columns in the order a line writes them, and the file's order.
 */
interface BundleFile {
  name: string;
  key: RowsKey;
  from: keyof Schema;
  by: 'generation' | 'snapshot_id';
  columns: readonly string[];
  /** ORDER BY over the columns of `from` as `t` (byte order wherever text orders). */
  orderBy: string;
  /**
   * Method 3.0.0's columns, written after `columns` in the files of 3.0.0 generations only: a
   * 1.x or 2.x bundle keeps its bytes (docs/METHOD.md 2.11.5).
   */
  columns3?: readonly string[];
}

/** Whether a generation's bundle carries method 3.0.0's columns (every version after 2.x). */
const hasColumns3 = (head: GenerationHead) => head.method_version !== '1.0.0' && head.method_version !== '2.0.0';

/**
 * The NDJSON files of a bundle, in manifest order. One definition serves the whole-generation
 * reader (`readGenerationRows`: audit, compare) and the streamed files (export, the API), so the
 * two cannot order or shape rows differently (test/api/bundle.test.ts checks the bytes of one
 * against writeJson of the other).
 */
const FILES: readonly BundleFile[] = [
  {
    name: 'catalog_items.ndjson',
    key: 'catalogItemLines',
    from: 'catalog_items',
    by: 'snapshot_id',
    columns: ['item_json'],
    orderBy: 't.item_index',
  },
  {
    name: 'catalog_rejects.ndjson',
    key: 'rejects',
    from: 'catalog_rejects',
    by: 'snapshot_id',
    columns: ['item_index', 'accept_index', 'reason', 'detail'],
    orderBy: 't.reject_index',
  },
  {
    name: 'listings.ndjson',
    key: 'listings',
    from: 'gen_listings',
    by: 'generation',
    columns: GEN_LISTING_COLUMNS.filter((c) => c !== 'generation'),
    orderBy: 't.listing_id collate "C"',
  },
  {
    name: 'sellers.ndjson',
    key: 'sellers',
    from: 'gen_sellers',
    by: 'generation',
    // Every column of gen_sellers but `generation`, in table order (sql/schema.txt).
    columns: [
      'seller_address',
      'listing_count',
      'payments_30d',
      'payers_30d',
      'verified_revenue_30d_micro',
      'median_payment_30d_micro',
      'evidence_state',
      'tier',
      'farm_flag',
      'farm_reasons',
      'rank',
      'categories',
      'evidence_sha256',
      'first_payment_ts',
      'last_payment_ts',
      'first_block',
      'last_block',
    ],
    columns3: [
      'class_payments_30d',
      'class_revenue_30d_micro',
      'external_payments_30d',
      'external_revenue_30d_micro',
      'external_payers_30d',
      'internal_seller_funded_payments_30d',
      'internal_seller_funded_revenue_30d_micro',
      'internal_seller_funded_payers_30d',
      'internal_same_operator_payments_30d',
      'internal_same_operator_revenue_30d_micro',
      'internal_same_operator_payers_30d',
    ],
    orderBy: 't.seller_address collate "C"',
  },
  {
    name: 'payments.ndjson',
    key: 'payments',
    from: 'generation_payments',
    by: 'generation',
    columns: [
      'tx_hash',
      'log_index',
      'block_number',
      'block_hash',
      'block_timestamp',
      'payer',
      'seller_address',
      'value',
      'in_window',
    ],
    columns3: ['class', 'internal_reason'],
    orderBy: 't.block_number, t.log_index, t.tx_hash collate "C"',
  },
  {
    name: 'market_daily.ndjson',
    key: 'marketDaily',
    from: 'gen_market_daily',
    by: 'generation',
    columns: [
      'day',
      'payments',
      'volume_micro',
      'payers',
      'sellers_paid',
      'median_payment_micro',
      'tracked_sellers',
      'tracked_listings',
    ],
    columns3: ['external_volume_micro'],
    orderBy: 't.day',
  },
  {
    name: 'seller_daily.ndjson',
    key: 'sellerDaily',
    from: 'gen_seller_daily',
    by: 'generation',
    columns: ['seller_address', 'day', 'payments', 'revenue_micro', 'payers'],
    orderBy: 't.seller_address collate "C", t.day',
  },
  {
    name: 'periods.ndjson',
    key: 'periods',
    from: 'gen_periods',
    by: 'generation',
    columns: ['period_start', 'payments', 'sha256'],
    orderBy: 't.period_start',
  },
  {
    name: 'seller_periods.ndjson',
    key: 'sellerPeriods',
    from: 'gen_seller_periods',
    by: 'generation',
    columns: ['seller_address', 'period_start', 'payments', 'sha256'],
    orderBy: 't.seller_address collate "C", t.period_start',
  },
];

/** The NDJSON files of a bundle, in manifest order, with the rows (key of GenerationRows) each holds. */
export const BUNDLE_NDJSON_FILES: readonly { name: string; key: RowsKey }[] = FILES.map(({ name, key }) => ({
  name,
  key,
}));

const columnsOf = (file: BundleFile, head: GenerationHead) =>
  sql.join([...file.columns, ...(hasColumns3(head) ? (file.columns3 ?? []) : [])].map((c) => sql.ref(`t.${c}`)));
// The id is inlined (a number read from our own generations row): COPY takes no parameters.
const whereOf = (file: BundleFile, head: GenerationHead) =>
  sql`t.${sql.id(file.by)} = ${sql.lit(file.by === 'generation' ? head.generation : head.catalog.snapshot_id)}`;

/** The rows of one file as values (bigint, text, arrays), in the file's order. */
function rowsQuery(file: BundleFile, head: GenerationHead) {
  return sql<Record<string, unknown>>`select ${columnsOf(file, head)} from ${sql.table(file.from)} t
     where ${whereOf(file, head)} order by ${sql.raw(file.orderBy)}`;
}

/**
 * The lines of one file as text, made by the database: a catalog item is its stored JSON text;
 * any other row is `row_to_json` of its columns, which writes what `writeJson` writes for the
 * values `rowsQuery` returns (compact, keys in column order, integers as digits, text escaped as
 * JSON.stringify escapes it, dates as "YYYY-MM-DD", arrays as arrays). No line holds a raw
 * newline or control character (JSON escapes them), so a line is one line of the file.
 */
function linesQuery(file: BundleFile, head: GenerationHead) {
  const line =
    file.key === 'catalogItemLines'
      ? sql`t.item_json`
      : sql`(select row_to_json(r) from (select ${columnsOf(file, head)}) r)::text`;
  return sql<{ line: string }>`select ${line} as line from ${sql.table(file.from)} t
     where ${whereOf(file, head)} order by ${sql.raw(file.orderBy)}`;
}

/**
 * Reads the head of one generation (any status): what its manifest says before the files, and its
 * catalog snapshot. Throws a TallyError when the generation does not exist.
 */
export async function readGenerationHead(db: Kysely<Schema>, generation: number): Promise<GenerationHead> {
  const g = await db.selectFrom('generations').selectAll().where('generation', '=', generation).executeTakeFirst();
  if (!g) throw new TallyError(`generation ${generation} does not exist (or was pruned)`);
  const snapshot = await db
    .selectFrom('catalog_snapshots')
    .selectAll()
    .where('snapshot_id', '=', g.catalog_snapshot_id)
    .executeTakeFirstOrThrow();
  return {
    generation: g.generation,
    method_version: g.method_version,
    generated_at: g.generated_at.toISOString(),
    as_of: { block_number: g.as_of_block, block_hash: g.as_of_block_hash, timestamp: g.as_of_ts },
    window: { start: g.window_start_ts, end: g.as_of_ts, seconds: g.window_seconds, market_from: g.market_from_ts },
    constants: g.constants as GenerationHead['constants'],
    sources: g.sources as GenerationHead['sources'],
    digests: { catalog_sha256: g.catalog_sha256, evidence_sha256: g.evidence_sha256 },
    catalog: {
      snapshot_id: g.catalog_snapshot_id,
      source: snapshot.source,
      fetched_at: snapshot.fetched_at.toISOString(),
      items: snapshot.items_count,
      listings: snapshot.listings_count,
      rejected: snapshot.rejected_count,
    },
  };
}

/**
 * Reads every row of one generation (any status), in a stable order, all into memory: for the
 * audit's comparison. To write or serve a bundle, stream it (`bundleFileText`) instead.
 */
export async function readGenerationRows(db: Kysely<Schema>, generation: number): Promise<GenerationRows> {
  const head = await readGenerationHead(db, generation);
  const rows = { generation: head } as GenerationRows;
  for (const file of FILES) {
    const found = (await rowsQuery(file, head).execute(db)).rows;
    (rows as unknown as Record<RowsKey, unknown[]>)[file.key] =
      file.key === 'catalogItemLines' ? found.map((r) => r.item_json as string) : found;
  }
  return rows;
}

/** Rows read per page by `bundleFileText` on the embedded database: about 0.35 MB of payments. */
export const BUNDLE_PAGE_ROWS = 1000;

/**
 * COPY ... TO STDOUT in CSV with a delimiter and a quote character that no line can hold (JSON
 * escapes every control character): each line comes out verbatim, one per row, ending in "\n".
 */
const COPY_OPTIONS = `(format csv, delimiter E'\\x01', quote E'\\x02')`;

/**
 * One NDJSON file of a generation's bundle, streamed: chunks of the file's bytes with the number
 * of lines each holds, read from the database as the caller asks for them, so memory holds a
 * chunk whatever the file's size. The concatenated chunks are the file, byte for byte (export
 * writes them, the API serves them, the manifest hashes them). `head` is the generation's
 * `readGenerationHead`. Stopping early releases the database connection.
 *
 * On Postgres the lines arrive through COPY TO STDOUT as raw bytes, passed on without being
 * decoded (no string or object per row: the API's memory stays flat under many downloads,
 * docs/benchmarks.md "Audit bundle downloads"); on the embedded database, through a cursor,
 * `pageRows` lines at a time.
 */
export async function* bundleFileText(
  db: Kysely<Schema>,
  head: GenerationHead,
  name: string,
  pageRows = BUNDLE_PAGE_ROWS,
): AsyncGenerator<{ bytes: Buffer; rows: number }> {
  const file = FILES.find((f) => f.name === name);
  if (!file) throw new TallyError(`a bundle has no file ${name}`);
  const query = linesQuery(file, head).compile(db);
  const pool = pgPoolOf(db);
  if (!pool) {
    for await (const page of pagesOf(db, query, pageRows)) {
      let text = '';
      for (const row of page) text += `${row.line}\n`;
      yield { bytes: Buffer.from(text, 'utf8'), rows: page.length };
    }
    return;
  }
  const client = await pool.connect();
  let finished = false;
  try {
    // COPY runs in its own implicit transaction: one snapshot for the whole file.
    const copy = client.query(copyTo(`copy (${query.sql}) to stdout ${COPY_OPTIONS}`));
    for await (const chunk of copy as AsyncIterable<Buffer>) {
      let rows = 0;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++;
      yield { bytes: chunk, rows };
    }
    finished = true;
  } finally {
    // A COPY left midway (the client went away) leaves the connection unusable: drop it.
    client.release(!finished);
  }
}

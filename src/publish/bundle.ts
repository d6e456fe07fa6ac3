import { sql, type Kysely } from 'kysely';
import { GEN_LISTING_COLUMNS, type Schema } from '../db/schema.ts';
import { TallyError } from '../lib/errors.ts';

/**
 * A generation as plain rows: what `export` writes and what `audit` compares. Every value is
 * JSON-ready (bigint for integers that may exceed 2^53, ISO text for times).
 */
export interface GenerationRows {
  generation: {
    generation: number;
    method_version: string;
    generated_at: string;
    as_of: { block_number: bigint; block_hash: string; timestamp: bigint };
    window: { start: bigint; end: bigint; seconds: bigint; market_from: bigint };
    constants: unknown;
    sources: unknown;
    digests: { catalog_sha256: string; evidence_sha256: string | null };
    catalog: {
      snapshot_id: bigint;
      source: string;
      fetched_at: string;
      items: number;
      listings: number;
      rejected: number;
    };
  };
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

/** Reads every row of one generation (any status), in a stable order. */
export async function readGenerationRows(db: Kysely<Schema>, generation: number): Promise<GenerationRows> {
  const g = await db.selectFrom('generations').selectAll().where('generation', '=', generation).executeTakeFirst();
  if (!g) throw new TallyError(`generation ${generation} does not exist (or was pruned)`);
  const snapshot = await db
    .selectFrom('catalog_snapshots')
    .selectAll()
    .where('snapshot_id', '=', g.catalog_snapshot_id)
    .executeTakeFirstOrThrow();
  const items = await db
    .selectFrom('catalog_items')
    .select('item_json')
    .where('snapshot_id', '=', g.catalog_snapshot_id)
    .orderBy('item_index')
    .execute();
  const rejects = await db
    .selectFrom('catalog_rejects')
    .select(['item_index', 'accept_index', 'reason', 'detail'])
    .where('snapshot_id', '=', g.catalog_snapshot_id)
    .orderBy('reject_index')
    .execute();
  const listings = await db
    .selectFrom('gen_listings')
    .select(GEN_LISTING_COLUMNS)
    .where('generation', '=', generation)
    .orderBy(sql`listing_id collate "C"`)
    .execute();
  const sellers = await db
    .selectFrom('gen_sellers')
    .selectAll()
    .where('generation', '=', generation)
    .orderBy(sql`seller_address collate "C"`)
    .execute();
  const payments = await db
    .selectFrom('generation_payments')
    .select([
      'tx_hash',
      'log_index',
      'block_number',
      'block_hash',
      'block_timestamp',
      'payer',
      'seller_address',
      'value',
      'in_window',
    ])
    .where('generation', '=', generation)
    .orderBy('block_number')
    .orderBy('log_index')
    .orderBy(sql`tx_hash collate "C"`)
    .execute();
  const marketDaily = await db
    .selectFrom('gen_market_daily')
    .selectAll()
    .where('generation', '=', generation)
    .orderBy('day')
    .execute();
  const sellerDaily = await db
    .selectFrom('gen_seller_daily')
    .select(['seller_address', 'day', 'payments', 'revenue_micro', 'payers'])
    .where('generation', '=', generation)
    .orderBy(sql`seller_address collate "C"`)
    .orderBy('day')
    .execute();
  const periods = await db
    .selectFrom('gen_periods')
    .select(['period_start', 'payments', 'sha256'])
    .where('generation', '=', generation)
    .orderBy('period_start')
    .execute();
  const sellerPeriods = await db
    .selectFrom('gen_seller_periods')
    .select(['seller_address', 'period_start', 'payments', 'sha256'])
    .where('generation', '=', generation)
    .orderBy(sql`seller_address collate "C"`)
    .orderBy('period_start')
    .execute();
  const drop = <T extends { generation: number }>({ generation: _g, ...rest }: T) => rest;
  return {
    generation: {
      generation: g.generation,
      method_version: g.method_version,
      generated_at: g.generated_at.toISOString(),
      as_of: { block_number: g.as_of_block, block_hash: g.as_of_block_hash, timestamp: g.as_of_ts },
      window: { start: g.window_start_ts, end: g.as_of_ts, seconds: g.window_seconds, market_from: g.market_from_ts },
      constants: g.constants,
      sources: g.sources,
      digests: { catalog_sha256: g.catalog_sha256, evidence_sha256: g.evidence_sha256 },
      catalog: {
        snapshot_id: g.catalog_snapshot_id,
        source: snapshot.source,
        fetched_at: snapshot.fetched_at.toISOString(),
        items: snapshot.items_count,
        listings: snapshot.listings_count,
        rejected: snapshot.rejected_count,
      },
    },
    catalogItemLines: items.map((i) => i.item_json),
    rejects,
    listings: listings.map(drop),
    sellers: sellers.map(drop),
    payments,
    marketDaily: marketDaily.map(drop),
    sellerDaily,
    periods,
    sellerPeriods,
  };
}

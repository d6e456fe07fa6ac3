import type { ColumnType, Generated } from 'kysely';
import type { Int8, Micro, Timestamp } from './columns.ts';

/**
 * The generations and what each publishes: sellers, listings, daily series, period digests,
 * operator groups, the market summary, the audit bundle's files and the payments view.
 * Part of the row types of src/db/schema.ts (the Schema interface assembles them).
 */

export interface GenerationsTable {
  generation: number;
  status: 'building' | 'ready' | 'published';
  run_seq: Int8;
  method_version: string;
  generated_at: Timestamp;
  published_at: Timestamp | null;
  as_of_block: Int8;
  as_of_block_hash: string;
  as_of_ts: Int8;
  window_seconds: Int8;
  window_start_ts: Int8;
  market_from_ts: Int8;
  catalog_snapshot_id: Int8;
  catalog_sha256: string;
  evidence_sha256: string | null;
  constants: ColumnType<unknown, string, string>;
  sources: ColumnType<unknown, string, string>;
  /** Its gen_listings rows are derived from the catalog snapshot and gen_sellers (migration 0018). */
  listings_derived: Generated<boolean>;
}

export interface PublishedPointerTable {
  singleton: Generated<boolean>;
  generation: number;
}

export interface GenSellersTable {
  generation: number;
  seller_address: string;
  listing_count: number;
  payments_30d: number;
  payers_30d: number;
  verified_revenue_30d_micro: Micro;
  median_payment_30d_micro: Micro | null;
  evidence_state: 'verified' | 'insufficient' | 'not_observed';
  tier: 'verified' | 'listed_only';
  farm_flag: number;
  farm_reasons: string | null;
  rank: number | null;
  categories: string[];
  evidence_sha256: string;
  first_payment_ts: Int8 | null;
  last_payment_ts: Int8 | null;
  first_block: Int8 | null;
  last_block: Int8 | null;
  // Method 3.0.0 (migration 0029); null on 1.x and 2.x generations. Per-class arrays are in class
  // order: [eip3009, permit2_exact, permit2_upto, batch_settlement].
  external_revenue_30d_micro: Micro | null;
  external_payments_30d: number | null;
  external_payers_30d: number | null;
  class_payments_30d: number[] | null;
  class_revenue_30d_micro: ColumnType<string[], string[], string[]> | null;
  internal_seller_funded_payments_30d: number | null;
  internal_seller_funded_revenue_30d_micro: Micro | null;
  internal_seller_funded_payers_30d: number | null;
  internal_same_operator_payments_30d: number | null;
  internal_same_operator_revenue_30d_micro: Micro | null;
  internal_same_operator_payers_30d: number | null;
  // The seller's number in address order within its generation, the directory's tie-break
  // (migration 0043; not published): the snapshot's seller number from method step 2, or
  // gen_sellers_set_numbers(generation) after rows inserted by hand (with any number, UNNUMBERED).
  seller_no: number;
}

/** A seller number to insert gen_sellers rows with before gen_sellers_set_numbers numbers them. */
export const UNNUMBERED = { seller_no: 0 } as const;

export interface GenListingsTable {
  generation: number;
  listing_id: string;
  seller_address: string | null;
  verifiability: 'base_usdc' | 'other_rail';
  resource_url: string;
  title: string | null;
  network: string;
  description: string | null;
  category: string;
  category_source: 'auto' | 'seller_asserted';
  tier: 'verified' | 'listed_only';
  evidence_state: 'verified' | 'insufficient' | 'not_observed';
  verified_revenue_30d_micro: Micro | null;
  median_payment_30d_micro: Micro | null;
  farm_flag: number | null;
  farm_reasons: string | null;
  sibling_listings: number;
}

/** The columns of a gen_listings row, in the order of the contract's listing rows. */
export const GEN_LISTING_COLUMNS = [
  'generation',
  'listing_id',
  'seller_address',
  'verifiability',
  'resource_url',
  'title',
  'network',
  'description',
  'category',
  'category_source',
  'tier',
  'evidence_state',
  'verified_revenue_30d_micro',
  'median_payment_30d_micro',
  'farm_flag',
  'farm_reasons',
  'sibling_listings',
] as const satisfies readonly (keyof GenListingsTable)[];

export interface GenMarketDailyTable {
  generation: number;
  day: ColumnType<string, string, string>;
  payments: number;
  volume_micro: Micro;
  payers: number;
  sellers_paid: number;
  median_payment_micro: Micro | null;
  tracked_sellers: number;
  tracked_listings: number;
  /** Method 3.0.0 (migration 0029); null on 1.x and 2.x generations. */
  external_volume_micro: Micro | null;
}

/** One seller's daily series (sql/migrations/0005): a row per UTC day with a payment in the window. */
export interface GenSellerDailyTable {
  generation: number;
  seller_address: string;
  day: ColumnType<string, string, string>;
  payments: number;
  revenue_micro: Micro;
  payers: number;
}

/** The edge periods of a 2.0.0 generation (sql/migrations/0006); gen_edge_seller_periods has a seller_address too. */
export interface GenEdgePeriodsTable {
  generation: number;
  period_start: bigint;
  payments: number;
  sha256: string;
}

/** A method 2.0.0 period digest of a generation (the view of sql/migrations/0007): all sellers' payments of one period. */
export interface GenPeriodsTable {
  generation: number;
  period_start: bigint;
  payments: number;
  sha256: string;
}

/** A method 2.0.0 period digest of one seller (the view of sql/migrations/0007). */
export interface GenSellerPeriodsTable {
  generation: number;
  seller_address: string;
  period_start: bigint;
  payments: number;
  sha256: string;
}

/**
 * The daily series shared between generations (sql/migrations/0016): serves gen_from <= g < gen_to.
 * Keyed by address id since sql/migrations/0033; the view gen_seller_daily gives the text.
 */
export interface SellerDailyRowsTable {
  seller_id: number;
  day: ColumnType<string, string, string>;
  payments: number;
  revenue_micro: Micro;
  payers: number;
  gen_from: number;
  gen_to: number | null;
}

/** Which optional outputs a generation has (sql/migrations/0038): `operator_groups`, `market_summary`. */
export interface GenOutputsTable {
  generation: number;
  output: string;
}

/** An operator group of a generation (sql/migrations/0038, sql/method/02b_operator_groups.sql). */
export interface GenOperatorGroupsTable {
  generation: number;
  group_id: string;
  seller_count: number;
  seller_addresses: string[];
  hosts: string[];
  payments_30d: number;
  payers_30d: number;
  verified_revenue_30d_micro: Micro;
  /** Method 3.x; null on 1.x and 2.x generations. */
  external_revenue_30d_micro: Micro | null;
}

/** A grouped seller's group (sql/migrations/0038); a seller in no group has no row. */
export interface GenOperatorMembersTable {
  generation: number;
  seller_address: string;
  group_id: string;
}

/** One period of the market summary (sql/migrations/0038, sql/method/04b_market_summary.sql). */
export interface GenMarketSummaryTable {
  generation: number;
  /** `last_7d`, `prev_7d` or `last_30d`. */
  period: string;
  first_day: ColumnType<string | null, string | null, string | null>;
  last_day: ColumnType<string | null, string | null, string | null>;
  days: number;
  payments: bigint | null;
  volume_micro: Micro | null;
  external_volume_micro: Micro | null;
  payers: number | null;
  sellers_paid: number | null;
  /** On the last_7d row: (last_7d - prev_7d) / prev_7d to 6 decimals (numeric text), else null. */
  change_payments: string | null;
  change_volume: string | null;
  change_external_volume: string | null;
  change_payers: string | null;
  change_sellers_paid: string | null;
}

/**
 * The NDJSON files of a generation's audit bundle as built once (sql/migrations/0024): what the
 * manifest lists for each, and its size. Derived data; absent until the first export or download.
 */
export interface BundleFilesTable {
  generation: number;
  name: string;
  sha256: string;
  rows: number;
  bytes: bigint;
}

/** The read-only view of verified payments per generation (sql/migrations/0002). */
export interface GenerationPaymentsView {
  generation: number;
  tx_hash: string;
  log_index: number;
  block_number: bigint;
  block_hash: string;
  block_timestamp: bigint;
  payer: string;
  seller_address: string;
  value: bigint;
  in_window: boolean;
  /** Method 3.0.0's evidence class; null on 1.x and 2.x generations (migration 0029). */
  class: string | null;
  /** `seller_funded`, `same_operator` or null; always null on 1.x and 2.x generations. */
  internal_reason: string | null;
}

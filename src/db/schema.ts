import type { ColumnType, Generated } from 'kysely';

/**
 * Row types of the tables in sql/migrations. Database values arrive as: int8 and integral
 * numeric -> bigint, int4/int2 -> number, timestamptz -> Date, jsonb -> parsed JSON, text[] -> string[].
 */
type Int8 = ColumnType<bigint, bigint | number | string, bigint | number | string>;
/** A nullable int8 that an insert may leave out (null). */
type NullInt8 = ColumnType<bigint | null, bigint | number | string | null | undefined, bigint | number | string | null>;
type Micro = ColumnType<bigint, bigint | string, bigint | string>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface CatalogSnapshotsTable {
  snapshot_id: Generated<bigint>;
  source: string;
  fetched_at: Timestamp;
  sha256: string;
  items_count: number;
  listings_count: number;
  rejected_count: number;
}

export interface CatalogItemsTable {
  snapshot_id: Int8;
  item_index: number;
  item_json: string;
}

export interface CatalogListingsTable {
  snapshot_id: Int8;
  listing_id: string;
  item_index: number;
  accept_index: number;
  resource_url: string;
  network: string;
  canonical_network: string;
  pay_to: string;
  asset: string;
  verifiability: 'base_usdc' | 'other_rail';
  seller_address: string | null;
  title: string | null;
  description: string | null;
  category: string;
  category_source: 'auto' | 'seller_asserted';
  /** The search document (sql/migrations/0017), derived by the database from title, description and resource_url. */
  search_doc: ColumnType<string, never, never>;
}

export interface CatalogRejectsTable {
  snapshot_id: Int8;
  reject_index: number;
  item_index: number;
  accept_index: number | null;
  reason: string;
  detail: string;
}

type Bytes = ColumnType<Uint8Array, Uint8Array, Uint8Array>;

/** One address of the facts, once (migration 0025); ids are never reused. */
export interface AddressesTable {
  address_id: Generated<number>;
  /** 20 bytes. */
  address: Bytes;
}

/** One block version: a block as stored by one run, carrying visibility (migration 0025). */
export interface BlocksTable {
  /** block_number * 2^20 + version. */
  block_id: Int8;
  block_number: Int8;
  block_timestamp: Int8;
  added_seq: Int8;
  removed_seq: Int8 | null;
  /** 32 bytes. */
  block_hash: Bytes;
}

/** One USDC Transfer paying a seller, its authorization folded in (migration 0025). */
export interface TransfersTable {
  /** Micro-USDC, below 2^63. */
  value: Int8;
  block_id: Int8;
  log_index: number;
  from_id: number;
  to_id: number;
  pair_log_index: number | null;
  /** 0 unpaired, 1 eip3009 (an AuthorizationUsed by `from`, rule 3), 2 permit2_exact, 3 permit2_upto (migration 0029). */
  class: number;
  tx_hash: Bytes;
}

/** One batch-settlement channel's configuration, once per channel (migration 0029). */
export interface BatchChannelsTable {
  withdraw_delay: Int8;
  channel_id: Generated<number>;
  payer_id: number;
  payer_authorizer_id: number;
  receiver_id: number;
  receiver_authorizer_id: number;
  token_id: number;
  /** The 32-byte channelId. */
  channel: Bytes;
  salt: Bytes;
}

/** Every ChannelCreated log of the batch contract since its deployment, own visibility (migration 0029). */
export interface BatchChannelCreatedTable {
  block_number: Int8;
  added_seq: Int8;
  removed_seq: Int8 | null;
  log_index: number;
  channel_id: number;
  tx_hash: Bytes;
  block_hash: Bytes;
}

/** One Claimed log (claimAmount > 0) of a USDC channel: a batch_settlement payment (migration 0029). */
export interface BatchClaimsTable {
  value: Int8;
  block_id: Int8;
  log_index: number;
  channel_id: number;
  /** The channel config's payer. */
  from_id: number;
  /** The channel config's receiver. */
  to_id: number;
  tx_hash: Bytes;
}

/** One USDC Transfer from a seller, own block and visibility (migration 0029). */
export interface SellerOutgoingTable {
  value: Int8;
  block_number: Int8;
  block_timestamp: Int8;
  added_seq: Int8;
  removed_seq: Int8 | null;
  log_index: number;
  from_id: number;
  to_id: number;
  tx_hash: Bytes;
  block_hash: Bytes;
}

/** The view of every stored transfer in the old layout's text forms (migration 0026). */
export interface TransferFactsView {
  tx_hash: string;
  log_index: number;
  block_hash: string;
  block_number: bigint;
  block_timestamp: bigint;
  from_address: string;
  to_address: string;
  value: bigint;
  added_seq: bigint;
  removed_seq: bigint | null;
  /** Rule 3: paired with an AuthorizationUsed by `from_address` (class 1). */
  authorized: boolean;
  block_id: bigint;
  from_id: number;
  to_id: number;
}

export interface SellerCoverageTable {
  seller_address: string;
  from_block: Int8;
  from_ts: Int8;
  to_block: Int8;
}

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

/** Search postings of a catalog snapshot (sql/migrations/0017): written by a trigger with catalog_listings. */
export interface CatalogListingWordsTable {
  snapshot_id: Int8;
  word: string;
  score: number;
  listing_id: string;
}

/** Postings per word and score of a catalog snapshot (sql/migrations/0019): kept by the same trigger. */
export interface CatalogWordBandsTable {
  snapshot_id: Int8;
  word: string;
  score: number;
  listings: number;
}

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

/** Derived per-hour partials of closed hours (sql/migrations/0007), reused by incremental runs. */
export interface PartStateTable {
  id: ColumnType<boolean, boolean | undefined, boolean>;
  checked_seq: bigint;
  period_seconds: bigint;
  lo: bigint;
  hi: bigint;
  sellers_key: string;
  /** `eip3009` (1.x, 2.x) or `all_classes` (3.0.0): the payments the partials hold (migration 0031). */
  payment_set: ColumnType<string, string | undefined, string>;
  /** What part_edge_lines is exact for (migration 0044); null: nothing kept. */
  edge_window_start_ts: NullInt8;
  edge_as_of_block: NullInt8;
  edge_as_of_ts: NullInt8;
}
/** The evidence lines of the payments in the edge periods' reach (sql/migrations/0044; method 2.0.0 work state). */
export interface PartEdgeLinesTable {
  seller_id: number;
  block_timestamp: Int8;
  evidence_line: string;
}
/** Method 2.0.0 work state, keyed by address id (sql/migrations/0028). */
export interface PartSellersTable {
  seller_id: number;
}
/**
 * Versioned rows (serve gen_from <= g < gen_to), keyed by address id with the sha256 as its 32
 * bytes since sql/migrations/0033; the views gen_seller_periods and gen_periods give the text.
 */
export interface PartSellerHoursTable {
  seller_id: number;
  hour_start: bigint;
  payments: number;
  sha256: Bytes;
  gen_from: number;
  gen_to: number | null;
}
export interface PartHoursTable {
  hour_start: bigint;
  payments: number;
  sha256: Bytes;
  gen_from: number;
  gen_to: number | null;
}

/** The x402 contracts that are never a seller under method 3.x (migration 0035): one row each. */
export interface X402InfrastructureTable {
  address: string;
  contract: string;
}

/**
 * The window's accumulators (sql/migrations/0016): derived data kept by sql/method/01a_window.sql.
 * Sellers and payers are `addresses.address_id`s (sql/migrations/0028).
 */
export interface AccStateTable {
  id: ColumnType<boolean, boolean | undefined, boolean>;
  checked_seq: bigint;
  window_start_ts: bigint;
  as_of_ts: bigint;
  as_of_block: bigint;
  /** `eip3009` (1.x, 2.x) or `all_classes` (3.0.0): the payments the accumulators hold (migration 0031). */
  payment_set: ColumnType<string, string | undefined, string>;
}
export interface AccSellersTable {
  seller_id: number;
  payments: bigint;
  revenue: Micro;
  payers: bigint;
  top_sum: Micro;
  median: Micro | null;
  first_ts: bigint | null;
  last_ts: bigint | null;
  first_block: bigint | null;
  last_block: bigint | null;
  /** Method 3.0.0's numbers by class and reason (step 1c, migration 0042); null until it fills them, and under 1.x/2.x. */
  class_payments: number[] | null;
  class_revenue: ColumnType<string[], string[], string[]> | null;
  external_payments: number | null;
  external_revenue: Micro | null;
  external_payers: number | null;
  seller_funded_payments: number | null;
  seller_funded_revenue: Micro | null;
  seller_funded_payers: number | null;
  same_operator_payments: number | null;
  same_operator_revenue: Micro | null;
  same_operator_payers: number | null;
  /** The lower median's state (migration 0046): the histogram's count and its count below the median; null until a steady run fills them. */
  request_payments: bigint | null;
  below_median: bigint | null;
}
export interface AccValuesTable {
  seller_id: number;
  value: Micro;
  n: bigint;
}
export interface AccPayersTable {
  seller_id: number;
  payer_id: number;
  n: bigint;
  total: Micro;
}
/** Per seller, UTC day number (unix seconds / 86,400) and payer: the day's payments (sql/migrations/0033). */
export interface AccDayPayersTable {
  seller_id: number;
  day: number;
  payer_id: number;
  n: number;
}
export interface AccSellerDaysTable {
  seller_id: number;
  day_start: Int8;
  payments: number;
  revenue: Micro;
  payers: number;
}
export interface AccMarketDaysTable {
  day_start: Int8;
  payments: number;
  volume_micro: Micro;
  payers: number;
  sellers_paid: number;
  median_micro: Micro | null;
  /** Method 3.0.0: the day's external volume; null under 1.x and 2.x (migration 0031). */
  external_volume: Micro | null;
  /** The build of the day's payer and seller sets (migration 0038); null until built. */
  set_id: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  /** The day's distinct payers, address ids ascending (migration 0045); null until built. */
  payer_ids: ColumnType<number[] | null, number[] | null | undefined, number[] | null>;
  /** The day's distinct sellers paid, address ids ascending (migration 0045); null until built. */
  seller_ids: ColumnType<number[] | null, number[] | null | undefined, number[] | null>;
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
/** The market summary's periods of the last run, with the days they covered (sql/migrations/0038). */
export interface AccMarketSummaryTable {
  period: string;
  first_day_start: bigint | null;
  days: number;
  set_max: bigint | null;
  payments: bigint | null;
  volume_micro: Micro | null;
  external_volume_micro: Micro | null;
  payers: number | null;
  sellers_paid: number | null;
}
export interface AccMarketStateTable {
  id: ColumnType<boolean, boolean | undefined, boolean>;
  checked_seq: bigint;
  sellers_key: string;
  payment_set: ColumnType<string, string | undefined, string>;
}
/**
 * Method 3.0.0's work state (sql/migrations/0031, kept by sql/method/3.0.0/01c_reasons.sql): per
 * seller, class (1-4) and internal reason (0 external, 1 seller_funded, 2 same_operator).
 */
export interface AccSellerClassesTable {
  seller_id: number;
  class: number;
  reason: number;
  n: bigint;
  total: Micro;
}
export interface AccReasonPayersTable {
  seller_id: number;
  /** 1 seller_funded or 2 same_operator: external payers are counted from acc_payers (migration 0041). */
  reason: number;
  payer_id: number;
  n: number;
}
export interface AccReasonSellersTable {
  seller_id: number;
  reason: number;
  payers: bigint;
}
/** The same_operator pairs (address ids) the reasons of acc_seller_classes were decided with. */
export interface AccOperatorPairsTable {
  seller_id: number;
  payer_id: number;
}
/** Method 2.0.0: each seller's composed evidence digest as of part_state (sql/migrations/0016; by address id, 0028). */
export interface PartSellerDigestsTable {
  seller_id: number;
  digest: string;
  edge: boolean;
}
/** A seller's live closed-hour lines of one UTC day, in hour order (sql/migrations/0020, by address id 0028, by day 0044; method 2.0.0). */
export interface PartSellerLinesTable {
  seller_id: number;
  day_start: Int8;
  lines: string;
}
/** The sellers of a catalog snapshot as the method numbers them (sql/migrations/0022; derived). */
export interface CatalogSnapshotSellersTable {
  snapshot_id: bigint;
  seller_id: number;
  seller_address: string;
  listing_count: number;
  categories: string[];
  /** method 3.0.0's same_operator pairs: the numbers of the sellers paying this one as its operator (migration 0034); null until computed */
  same_operator_payers: number[] | null;
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

export interface Schema {
  catalog_snapshots: CatalogSnapshotsTable;
  catalog_items: CatalogItemsTable;
  catalog_listings: CatalogListingsTable;
  catalog_rejects: CatalogRejectsTable;
  addresses: AddressesTable;
  blocks: BlocksTable;
  transfers: TransfersTable;
  batch_channels: BatchChannelsTable;
  batch_channel_created: BatchChannelCreatedTable;
  batch_claims: BatchClaimsTable;
  seller_outgoing: SellerOutgoingTable;
  transfer_facts: TransferFactsView;
  seller_coverage: SellerCoverageTable;
  generations: GenerationsTable;
  published_pointer: PublishedPointerTable;
  gen_sellers: GenSellersTable;
  gen_listings: GenListingsTable;
  catalog_listing_words: CatalogListingWordsTable;
  catalog_word_bands: CatalogWordBandsTable;
  gen_market_daily: GenMarketDailyTable;
  gen_seller_daily: GenSellerDailyTable;
  gen_edge_periods: GenEdgePeriodsTable;
  gen_edge_seller_periods: GenEdgePeriodsTable & { seller_address: string };
  gen_periods: GenPeriodsTable;
  gen_seller_periods: GenSellerPeriodsTable;
  part_state: PartStateTable;
  part_sellers: PartSellersTable;
  part_seller_hours: PartSellerHoursTable;
  part_hours: PartHoursTable;
  generation_payments: GenerationPaymentsView;
  acc_state: AccStateTable;
  acc_sellers: AccSellersTable;
  acc_values: AccValuesTable;
  acc_payers: AccPayersTable;
  acc_day_payers: AccDayPayersTable;
  acc_seller_days: AccSellerDaysTable;
  acc_market_days: AccMarketDaysTable;
  acc_market_state: AccMarketStateTable;
  acc_seller_classes: AccSellerClassesTable;
  acc_reason_payers: AccReasonPayersTable;
  acc_reason_sellers: AccReasonSellersTable;
  acc_operator_pairs: AccOperatorPairsTable;
  seller_daily_rows: SellerDailyRowsTable;
  gen_seller_daily_fixed: GenSellerDailyTable;
  gen_listings_fixed: GenListingsTable;
  part_seller_digests: PartSellerDigestsTable;
  part_seller_lines: PartSellerLinesTable;
  part_edge_lines: PartEdgeLinesTable;
  catalog_snapshot_sellers: CatalogSnapshotSellersTable;
  bundle_files: BundleFilesTable;
  x402_infrastructure: X402InfrastructureTable;
  gen_outputs: GenOutputsTable;
  gen_operator_groups: GenOperatorGroupsTable;
  gen_operator_members: GenOperatorMembersTable;
  gen_market_summary: GenMarketSummaryTable;
  acc_market_summary: AccMarketSummaryTable;
}

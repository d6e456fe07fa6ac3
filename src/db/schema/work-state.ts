import type { ColumnType } from 'kysely';
import type { Int8, NullInt8, Micro, Bytes } from './columns.ts';

/**
 * The method's derived work state, kept between runs and rebuilt from the facts when dropped:
 * the hour partials (part_*) and the window's accumulators (acc_*).
 * Part of the row types of src/db/schema.ts (the Schema interface assembles them).
 */

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
  /** The day's payers, ascending, each once per payment (migration 0050). */
  payer_ids: number[];
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

export interface AccMarketStateTable {
  id: ColumnType<boolean, boolean | undefined, boolean>;
  checked_seq: bigint;
  sellers_key: string;
  payment_set: ColumnType<string, string | undefined, string>;
  /** The first day acc_market_open is exact for (migration 0048); null: none. */
  open_from_ts: NullInt8;
}

/**
 * One (open UTC day, value, per request or not) of the market's days not yet published, with its
 * payments and external ones (sql/migrations/0048, kept by sql/method/04_market_daily.sql).
 */
export interface AccMarketOpenTable {
  day_start: Int8;
  value: Micro;
  per_request: boolean;
  n: Int8;
  n_external: Int8;
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

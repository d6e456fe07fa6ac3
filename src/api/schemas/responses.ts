import { z } from 'zod';
import {
  Address,
  ChainInt,
  components,
  Count,
  EvidenceClass,
  Hex64,
  InternalReason,
  Iso,
  Micro,
  NextCursor,
  Snapshot,
  TxHash,
  Window,
} from './common.ts';
import { DisplayName, ListingRow } from './directory.ts';

/**
 * The response bodies of SPEC section 4, field for field. Objects are strict: no extra field.
 * The list bodies (listings, rankings, the seller directory) are in ./directory.ts, the operator
 * groups and the market summary in ./groups.ts.
 */

/** The logs of one evidence class, by contract and event signature (method 3.0.0). */
export const ClassSource = z.strictObject({
  class: EvidenceClass,
  contracts: z.array(Address),
  events: z.array(z.string()),
});
components.add(ClassSource, { id: 'ClassSource' });

/** Methods 1.x and 2.x: EIP-3009 settlements only. */
const SourceEip3009 = z.strictObject({
  chain_id: z.int().positive(),
  contract: Address,
  event: z.literal('Transfer+AuthorizationUsed'),
});
/** Method 3.0.0: every class, each with its contracts and events. */
const SourceAllClasses = z.strictObject({
  chain_id: z.int().positive(),
  contract: Address,
  event: z.literal('x402_settlement'),
  classes: z.array(ClassSource),
});

export const Provenance = z.strictObject({
  rule: z.string().meta({ description: 'stable rule id of the method, e.g. revenue.sum_verified_payments' }),
  method_version: z.string(),
  source: z.union([SourceEip3009, SourceAllClasses]),
  window: Window,
  as_of_block: ChainInt,
  inputs: z.strictObject({
    payments: Count.meta({ description: 'verified payments in the window' }),
    first_block: ChainInt.nullable(),
    last_block: ChainInt.nullable(),
  }),
  evidence_sha256: Hex64.meta({ description: "sha256 of the seller's evidence lines (docs/METHOD.md)" }),
  evidence_periods: z
    .string()
    .optional()
    .meta({ description: 'method 2.0.0: the path of the period digests evidence_sha256 is composed of' }),
});
components.add(Provenance, { id: 'Provenance' });

const metric = <T extends z.ZodType>(value: T) => z.strictObject({ value, provenance: Provenance });

/** One class's share of a seller's payments (method 3.0.0). */
export const ClassFigures = z.strictObject({ payments: Count, revenue_micro: Micro });
components.add(ClassFigures, { id: 'ClassFigures' });
/** The seller's payments of one internal reason (method 3.0.0). */
export const InternalFigures = z.strictObject({ payments: Count, revenue_micro: Micro, payers: Count });
components.add(InternalFigures, { id: 'InternalFigures' });

export const SellerProfile = z.strictObject({
  seller_address: Address,
  slug: Address,
  display_name: DisplayName,
  ...Snapshot,
  tier: z.enum(['verified', 'listed_only']),
  evidence_state: z.enum(['verified', 'insufficient', 'not_observed']),
  rank: z.int().positive().nullable(),
  listing_count: Count,
  farm_flag: z.literal([0, 1]),
  farm_reasons: z.string().nullable(),
  metrics: z.strictObject({
    verified_revenue_30d_micro: metric(Micro),
    median_payment_30d_micro: metric(Micro.nullable()),
    payments_30d: metric(Count),
    payers_30d: metric(Count),
    // Method 3.0.0: null on 1.x and 2.x generations (no such rule there).
    external_revenue_30d_micro: metric(Micro).nullable(),
    external_payments_30d: metric(Count).nullable(),
    external_payers_30d: metric(Count).nullable(),
  }),
  by_class: z
    .strictObject({
      eip3009: ClassFigures,
      permit2_exact: ClassFigures,
      permit2_upto: ClassFigures,
      batch_settlement: ClassFigures,
    })
    .nullable(),
  internal: z.strictObject({ seller_funded: InternalFigures, same_operator: InternalFigures }).nullable(),
  operator_group: z
    .string()
    .regex(/^op_[0-9a-f]{40}$/)
    .nullable()
    .meta({
      description:
        "the seller's operator group (/api/v1/operators/{id}); null when it is in none, or the generation was computed before groups existed",
    }),
  first_payment_at: Iso.nullable(),
  last_payment_at: Iso.nullable(),
  listings: z.array(ListingRow),
});
components.add(SellerProfile, { id: 'SellerProfile' });

export const PaymentRow = z.strictObject({
  tx_hash: TxHash,
  log_index: Count,
  block_number: ChainInt,
  block_timestamp: Iso,
  payer: Address,
  value_micro: Micro,
  class: EvidenceClass.nullable(),
  internal_reason: InternalReason.nullable(),
});
components.add(PaymentRow, { id: 'PaymentRow' });

export const PaymentsPage = z.strictObject({
  count: Count,
  next_cursor: NextCursor,
  ...Snapshot,
  seller_address: Address,
  slug: Address,
  window: Window,
  payments: z.array(PaymentRow),
});
components.add(PaymentsPage, { id: 'PaymentsPage' });

export const PeriodDigest = z.strictObject({
  period_start: Iso, // its meaning: schemas/descriptions.ts
  period_start_unix: z
    .int()
    .nonnegative()
    .meta({ description: 'the same start in unix seconds: the first field of the digest line' }),
  payments: Count,
  sha256: Hex64.meta({
    description: "sha256 of the period's evidence lines tx_hash:log_index:from:to:value\\n in byte order",
  }),
});
components.add(PeriodDigest, { id: 'PeriodDigest' });

export const SellerPeriods = z.strictObject({
  ...Snapshot,
  seller_address: Address,
  slug: Address,
  window: Window,
  digest_period_seconds: z
    .int()
    .positive()
    .nullable()
    .meta({ description: 'null for a method 1.0.0 generation (no periods)' }),
  evidence_sha256: Hex64.meta({
    description: 'sha256 of one line period_start_unix:payments:sha256\\n per period below, in order',
  }),
  periods: z.array(PeriodDigest),
});
components.add(SellerPeriods, { id: 'SellerPeriods' });

export const MarketDay = z.strictObject({
  day: z.iso.date(),
  payments: Count,
  volume_micro: Micro,
  payers: Count,
  sellers_paid: Count,
  median_payment_micro: Micro.nullable(),
  tracked_sellers: Count,
  tracked_listings: Count,
  external_volume_micro: Micro.nullable(),
});
components.add(MarketDay, { id: 'MarketDay' });

export const MarketDaily = z.strictObject({ ...Snapshot, days: z.array(MarketDay) });
components.add(MarketDaily, { id: 'MarketDaily' });

export const SellerDay = z.strictObject({
  day: z.iso.date().meta({
    description: 'a UTC day of the window (the first and last are partial: only their in-window hours count)',
  }),
  payments: Count.meta({ description: "the seller's verified payments of the window on that day" }),
  revenue_micro: Micro.meta({ description: 'their sum, micro-USDC' }),
  payers: Count.meta({ description: 'distinct payer addresses among them' }),
});
components.add(SellerDay, { id: 'SellerDay' });

export const SellerDaily = z.strictObject({
  ...Snapshot,
  seller_address: Address,
  days: z
    .array(SellerDay)
    .meta({ description: 'one row per UTC day of the window with at least one verified payment, oldest first' }),
});
components.add(SellerDaily, { id: 'SellerDaily' });

export const Constants = z.strictObject({
  chain_id: z.int().positive(),
  usdc_contract: Address,
  window_seconds: z.int().positive(),
  evidence_min_payments: z.int().positive(),
  evidence_min_payers: z.int().positive(),
  farm_listing_threshold: z.int().positive(),
  farm_top_payer_share: z.number().gt(0).lt(1),
  farm_top_payer_min_payments: z.int().positive(),
  /** Method 2.0.0: the length of a digest period in seconds (absent under 1.0.0). */
  digest_period_seconds: z.int().positive().optional(),
  /** Method 3.0.0 (absent under 1.x and 2.x). */
  funding_lookback_seconds: z.int().positive().optional(),
  farm_internal_share: z.number().gt(0).lt(1).optional(),
  batch_settlement_deployment_block: z.int().nonnegative().optional(),
});
components.add(Constants, { id: 'MethodConstants' });

// Sources are written by the publisher as /meta serves them; extra fields pass through.
const CatalogSource = z.looseObject({
  name: z.literal('catalog'),
  source: z.string(),
  fetched_at: Iso,
  items: Count,
  listings: Count,
  rejected: Count,
  sha256: Hex64,
  x402_contract_pay_to: Count.nullable().optional(),
});
const ChainSource = z.looseObject({
  name: z.literal('base_usdc'),
  chain_id: z.int().positive(),
  contract: Address,
  indexed_to_block: z.int().nonnegative(),
  indexed_to_timestamp: Iso,
  lag_seconds: z.number().nonnegative(),
});
// Method 3.0.0's streams (src/run/sources.ts): the logs each reads and what it covers.
const streamSource = <N extends string>(name: N, from: 'covers_from' | 'from_block') =>
  z.looseObject({
    name: z.literal(name),
    chain_id: z.int().positive(),
    contracts: z.array(Address),
    topic0: z.array(TxHash), // 0x + 64 hex digits, as a hash
    ...(from === 'covers_from' ? { covers_from: Iso } : { from_block: z.int().nonnegative() }),
    indexed_to_block: z.int().nonnegative(),
    indexed_to_timestamp: Iso,
    lag_seconds: z.number().nonnegative(),
  });
export const Source = z.discriminatedUnion('name', [
  CatalogSource,
  ChainSource,
  streamSource('x402_proxies', 'covers_from'),
  streamSource('x402_claims', 'covers_from'),
  streamSource('x402_channels', 'from_block'),
  streamSource('seller_outgoing', 'covers_from'),
]);
components.add(Source, { id: 'Source' });

/** One evidence class in /meta: the contracts and topic0 values whose logs define it (method 3.0.0). */
export const ClassLogs = z.strictObject({ class: EvidenceClass, contracts: z.array(Address), topic0: z.array(TxHash) });
components.add(ClassLogs, { id: 'ClassLogs' });

export const Meta = z.strictObject({
  api_version: z.literal('1.0.0'),
  method_version: z.string(),
  generation: z.int().positive(),
  generated_at: Iso,
  as_of: z.strictObject({ block_number: ChainInt, block_hash: TxHash, timestamp: Iso }),
  window: z.strictObject({ start: Iso, end: Iso, seconds: z.int().positive() }),
  cadence: z.strictObject({ interval_seconds: z.int().positive(), next_run_expected_at: Iso }),
  freshness: z.strictObject({
    age_seconds: Count.meta({ description: 'seconds since the latest generation was generated' }),
    as_of_lag_seconds: Count.meta({ description: "seconds between the latest generation's as-of block time and now" }),
    stale: z.boolean().meta({
      description:
        'true when the latest generation is older than twice the cadence, or its as-of block is older than twice the cadence plus ' +
        '3600 seconds (the time Base finality may take): the numbers are then not current, whatever their generation time says',
    }),
  }),
  chain: z
    .strictObject({
      chain_id: z
        .int()
        .positive()
        .meta({ description: "the chain id the generation's logs were read from (8453: Base)" }),
      public: z.boolean().meta({
        description:
          'true when the operator declares the chain read to be the public Base mainnet (PUBLIC_CHAIN) and chain_id is 8453; ' +
          'false on the demo and on any local chain (anvil answers 8453 too): then no explorer knows its transactions',
      }),
      explorer_url: z.string().nullable().meta({
        description:
          'the block explorer of the public chain (https://basescan.org), whose /tx/{tx_hash} shows a payment; null when public is false',
      }),
    })
    .meta({ description: 'the chain read, and whether a public explorer shows its transactions (extension of SPEC)' }),
  constants: Constants,
  classes: z.array(ClassLogs).nullable(),
  sources: z.array(Source),
  digests: z.strictObject({ catalog_sha256: Hex64, evidence_sha256: Hex64 }),
  generations: z.strictObject({ latest: z.int().positive(), retained: z.array(z.int().positive()) }),
});
components.add(Meta, { id: 'Meta' });

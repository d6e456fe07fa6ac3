/**
 * What each field of the API means (docs/METHOD.md), for the OpenAPI document: openapi.ts gives
 * every property of every component schema the description of its name here (a qualified
 * `Schema.field` entry wins over a bare `field` one), followed by the format the schema already
 * states. `test: every property has a meaning` (src/api/openapi.test.ts) keeps the list complete.
 */
export const FIELD_MEANINGS: Readonly<Record<string, string>> = {
  // snapshot
  generation: 'the number of the published generation this body was read from (immutable; pin it with ?generation=N)',
  method_version: 'the version of the method (docs/METHOD.md) the generation was computed with',
  count: 'rows in this page',
  next_cursor: 'pass as cursor to get the next page; null on the last page',
  note: 'how to read the numbers: seller-attributed metrics, catalog claims',
  window: 'the 30-day window of the generation: (start, end], end = the as-of block time',
  listings: 'listing rows, by listing_id',
  rankings: 'ranked sellers, by rank',
  payments: 'number of verified payments',
  days: 'one row per day, in the order the endpoint states',
  periods: 'one row per hour of the window with payments, oldest first',
  // listing row
  listing_id: 'stable id of the listing: sha256 of its canonical resource URL, network, payTo and asset',
  seller_address:
    'the address the listing is paid at (payTo), lowercase: the seller its numbers belong to; null off Base USDC',
  verifiability:
    "base_usdc: paid in USDC on Base, so its seller's revenue can be verified on chain; other_rail: another network or asset, never verified here",
  resource_url: 'the paid resource (a claim of the catalog)',
  title: "the listing's title (a claim of the catalog, not verified)",
  network: 'the network the listing asks to be paid on, as the catalog says it',
  description: "the listing's description (a claim of the catalog, not verified)",
  category: "the listing's category, one of 11 (docs/METHOD.md 1.6)",
  category_source:
    "auto: assigned by the method from the listing's words; seller_asserted: the category the seller claimed",
  tier: "verified: the seller's evidence_state is verified; listed_only: anything else (listed in the catalog, revenue not verified)",
  evidence_state:
    'verified: at least evidence_min_payments payments from at least evidence_min_payers distinct payers in the window; insufficient: ' +
    'some payments, but fewer (the numbers are real, too few to rank on); not_observed: no verified payment in the window',
  verified_revenue_30d_micro:
    "the sum of the seller's verified payments in the window, micro-USDC (1 USDC = 1,000,000); seller-attributed: every listing of the seller carries it",
  median_payment_30d_micro:
    "the lower median of the seller's verified payment values in the window, micro-USDC; null without payments",
  farm_flag:
    '1 when the seller is flagged as a possible farm (too many listings, or revenue mostly from one payer), else 0; null off Base USDC',
  farm_reasons:
    'why the seller is flagged, as a JSON array of rule texts (e.g. listing_count>50, top_payer_share>0.9); null when not flagged',
  sibling_listings: 'how many listings the same seller has in the catalog (this one included)',
  // ranking row and profile
  rank: 'place among verified sellers by revenue (then address); null when not ranked',
  slug: 'the seller address as used in URLs',
  payments_30d: "number of the seller's verified payments in the window",
  payers_30d: 'number of distinct payer addresses among them',
  listing_count: "the seller's listings in the catalog",
  categories: "the distinct categories of the seller's listings, sorted",
  metrics:
    'the verified metrics, each with the provenance to recompute it (method 3.0.0 adds the three external ones; null before)',
  value: "the metric's value",
  provenance: 'how to recompute the value: rule, method version, source, window, as-of block, inputs, evidence digest',
  first_payment_at: "time of the seller's first verified payment in the window; null without payments",
  last_payment_at: "time of the seller's last verified payment in the window; null without payments",
  // provenance
  rule: "stable id of the method's rule that gives the value",
  source: 'the chain, contract and event the payments are read from',
  'Provenance.source.chain_id': 'the chain id (8453: Base mainnet)',
  contract: 'the USDC contract read',
  event:
    'Transfer+AuthorizationUsed (methods 1.x and 2.x): a payment is a USDC Transfer in a transaction that also emitted ' +
    'AuthorizationUsed (EIP-3009); x402_settlement (method 3.0.0): a payment of any class listed in classes',
  'Provenance.source.classes':
    "method 3.0.0: every evidence class, with the contracts and events (by signature) whose logs define it; /api/v1/meta's classes gives their topic0",
  'ClassSource.class': 'the evidence class',
  'ClassSource.contracts': 'the contracts whose logs define the class, lowercase',
  'ClassSource.events': 'the events of those contracts that define the class, by signature',
  as_of_block: 'the block the generation is computed as of',
  inputs: 'the payments the value is computed from: how many, first and last block',
  first_block: 'block of the first payment counted; null without payments',
  last_block: 'block of the last payment counted; null without payments',
  evidence_sha256: 'digest of the payments counted (docs/METHOD.md 2.7 and 2.9): recompute it to check the evidence',
  evidence_periods: 'URL of the per-hour digests the evidence digest is composed of (method 2.x)',
  // payments
  tx_hash: 'the settlement transaction',
  log_index: 'position of the Transfer log in its block',
  block_number: 'block of the payment',
  block_timestamp: 'time of that block',
  payer: 'the address that paid (the authorizer of the transfer)',
  value_micro: 'amount paid, micro-USDC',
  'PaymentRow.class':
    'method 3.0.0: the evidence class of the payment (eip3009, permit2_exact, permit2_upto, batch_settlement); null before',
  'PaymentRow.internal_reason':
    'method 3.0.0: why the payment is internal (seller_funded: the seller paid the payer first, within funding_lookback_seconds; ' +
    "same_operator: the payer is a seller of a listing on a host of this seller's listings); null for an external payment, and on every older generation",
  // method 3.0.0 on ranking rows and profiles (null on 1.x and 2.x generations)
  external_revenue_30d_micro:
    "method 3.0.0: the part of the seller's verified revenue paid by external payments (neither seller_funded nor same_operator), micro-USDC; null before",
  external_payments_30d: 'method 3.0.0: the number of external payments in the window; null before',
  external_payers_30d: 'method 3.0.0: distinct payers among the external payments; null before',
  by_class:
    "method 3.0.0: the seller's payments and revenue per evidence class, all four classes, zeros included; null before",
  eip3009: 'EIP-3009 transferWithAuthorization settlements',
  permit2_exact: 'settlements through the canonical x402 Permit2 exact proxy',
  permit2_upto:
    'settlements through the canonical x402 Permit2 upto proxy (the value charged, which may be below the listed price)',
  batch_settlement: 'claims of batch-settlement payment channels: one claim counts as one payment',
  'ClassFigures.payments': "the seller's payments of the class in the window",
  'ClassFigures.revenue_micro': 'their sum, micro-USDC',
  internal:
    "method 3.0.0: the seller's internal payments per reason (a payment with both reasons counts under seller_funded); null before",
  seller_funded: 'payments from a payer the seller had paid in USDC before, within funding_lookback_seconds',
  same_operator: "payments from a payer that is a seller of a listing on a host of one of this seller's listings",
  'InternalFigures.payments': 'internal payments of the reason in the window',
  'InternalFigures.revenue_micro': 'their sum, micro-USDC',
  'InternalFigures.payers': 'distinct payers among them',
  // periods
  // ISO 8601 (PeriodDigest.period_start_unix is the same start in unix seconds)
  period_start: "start of the period (UTC); the window's first and last periods hold only in-window payments",
  sha256: 'sha256 digest',
  // market
  day: 'a UTC day (YYYY-MM-DD)',
  'MarketDay.payments': 'verified payments of the day, all tracked sellers',
  'MarketDay.payers': 'distinct payers of the day',
  volume_micro: "sum of the day's verified payments, micro-USDC",
  sellers_paid: 'tracked sellers with at least one payment that day',
  median_payment_micro:
    "lower median of the day's payment values, micro-USDC (method 3.0.0: per-request classes only); null without payments",
  external_volume_micro:
    "method 3.0.0: the part of the day's volume paid by external payments (neither seller_funded nor same_operator), micro-USDC; null before",
  tracked_sellers: 'sellers of the catalog whose payments are read (base_usdc listings)',
  tracked_listings: 'base_usdc listings of the catalog',
  revenue_micro: "sum of the seller's verified payments of that day, micro-USDC",
  payers: 'distinct payer addresses',
  // constants
  chain_id: 'the chain id read (8453: Base mainnet)',
  usdc_contract: 'the USDC contract read',
  window_seconds: 'length of the window, seconds (2592000: 30 days)',
  evidence_min_payments: 'fewest payments in the window for evidence_state verified',
  evidence_min_payers: 'fewest distinct payers in the window for evidence_state verified',
  farm_listing_threshold: 'a seller with more listings than this is flagged',
  farm_top_payer_share:
    'a seller whose top payer paid more than this share of its revenue is flagged (with enough payments)',
  farm_top_payer_min_payments: 'fewest payments before the top-payer rule applies',
  digest_period_seconds: 'length of a digest period (method 2.x): 3600, one hour',
  funding_lookback_seconds:
    'method 3.0.0: how long before a payment a USDC transfer from the seller to the payer makes it seller_funded (2592000: 30 days)',
  farm_internal_share:
    'method 3.0.0: a seller whose internal revenue is more than this share of its revenue is flagged (with enough payments)',
  batch_settlement_deployment_block:
    "method 3.0.0: the block the batch-settlement contract's ChannelCreated logs are read from (its deployment; configurable for local chains)",
  // sources
  name: 'which source: catalog, base_usdc, or a stream of method 3.0.0 (x402_proxies, x402_claims, x402_channels, seller_outgoing)',
  contracts: 'the contracts whose logs this stream reads (lowercase 0x hex)',
  topic0: 'the topic0 of the events this stream reads, selected with the contracts (never by event name)',
  from_block: "the stream is held from this block on: the batch contract's deployment block, or a block below it",
  covers_from:
    "the stream is held from this time on (the window's first UTC day, or funding_lookback_seconds before it)",
  items: 'items in the catalog read',
  x402_contract_pay_to:
    'method 3.0.0: listings of the catalog whose payTo is an x402 contract (Permit2, the proxies, the batch contract, its deposit collectors): ' +
    'other_rail, never a seller; null before',
  rejected: 'items rejected, each with its reason (bundle: catalog_rejects.ndjson)',
  fetched_at: 'when the catalog was read',
  indexed_to_block: 'the chain was read up to this block (the as-of block)',
  indexed_to_timestamp: 'time of that block',
  lag_seconds: "seconds between that block's time and the read",
  // meta
  api_version: 'version of this API (1.0.0)',
  generated_at: 'when the generation was computed',
  as_of: 'the block the generation is computed as of: number, hash, time',
  block_hash: 'hash of the as-of block: a different hash on the chain means a reorganisation',
  timestamp: 'time of the as-of block',
  start: 'start of the window (exclusive)',
  end: 'end of the window (inclusive): the as-of block time',
  seconds: 'length of the window, seconds',
  cadence: 'how often a run publishes a generation',
  interval_seconds: 'seconds between scheduled runs (CADENCE_SECONDS)',
  next_run_expected_at: "when the next generation is expected: the latest's publish time + the cadence",
  freshness: 'how current the latest generation is',
  constants: 'every constant of the method the generation was computed with',
  sources: 'what was read: the catalog (with its digest) and the chain (with its lag)',
  digests: 'digests to check the generation: the catalog read and the evidence counted',
  classes:
    'method 3.0.0: the evidence classes, each with the contracts and topic0 values whose logs define it (lowercase hex; USDC and Transfer listed for the classes that pair one); null before',
  'ClassLogs.class': 'the evidence class',
  'ClassLogs.contracts': 'the contracts whose logs define the class, lowercase',
  'ClassLogs.topic0': 'the topic0 of the logs that define the class',
  catalog_sha256: 'sha256 of the catalog items as read (bundle: catalog_items.ndjson)',
  generations: 'the latest published generation and every retained one',
  latest: 'the generation served by default',
  retained: 'generations that can be pinned with ?generation=N',
  // seller directory
  'SellerDirectoryPage.total':
    'sellers of the generation that pass the filters (every page of the walk), not only this page',
  'SellerDirectoryPage.sort': 'the order of the rows: the sort asked for, or verified_revenue by default',
  'SellerDirectoryPage.sellers': 'one row per seller, in the order of sort',
  'DirectorySeller.classes':
    "method 3.0.0: the evidence classes of the seller's verified payments in the window (those with at least one payment), in class order; null before",
  'DirectorySeller.operator_group':
    'the id of the operator group the seller belongs to (sellers linked by a shared resource host); null when in none, or before groups are published',
  // errors
  error: 'what went wrong',
  code: 'stable snake_case code',
  message: 'human text: what was wrong and, for a 400, which parameter',
  display_name:
    "a name for people: the seller's first non-null listing title (in listing_id order), else the host of its first resource URL; a claim of the catalog, not verified",
};

/** The meaning of a property of a component schema (`Schema.field` or `Schema.a.b.field`), or undefined. */
export function meaningOf(path: string): string | undefined {
  const parts = path.split('.');
  for (let i = 0; i < parts.length - 1; i++) {
    const qualified = parts.slice(i).join('.');
    if (FIELD_MEANINGS[qualified] !== undefined) return FIELD_MEANINGS[qualified];
  }
  return FIELD_MEANINGS[parts.at(-1)!];
}

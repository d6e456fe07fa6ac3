import { BASE_CHAIN_ID, BASE_USDC } from '../config/index.ts';

/**
 * The current default method: the version `run`, `schedule` and `demo` compute new generations
 * with unless METHOD_VERSION says otherwise (docs/METHOD.md). Any change to a rule or a constant
 * is a new version. The other versions this code still computes and audits: versions.ts.
 */
export const METHOD_VERSION = '3.0.0';

/** The constants of method 1.0.0 as `/api/v1/meta` serves them. */
export const METHOD_CONSTANTS_1_0_0 = Object.freeze({
  chain_id: BASE_CHAIN_ID,
  usdc_contract: BASE_USDC,
  window_seconds: 2_592_000,
  evidence_min_payments: 5,
  evidence_min_payers: 3,
  farm_listing_threshold: 50,
  farm_top_payer_share: 0.9,
  farm_top_payer_min_payments: 10,
});

/** The constants of method 2.0.0: 1.0.0's and the digest period. */
export const METHOD_CONSTANTS_2_0_0 = Object.freeze({
  ...METHOD_CONSTANTS_1_0_0,
  /** Length of a digest period (composed digests, docs/METHOD.md "Method 2.0.0"). */
  digest_period_seconds: 3600,
});

/**
 * The constants of method 3.0.0 (docs/METHOD.md section 2.11): 2.0.0's, the lookback of the
 * `seller_funded` test and the internal share above which a seller is flagged.
 */
export const METHOD_CONSTANTS_3_0_0 = Object.freeze({
  ...METHOD_CONSTANTS_2_0_0,
  /** A seller's transfer to a payer makes the payer's payments internal for this long after it. */
  funding_lookback_seconds: 2_592_000,
  /** Farm reason `internal_share>0.5`: internal revenue above this share of the revenue. */
  farm_internal_share: 0.5,
});

// The categories are the catalog's vocabulary, shared by the catalog, the method and the API.
export { CATEGORIES, type Category } from '../lib/categories.ts';

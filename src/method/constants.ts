import { BASE_CHAIN_ID, BASE_USDC } from '../config/index.ts';

/** The version of the method (docs/METHOD.md). Any change to a rule or a constant changes it. */
export const METHOD_VERSION = '1.0.0';

/** The constants of method 1.0.0 as `/api/v1/meta` serves them. */
export const METHOD_CONSTANTS = Object.freeze({
  chain_id: BASE_CHAIN_ID,
  usdc_contract: BASE_USDC,
  window_seconds: 2_592_000,
  evidence_min_payments: 5,
  evidence_min_payers: 3,
  farm_listing_threshold: 50,
  farm_top_payer_share: 0.9,
  farm_top_payer_min_payments: 10,
});

export type MethodConstants = typeof METHOD_CONSTANTS;

/** The 11 categories of a listing, in the order the contract lists them. */
export const CATEGORIES = [
  'scraping-extraction',
  'payments-infrastructure',
  'communications',
  'inference',
  'other',
  'media-generation',
  'data-access',
  'trading-execution',
  'verification-conformance',
  'storage-state',
  'search-retrieval',
] as const;
export type Category = (typeof CATEGORIES)[number];

/**
 * The 11 categories of a listing, in the order the contract lists them: the catalog assigns them,
 * the method groups by them, the API filters by them; so they live below all three.
 */
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

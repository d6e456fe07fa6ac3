/** The catalog stage: discovery items -> listings, rejects and a stored snapshot (SPEC section 1). */
export type { Catalog, CatalogOptions, Category, Duplicate, Listing, Reject } from './types.ts';
export type { Logger } from '../lib/log.ts';
export { buildCatalog, countRejects } from './build.ts';
export { readCatalog, parseCatalogDocument, type ReadCatalogOptions } from './source.ts';
export { storeCatalogSnapshot, loadCatalogSnapshot } from './store.ts';
export { ingestCatalog } from './ingest.ts';
export { canonicalJson, catalogSha256 } from './canonical.ts';
export { classify, CLASSIFIER_RULES } from './classify.ts';
export { REJECT_REASONS, type RejectReason } from './normalise.ts';

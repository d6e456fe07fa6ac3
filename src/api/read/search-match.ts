import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../db/schema.ts';
import type { GenerationRow } from './generation.ts';
import { termsQuery } from './search-paths.ts';

/**
 * The seller directory's one call into the listing search: the seller addresses of the listings
 * of `g`'s catalog snapshot that the listing search (`q` of /api/v1/sellers, ./search.ts) finds
 * by its words strategies, as a subquery of one column `seller_address` (unordered; null for a
 * listing off Base USDC, and any payTo the generation does not count as a seller, which the
 * caller's join to gen_sellers drops). `terms` is matchTerms' answer for q (./search.ts): per
 * word of q, the catalog words it matches (itself, its plural or singular forms, or the words it
 * is a prefix of); a listing is found when its search document holds one of each. The address
 * strategy is the directory's own (a prefix of the seller's address).
 */
export function listingSearchSellers(db: Kysely<Schema>, g: GenerationRow, terms: string[][]) {
  return db
    .selectFrom('catalog_listings as c')
    .select('c.seller_address')
    .where('c.snapshot_id', '=', g.catalog_snapshot_id)
    .where(sql<boolean>`c.search_doc @@ ${termsQuery(terms)}::tsquery`);
}

import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../db/schema.ts';
import type { GenerationRow } from './generation.ts';

/**
 * The seller directory's one call into the listing search: the seller addresses of the listings
 * of `g`'s catalog snapshot that the listing search (`q` of /api/v1/sellers, ./listings.ts) finds
 * for `q`, as a subquery of one column `seller_address` (unordered; null for a listing off Base
 * USDC, and any payTo the generation does not count as a seller, which the caller's join to
 * gen_sellers drops).
 *
 * Today's rule of the listing search: a listing is found when its search document (title,
 * description and resource URL, migration 0017) holds every word of q, words being cut from q
 * by the same SQL expression as the documents (lowercase, cut at anything not a letter or a
 * digit). This is the place to change when the listing search changes its rule (prefixes,
 * plurals): the directory then finds what the listing search finds.
 */
export function listingSearchSellers(db: Kysely<Schema>, g: GenerationRow, q: string) {
  // plainto_tsquery under 'simple' cuts words as to_tsvector('simple') cuts the documents and
  // joins them with &; a q without a word (only characters [:alnum:] does not take) finds none.
  const words = sql<string>`plainto_tsquery('simple'::regconfig, regexp_replace(lower(${q}), '[^[:alnum:]]+', ' ', 'g'))`;
  return db
    .selectFrom('catalog_listings as c')
    .select('c.seller_address')
    .where('c.snapshot_id', '=', g.catalog_snapshot_id)
    .where(sql<boolean>`c.search_doc @@ ${words}`);
}

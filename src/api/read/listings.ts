import { sql, type Kysely, type Selectable } from 'kysely';
import { GEN_LISTING_COLUMNS, type GenListingsTable, type Schema } from '../../db/schema.ts';
import type { z } from 'zod';
import type { DirectoryPage, ListingRow } from '../schemas/directory.ts';
import { hasClasses } from './classes.ts';
import type { GenerationRow } from './generation.ts';
import { DEFAULT_SEARCH_TUNING, searchListings, type SearchTuning } from './search.ts';

/** The fixed `note` of every directory page (SPEC 4). */
export const DIRECTORY_NOTE =
  'Metrics are attributed to the seller (the payment address), not to the single listing: every listing of a seller carries the same numbers. ' +
  'description and category are claims of the catalog, not verified facts. ' +
  'category_source tells an auto-assigned category (auto) from one the seller asserted (seller_asserted).';

type Row = Selectable<GenListingsTable>;

/** One directory row, exactly the contract's fields in the contract's order. */
export function listingRow(r: Row): z.input<typeof ListingRow> {
  return {
    listing_id: r.listing_id,
    seller_address: r.seller_address,
    verifiability: r.verifiability,
    resource_url: r.resource_url,
    title: r.title,
    network: r.network,
    description: r.description,
    category: r.category as z.input<typeof ListingRow>['category'],
    category_source: r.category_source,
    tier: r.tier,
    evidence_state: r.evidence_state,
    verified_revenue_30d_micro: r.verified_revenue_30d_micro,
    median_payment_30d_micro: r.median_payment_30d_micro,
    farm_flag: r.farm_flag as 0 | 1 | null,
    farm_reasons: r.farm_reasons,
    sibling_listings: r.sibling_listings,
  };
}

export interface DirectoryParams {
  cursor?: string | undefined;
  category?: string | undefined;
  tier?: 'verified' | 'listed_only' | undefined;
  /** A search: the listings it finds, in its order (src/api/read/search.ts). */
  q?: string | undefined;
  limit: number;
}

/**
 * The directory rows of one generation as a subquery `l` with the columns of gen_listings: for a
 * generation computed since migration 0018, its catalog snapshot's listings with their seller's
 * numbers (what the view gen_listings derives, read here without the view's union so the planner
 * reaches the snapshot's indexes directly); for an older one, its stored rows.
 *
 * Under method 3.x a listing whose payTo is an x402 contract is `other_rail` with no seller (SPEC
 * "x402 infrastructure is never a seller"). The catalog is shared by every method version and
 * keeps such a listing `base_usdc` (2.x generations keep 2.x's rule), so the rule is applied here,
 * per generation, in the same place as the seller's numbers, exactly as the view gen_listings
 * applies it (migration 0035, whose table x402_infrastructure both read; the bundle's
 * listings.ndjson is made from the view).
 */
export function generationListings(db: Kysely<Schema>, g: GenerationRow) {
  if (!g.listings_derived) {
    return db.selectFrom('gen_listings_fixed').select(GEN_LISTING_COLUMNS).where('generation', '=', g.generation);
  }
  // 2.x: no listing is infrastructure (the constant folds away in the plan)
  const isInfrastructure = hasClasses(g)
    ? sql<boolean>`c.pay_to in (select address from x402_infrastructure)`
    : sql<boolean>`false`;
  return db
    .selectFrom('catalog_listings as c')
    .leftJoin('gen_sellers as s', (join) =>
      join
        .on('s.generation', '=', g.generation)
        .onRef('s.seller_address', '=', 'c.seller_address')
        .on(sql<boolean>`not ${isInfrastructure}`),
    )
    .where('c.snapshot_id', '=', g.catalog_snapshot_id)
    .select([
      sql<number>`${g.generation}::int`.as('generation'),
      'c.listing_id',
      sql<string | null>`case when ${isInfrastructure} then null else c.seller_address end`.as('seller_address'),
      sql<Row['verifiability']>`case when ${isInfrastructure} then 'other_rail' else c.verifiability end`.as(
        'verifiability',
      ),
      'c.resource_url',
      'c.title',
      'c.network',
      'c.description',
      'c.category',
      'c.category_source',
      sql<Row['tier']>`coalesce(s.tier, 'listed_only')`.as('tier'),
      sql<Row['evidence_state']>`coalesce(s.evidence_state, 'not_observed')`.as('evidence_state'),
      's.verified_revenue_30d_micro',
      's.median_payment_30d_micro',
      's.farm_flag',
      's.farm_reasons',
      sql<number>`coalesce(s.listing_count, 0)`.as('sibling_listings'),
    ]);
}

/**
 * A directory page: with `q`, a page of the search (searchListings, tuned by `search`); else the
 * rows after `cursor` by ascending listing_id, one extra row telling whether more follow.
 */
export async function readDirectory(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: DirectoryParams,
  search: SearchTuning = DEFAULT_SEARCH_TUNING,
): Promise<z.input<typeof DirectoryPage>> {
  if (p.q !== undefined) {
    const found = await searchListings(db, g, { ...p, q: p.q }, search);
    return {
      count: found.rows.length,
      next_cursor: found.nextCursor,
      note: DIRECTORY_NOTE,
      generation: g.generation,
      method_version: g.method_version,
      listings: found.rows.map(listingRow),
    };
  }
  let q = db.selectFrom(generationListings(db, g).as('l')).select(GEN_LISTING_COLUMNS);
  if (p.category !== undefined) q = q.where('category', '=', p.category);
  if (p.tier !== undefined) q = q.where('tier', '=', p.tier);
  if (p.cursor !== undefined) q = q.where('listing_id', '>', p.cursor);
  const rows = await q
    .orderBy('listing_id')
    .limit(p.limit + 1)
    .execute();
  const page = rows.slice(0, p.limit);
  const more = rows.length > p.limit;
  return {
    count: page.length,
    next_cursor: more ? page[page.length - 1]!.listing_id : null,
    note: DIRECTORY_NOTE,
    generation: g.generation,
    method_version: g.method_version,
    listings: page.map(listingRow),
  };
}

import type { Kysely, Selectable } from 'kysely';
import type { GenListingsTable, Schema } from '../../db/schema.ts';
import type { z } from 'zod';
import type { DirectoryPage, ListingRow } from '../schemas/responses.ts';
import type { GenerationRow } from './generation.ts';

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
  limit: number;
}

/** A directory page: rows after `cursor` by ascending listing_id; one extra row tells whether more follow. */
export async function readDirectory(db: Kysely<Schema>, g: GenerationRow, p: DirectoryParams): Promise<z.input<typeof DirectoryPage>> {
  let q = db.selectFrom('gen_listings').selectAll().where('generation', '=', g.generation);
  if (p.category !== undefined) q = q.where('category', '=', p.category);
  if (p.cursor !== undefined) q = q.where('listing_id', '>', p.cursor);
  const rows = await q.orderBy('listing_id').limit(p.limit + 1).execute();
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

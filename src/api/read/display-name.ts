import type { Kysely } from 'kysely';
import type { Schema } from '../../db/schema.ts';

/**
 * A seller's `display_name`: the first non-null listing title in listing_id order, else the host
 * of its first resource URL (SPEC 4). A claim of the catalog, like `title`: not verified.
 * `listings` must be the seller's listings in listing_id order.
 */
export function displayNameOf(listings: readonly { title: string | null; resource_url: string }[]): string | null {
  const titled = listings.find((l) => l.title !== null && l.title.trim() !== '');
  if (titled) return titled.title;
  const first = listings[0];
  if (!first) return null;
  try {
    return new URL(first.resource_url).host || first.resource_url;
  } catch {
    return first.resource_url;
  }
}

/** The display_name of each given seller of a generation, in one query. */
export async function displayNames(
  db: Kysely<Schema>,
  generation: number,
  sellers: readonly string[],
): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  if (sellers.length === 0) return out;
  const rows = await db
    .selectFrom('gen_listings')
    .select(['seller_address', 'title', 'resource_url'])
    .where('generation', '=', generation)
    .where('seller_address', 'in', [...sellers])
    .orderBy('seller_address')
    .orderBy('listing_id')
    .execute();
  const bySeller = new Map<string, { title: string | null; resource_url: string }[]>();
  for (const r of rows) {
    const list = bySeller.get(r.seller_address!) ?? [];
    list.push(r);
    bySeller.set(r.seller_address!, list);
  }
  for (const s of sellers) out.set(s, displayNameOf(bySeller.get(s) ?? []));
  return out;
}

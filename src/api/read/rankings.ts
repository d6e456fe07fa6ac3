import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { z } from 'zod';
import type { Schema } from '../../db/schema.ts';
import { decodeRankCursor, encodeRankCursor, type RankingOrder } from '../cursor.ts';
import { badParameter } from '../errors.ts';
import type { RankingsPage } from '../schemas/directory.ts';
import { hasClasses } from './classes.ts';
import { displayNames } from './display-name.ts';
import { servedWindow, type GenerationRow } from './generation.ts';

export interface RankingsParams {
  cursor?: string | undefined;
  category?: string | undefined;
  /** The order (default verified_revenue, the published rank). */
  sort?: RankingOrder | undefined;
  limit: number;
}

type Row = z.input<typeof RankingsPage>['rankings'][number];

/**
 * Up to `limit` ranked sellers of the generation after position `after` in `order`, with their
 * position as `position`, by position:
 * - verified_revenue: the position is the published rank (the method's order);
 * - external_revenue: external_revenue_30d_micro descending, ties in the published order. The
 *   position is numbered over every ranked seller before a category filter applies, so a
 *   filtered page keeps each row's place in the whole ranking, as `rank` does by default.
 *   Numbering sorts the generation's ranked sellers on each page read (pages are cached per
 *   URL). Only (address, categories, external revenue, rank) are sorted, the page is cut from
 *   them, and only its rows are read whole: joining whole rows before the cut cost three times as
 *   much at 5,000 ranked sellers (bench/rankings-sort.ts, docs/benchmarks.md).
 */
function pageRows(
  db: Kysely<Schema>,
  g: GenerationRow,
  order: RankingOrder,
  after: number,
  category: string | undefined,
  limit: number,
) {
  if (order === 'verified_revenue') {
    let q = db
      .selectFrom('gen_sellers')
      .selectAll()
      .select(sql<number>`rank`.as('position'))
      .where('generation', '=', g.generation)
      .where('rank', 'is not', null)
      .where('rank', '>', after);
    if (category !== undefined) q = q.where(sql<boolean>`${category} = any(categories)`);
    return q.orderBy('rank').limit(limit).execute();
  }
  const positions = db
    .selectFrom('gen_sellers')
    .select([
      'seller_address as position_of',
      'categories as position_categories',
      sql<number>`(row_number() over (order by external_revenue_30d_micro desc nulls last, rank))::int4`.as('position'),
    ])
    .where('generation', '=', g.generation)
    .where('rank', 'is not', null);
  let page = db.selectFrom(positions.as('o')).select(['position_of', 'position']).where('position', '>', after);
  if (category !== undefined) page = page.where(sql<boolean>`${category} = any(position_categories)`);
  return db
    .selectFrom(page.orderBy('position').limit(limit).as('p'))
    .innerJoin('gen_sellers as s', (join) =>
      join.on('s.generation', '=', g.generation).onRef('s.seller_address', '=', 'p.position_of'),
    )
    .selectAll('s')
    .select('p.position')
    .orderBy('p.position')
    .execute();
}

/** A page of the ranking in the requested order, after the cursor's position. */
export async function readRankings(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: RankingsParams,
): Promise<z.input<typeof RankingsPage>> {
  const order = p.sort ?? 'verified_revenue';
  const v3 = hasClasses(g);
  if (order === 'external_revenue' && !v3)
    throw badParameter(
      'sort',
      `external_revenue needs a generation of method 3.0.0 or later; generation ${g.generation} is method ${g.method_version}`,
    );
  const after = p.cursor === undefined ? 0 : decodeRankCursor(p.cursor, order);
  // One row more than the page tells whether another page follows.
  const rows = await pageRows(db, g, order, after, p.category, p.limit + 1);
  const page = rows.slice(0, p.limit);
  const more = rows.length > p.limit;
  const names = await displayNames(
    db,
    g.generation,
    page.map((r) => r.seller_address),
  );
  return {
    count: page.length,
    next_cursor: more ? encodeRankCursor(page[page.length - 1]!.position, order) : null,
    generation: g.generation,
    method_version: g.method_version,
    window: servedWindow(g),
    rankings: page.map((r): Row => ({
      rank: r.position,
      seller_address: r.seller_address,
      slug: r.seller_address,
      display_name: names.get(r.seller_address) ?? null,
      verified_revenue_30d_micro: r.verified_revenue_30d_micro,
      median_payment_30d_micro: r.median_payment_30d_micro,
      payments_30d: r.payments_30d,
      payers_30d: r.payers_30d,
      listing_count: r.listing_count,
      categories: r.categories as Row['categories'],
      farm_flag: r.farm_flag as 0 | 1,
      farm_reasons: r.farm_reasons,
      // Method 3.0.0: null on 1.x and 2.x generations.
      external_revenue_30d_micro: v3 ? r.external_revenue_30d_micro : null,
      external_payments_30d: v3 ? r.external_payments_30d : null,
      external_payers_30d: v3 ? r.external_payers_30d : null,
    })),
  };
}

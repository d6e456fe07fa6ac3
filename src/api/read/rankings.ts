import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { z } from 'zod';
import type { Schema } from '../../db/schema.ts';
import { decodeRankCursor, encodeRankCursor } from '../cursor.ts';
import type { RankingsPage } from '../schemas/responses.ts';
import { displayNames } from './display-name.ts';
import { windowOf, type GenerationRow } from './generation.ts';

export interface RankingsParams {
  cursor?: string | undefined;
  category?: string | undefined;
  limit: number;
}

/** A page of the ranking (ranked sellers by rank), after the cursor's rank. */
export async function readRankings(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: RankingsParams,
): Promise<z.input<typeof RankingsPage>> {
  const after = p.cursor === undefined ? 0 : decodeRankCursor(p.cursor);
  let q = db
    .selectFrom('gen_sellers')
    .selectAll()
    .where('generation', '=', g.generation)
    .where('rank', 'is not', null)
    .where('rank', '>', after);
  if (p.category !== undefined) q = q.where(sql<boolean>`${p.category} = any(categories)`);
  const rows = await q
    .orderBy('rank')
    .limit(p.limit + 1)
    .execute();
  const page = rows.slice(0, p.limit);
  const more = rows.length > p.limit;
  const names = await displayNames(
    db,
    g.generation,
    page.map((r) => r.seller_address),
  );
  return {
    count: page.length,
    next_cursor: more ? encodeRankCursor(page[page.length - 1]!.rank!) : null,
    generation: g.generation,
    method_version: g.method_version,
    window: windowOf(g),
    rankings: page.map((r) => ({
      rank: r.rank!,
      seller_address: r.seller_address,
      slug: r.seller_address,
      display_name: names.get(r.seller_address) ?? null,
      verified_revenue_30d_micro: r.verified_revenue_30d_micro,
      median_payment_30d_micro: r.median_payment_30d_micro,
      payments_30d: r.payments_30d,
      payers_30d: r.payers_30d,
      listing_count: r.listing_count,
      categories: r.categories as z.input<typeof RankingsPage>['rankings'][number]['categories'],
      farm_flag: r.farm_flag as 0 | 1,
      farm_reasons: r.farm_reasons,
    })),
  };
}

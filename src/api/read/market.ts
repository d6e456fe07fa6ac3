import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Schema } from '../../db/schema.ts';
import type { MarketDaily } from '../schemas/responses.ts';
import { hasClasses } from './classes.ts';
import type { GenerationRow } from './generation.ts';

/** The generation's publishable market days within [from, to] (inclusive), newest first. */
export async function readMarketDaily(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: { from?: string | undefined; to?: string | undefined },
): Promise<z.input<typeof MarketDaily>> {
  let q = db.selectFrom('gen_market_daily').selectAll().where('generation', '=', g.generation);
  if (p.from !== undefined) q = q.where('day', '>=', p.from);
  if (p.to !== undefined) q = q.where('day', '<=', p.to);
  const rows = await q.orderBy('day', 'desc').execute();
  const v3 = hasClasses(g);
  return {
    generation: g.generation,
    method_version: g.method_version,
    days: rows.map((r) => ({
      day: r.day,
      payments: r.payments,
      volume_micro: r.volume_micro,
      payers: r.payers,
      sellers_paid: r.sellers_paid,
      median_payment_micro: r.median_payment_micro,
      tracked_sellers: r.tracked_sellers,
      tracked_listings: r.tracked_listings,
      // Method 3.0.0: null on 1.x and 2.x generations.
      external_volume_micro: v3 ? r.external_volume_micro : null,
    })),
  };
}

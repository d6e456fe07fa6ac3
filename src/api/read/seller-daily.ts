import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Schema } from '../../db/schema.ts';
import type { SellerDaily } from '../schemas/responses.ts';
import type { GenerationRow } from './generation.ts';
import { readSeller } from './seller.ts';

/** The seller's daily series (gen_seller_daily), oldest day first; 404 seller_not_found for another address. */
export async function readSellerDaily(
  db: Kysely<Schema>,
  g: GenerationRow,
  address: string,
): Promise<z.input<typeof SellerDaily>> {
  await readSeller(db, g, address);
  const days = await db
    .selectFrom('gen_seller_daily')
    .select(['day', 'payments', 'revenue_micro', 'payers'])
    .where('generation', '=', g.generation)
    .where('seller_address', '=', address)
    .orderBy('day')
    .execute();
  return { generation: g.generation, method_version: g.method_version, seller_address: address, days };
}

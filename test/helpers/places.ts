import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../src/db/schema.ts';

/**
 * The sellers of generation g whose stored places in the directory's four orders (migration
 * 0043) are not their positions worked out here, from the published columns: each order sorted in
 * JavaScript, the key descending (a null external revenue after every revenue), ties by the address
 * in code-unit order, positions from 1. Empty when every place is right. One line per wrong place:
 * `address order: stored, expected`.
 */
export async function misplacedSellers(db: Kysely<Schema>, g: number): Promise<string[]> {
  const { rows } = await sql<{
    a: string;
    revenue: string;
    external: string | null;
    payments: number;
    payers: number;
    place_revenue: number;
    place_external: number;
    place_payments: number;
    place_payers: number;
  }>`select seller_address as a, verified_revenue_30d_micro::text as revenue,
            external_revenue_30d_micro::text as external, payments_30d as payments, payers_30d as payers,
            place_revenue, place_external, place_payments, place_payers
       from gen_sellers where generation = ${g}`.execute(db);
  const orders = {
    place_revenue: (r: (typeof rows)[number]) => BigInt(r.revenue),
    place_external: (r: (typeof rows)[number]) => (r.external === null ? -1n : BigInt(r.external)),
    place_payments: (r: (typeof rows)[number]) => BigInt(r.payments),
    place_payers: (r: (typeof rows)[number]) => BigInt(r.payers),
  };
  const wrong: string[] = [];
  for (const [column, key] of Object.entries(orders) as [keyof typeof orders, (r: (typeof rows)[number]) => bigint][]) {
    const sorted = [...rows].sort((x, y) => {
      const [kx, ky] = [key(x), key(y)];
      if (kx !== ky) return kx > ky ? -1 : 1;
      return x.a < y.a ? -1 : x.a > y.a ? 1 : 0;
    });
    sorted.forEach((r, i) => {
      if (r[column] !== i + 1) wrong.push(`${r.a} ${column}: ${r[column]}, ${i + 1}`);
    });
  }
  return wrong;
}

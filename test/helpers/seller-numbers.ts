import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../src/db/schema.ts';

/**
 * What is wrong with generation g's seller numbers (gen_sellers.seller_no, migration 0043: the
 * directory's tie-break, which must order the generation's sellers as their addresses do): the
 * sellers in seller_no order, against the same sellers sorted here by address in code-unit order,
 * and any number held twice. Empty when they agree.
 */
export async function misnumberedSellers(db: Kysely<Schema>, g: number): Promise<string[]> {
  const { rows } = await sql<{ a: string; n: number }>`
    select seller_address as a, seller_no as n from gen_sellers where generation = ${g}`.execute(db);
  const byNumber = [...rows].sort((x, y) => x.n - y.n);
  const byAddress = [...rows].sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : 0));
  const wrong = byNumber.flatMap((r, i) =>
    r.a === byAddress[i]!.a ? [] : [`number ${r.n} is ${r.a}, the address at place ${i + 1} is ${byAddress[i]!.a}`],
  );
  const twice = byNumber.filter((r, i) => i > 0 && byNumber[i - 1]!.n === r.n).map((r) => `${r.n} twice`);
  return [...wrong, ...twice];
}

/**
 * Generation g's partition of gen_sellers (migration 0047) for rows a test inserts by hand: what
 * method step 2 does around its insert, on no rows, so that the partition is there, indexed and
 * attached, and rows inserted into gen_sellers afterwards go into it.
 */
export async function openSellerPartition(db: Kysely<Schema>, g: number): Promise<void> {
  await sql`select gen_sellers_open(${g}::int4)`.execute(db);
  await sql`select gen_sellers_close(${g}::int4)`.execute(db);
}

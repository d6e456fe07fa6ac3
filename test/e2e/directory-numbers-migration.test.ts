import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { readSellerDirectory } from '../../src/api/read/directory.ts';
import { readPublishedGeneration } from '../../src/api/read/generation.ts';
import type { DirectorySort } from '../../src/api/cursor.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import type { Schema } from '../../src/db/schema.ts';
import { CONSTANTS3, insertGenerationRow } from '../api/fixture3.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { misnumberedSellers } from '../helpers/seller-numbers.ts';

// Migration 0043 (the directory's ties by seller number): the sellers of every stored generation
// get numbers in address order; the directory then serves each order as the order worked out here
// in JavaScript from the rows' published columns (key descending, ties by address, as migration
// 0037's indexes held it), page by page; the table is as it was after a migration killed halfway.

const ALL = loadMigrations();
const BEFORE_0043 = ALL.filter((m) => m.version < 43);
const SELLERS = 40;

/**
 * Generation 1 (2.0.0: no external revenue) and 2 (3.0.0) of SELLERS sellers each, inserted as
 * the code before 0043 inserted them (no places), with ties in every order: revenue i % 7, payments
 * i % 5, payers i % 3, external revenue i % 4 (null on generation 1). The addresses are the md5 of
 * i, so their order is not i's.
 */
async function seed(db: Kysely<Schema>) {
  const snap = await db
    .insertInto('catalog_snapshots')
    .values({
      source: 'places.json',
      fetched_at: '2026-01-01T03:00:05Z',
      sha256: 'ab'.repeat(32),
      items_count: 0,
      listings_count: 0,
      rejected_count: 0,
    })
    .returning('snapshot_id')
    .executeTakeFirstOrThrow();
  await insertGenerationRow(db, 1, '2.0.0', {}, snap.snapshot_id);
  await insertGenerationRow(db, 2, '3.0.0', CONSTANTS3, snap.snapshot_id);
  for (const g of [1, 2])
    await sql`
      insert into gen_sellers (generation, seller_address, listing_count, payments_30d, payers_30d,
                               verified_revenue_30d_micro, evidence_state, tier, farm_flag, categories,
                               evidence_sha256, external_revenue_30d_micro, class_payments_30d)
      select ${g}, '0x' || md5(i::text) || substr(md5(i::text), 1, 8), 1, i % 5, i % 3, i % 7,
             'insufficient', 'listed_only', 0, array['inference'], repeat('c', 64),
             case when ${g} = 2 then i % 4 end, case when ${g} = 2 then array[0, 0, 0, 0] end
        from generate_series(1, ${SELLERS}) i`.execute(db);
}

/** Generation g's sellers in `sort`'s order, worked out in JavaScript from the seed's formulas. */
function expectedOrder(g: number, sort: DirectorySort): string[] {
  const rows = Array.from({ length: SELLERS }, (_, k) => {
    const i = k + 1;
    const key = { verified_revenue: i % 7, payments: i % 5, payers: i % 3, external_revenue: g === 2 ? i % 4 : -1 };
    return { a: `0x${md5(String(i))}${md5(String(i)).slice(0, 8)}`, k: key[sort] };
  });
  return rows.sort((x, y) => y.k - x.k || (x.a < y.a ? -1 : 1)).map((r) => r.a);
}

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

/** Every seller of generation g in `sort`, walked 7 a page with the cursor. */
async function walk(db: Kysely<Schema>, g: number, sort: DirectorySort): Promise<string[]> {
  const gen = (await readPublishedGeneration(db, g))!;
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await readSellerDirectory(db, gen, { sort, limit: 7, ...(cursor ? { cursor } : {}) });
    expect(page.total).toBe(SELLERS);
    out.push(...page.sellers.map((s) => s.seller_address));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return out;
}

describe.each(backends())('migration 0043, the directory places, on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: every stored generation numbered; the directory walks each order as before', async () => {
    database = await freshDatabase(backend, { migrate: false });
    const { db } = database;
    await migrate(db, BEFORE_0043);
    await seed(db);
    expect(await migrate(db)).toEqual(ALL.filter((m) => m.version >= 43).map((m) => m.version));
    for (const g of [1, 2]) {
      expect(await misnumberedSellers(db, g), `generation ${g}`).toEqual([]);
      const sorts: DirectorySort[] = ['verified_revenue', 'payments', 'payers'];
      if (g === 2) sorts.push('external_revenue');
      for (const sort of sorts) expect(await walk(db, g, sort), `${g} ${sort}`).toEqual(expectedOrder(g, sort));
    }
  });

  it('behavior: killed halfway (after the rows are numbered), the table is as before; run again, it finishes', async () => {
    database = await freshDatabase(backend, { migrate: false });
    const { db } = database;
    await migrate(db, BEFORE_0043);
    await seed(db);
    const columns = async () =>
      (
        await sql<{ c: string }>`select column_name as c from information_schema.columns
          where table_schema = current_schema() and table_name = 'gen_sellers' order by ordinal_position`.execute(db)
      ).rows.map((r) => r.c);
    const indexes = async () =>
      (
        await sql<{ i: string }>`select indexname as i from pg_indexes
          where schemaname = current_schema() and tablename = 'gen_sellers' order by 1`.execute(db)
      ).rows.map((r) => r.i);
    const before = { columns: await columns(), indexes: await indexes() };
    const text = ALL.find((m) => m.version === 43)!.sql;
    const half = text.slice(0, text.indexOf('alter table gen_sellers alter column'));
    expect(half).toContain('select gen_sellers_set_numbers(generation)');
    await expect(
      db.transaction().execute(async (trx) => {
        await sql.raw(half).execute(trx);
        throw new Error('killed');
      }),
    ).rejects.toThrow('killed');
    expect({ columns: await columns(), indexes: await indexes() }).toEqual(before);
    expect(await migrate(db)).toEqual(ALL.filter((m) => m.version >= 43).map((m) => m.version));
    for (const g of [1, 2]) expect(await misnumberedSellers(db, g), `generation ${g}`).toEqual([]);
    expect(await indexes()).toEqual(before.indexes);
    const { rows: keys } = await sql<{ d: string }>`select indexdef as d from pg_indexes
      where schemaname = current_schema() and indexname = 'gen_sellers_by_payers'`.execute(db);
    expect(keys[0]!.d).toMatch(/\(generation, payers_30d DESC, seller_no\)$/);
  });
});

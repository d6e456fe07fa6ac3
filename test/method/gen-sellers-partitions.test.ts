import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import type { Schema } from '../../src/db/schema.ts';
import { loadMethodSteps } from '../../src/method/index.ts';
import { pruneGenerations, publishGeneration } from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { compute, loadFixture } from './setup.ts';

// Migration 0047: gen_sellers is one partition per generation, gen_sellers_<g>, which method step
// 2 fills unindexed, indexes and attaches inside the run's transaction, and which deleting the
// generation drops.

/** The partitions of gen_sellers: generation -> name, in generation order. */
async function partitions(db: Kysely<Schema>): Promise<[number, string][]> {
  const { rows } = await sql<{ name: string; bound: string }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = 'gen_sellers'::regclass`.execute(db);
  return rows
    .map((r): [number, string] => [Number(/^FOR VALUES IN \((\d+)\)$/.exec(r.bound)![1]), r.name])
    .sort((a, b) => a[0] - b[0]);
}

async function tableExists(db: Kysely<Schema>, name: string): Promise<boolean> {
  const { rows } = await sql<{ t: string | null }>`select to_regclass(${name})::text as t`.execute(db);
  return rows[0]!.t !== null;
}

/** Count and md5 of generation g's rows (or every row), each row as text, by generation and address. */
async function digest(db: Kysely<any>, table: string, g?: number): Promise<{ n: number; md5: string }> {
  const where = g === undefined ? sql`true` : sql`s.generation = ${g}`;
  const { rows } = await sql<{ n: number; md5: string }>`
    select count(*)::int as n,
           md5(coalesce(string_agg(s::text, '|' order by s.generation, s.seller_address collate "C"), '')) as md5
      from ${sql.table(table)} s where ${where}`.execute(db);
  return rows[0]!;
}

describe.each(backends())('gen_sellers partitions on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  it('default: each generation computed is a partition of its own holding its sellers', async () => {
    database = await freshDatabase(backend);
    const { db } = database;
    const { snapshotId, sellers } = await loadFixture(db);
    const a = await compute(db, snapshotId);
    const b = await compute(db, snapshotId);
    expect(await partitions(db)).toEqual([
      [a, `gen_sellers_${a}`],
      [b, `gen_sellers_${b}`],
    ]);
    for (const g of [a, b]) {
      const { rows } = await sql<{ n: number; g: number }>`
        select count(*)::int as n, min(generation) as g from ${sql.table(`gen_sellers_${g}`)}`.execute(db);
      // one row per catalog seller (the fixture's 10), all of generation g
      expect(rows[0]).toEqual({ n: sellers.length, g });
    }
    expect(sellers.length).toBe(10);
    // the partition has the parent's six indexes, attached to them
    const { rows: idx } = await sql<{ parent: string }>`
      select p.relname as parent
        from pg_index x join pg_inherits i on i.inhrelid = x.indexrelid join pg_class p on p.oid = i.inhparent
       where x.indrelid = ${`gen_sellers_${a}`}::regclass order by 1`.execute(db);
    expect(idx.map((r) => r.parent)).toEqual([
      'gen_sellers_by_external',
      'gen_sellers_by_payers',
      'gen_sellers_by_payments',
      'gen_sellers_by_revenue',
      'gen_sellers_pkey',
      'gen_sellers_rank',
    ]);
    expect(await tableExists(db, 'gen_sellers_filling')).toBe(false);
  });

  it('error: a run killed between the open and the close leaves no table and no partition', async () => {
    database = await freshDatabase(backend);
    const { db } = database;
    const { snapshotId } = await loadFixture(db);
    const first = await compute(db, snapshotId);
    await publishGeneration(db, first);
    const steps = loadMethodSteps().map((s) => {
      if (s.name !== 'sellers') return s;
      expect(s.sql).toContain('select gen_sellers_close(generation) from m_gen;');
      // fails after the rows are in gen_sellers_filling, before it is attached
      return { ...s, sql: s.sql.replace('select gen_sellers_close(generation) from m_gen;', 'select 1 / 0;') };
    });
    expect(steps.some((s) => s.sql.includes('select 1 / 0;'))).toBe(true);
    await expect(compute(db, snapshotId, { steps })).rejects.toThrow(/division by zero/);
    expect(await partitions(db)).toEqual([[first, `gen_sellers_${first}`]]);
    expect(await tableExists(db, 'gen_sellers_filling')).toBe(false);
    expect(await tableExists(db, `gen_sellers_${first + 1}`)).toBe(false);
    // the next run takes the same generation number and writes its partition
    const next = await compute(db, snapshotId);
    expect(next).toBe(first + 1);
    expect((await partitions(db)).map((p) => p[0])).toEqual([first, next]);
  });

  it('behavior: pruning drops the pruned generations partitions and leaves the others rows', async () => {
    database = await freshDatabase(backend);
    const { db } = database;
    const { snapshotId } = await loadFixture(db);
    const published: number[] = [];
    for (let i = 0; i < 4; i++) {
      const g = await compute(db, snapshotId);
      await publishGeneration(db, g);
      published.push(g);
    }
    const kept = published.slice(2);
    const before = await Promise.all(kept.map((g) => digest(db, 'gen_sellers', g)));
    expect(before.map((d) => d.n)).toEqual([10, 10]);
    expect((await pruneGenerations(db, 2)).generations).toEqual(published.slice(0, 2));
    expect(await partitions(db)).toEqual(kept.map((g) => [g, `gen_sellers_${g}`]));
    for (const g of published.slice(0, 2)) expect(await tableExists(db, `gen_sellers_${g}`)).toBe(false);
    expect(await Promise.all(kept.map((g) => digest(db, 'gen_sellers', g)))).toEqual(before);
    expect((await digest(db, 'gen_sellers')).n).toBe(20);
  });

  it('behavior: a delete that defers the drop (as prune does) keeps the partition until gen_sellers_drop_unused', async () => {
    database = await freshDatabase(backend);
    const { db } = database;
    const { snapshotId } = await loadFixture(db);
    const [a, b, c] = [await compute(db, snapshotId), await compute(db, snapshotId), await compute(db, snapshotId)];
    const keptB = await digest(db, 'gen_sellers', b);
    // prune's transaction, committed, and then killed before its drop
    await db.transaction().execute(async (trx) => {
      await sql`select set_config('x402tally.gen_sellers_drop', 'later', true)`.execute(trx);
      await trx.deleteFrom('generations').where('generation', 'in', [a, c]).execute();
    });
    expect((await partitions(db)).map((p) => p[0])).toEqual([a, b, c]);
    const { rows } = await sql<{ g: number }>`select gen_sellers_drop_unused() as g`.execute(db);
    expect(rows.map((r) => r.g)).toEqual([a, c]);
    expect(await partitions(db)).toEqual([[b, `gen_sellers_${b}`]]);
    expect(await digest(db, 'gen_sellers', b)).toEqual(keptB);
    // nothing left to drop; and a delete without the setting drops at once
    expect((await sql`select gen_sellers_drop_unused() as g`.execute(db)).rows).toEqual([]);
    await db.deleteFrom('generations').where('generation', '=', b).execute();
    expect(await partitions(db)).toEqual([]);
  });

  it('behavior: migration 0047 moves every row of every stored generation, and gen_listings is the same view', async () => {
    database = await freshDatabase(backend, { migrate: false });
    const { db } = database;
    const all = loadMigrations();
    await migrate(
      db,
      all.filter((m) => m.version < 47),
    );
    // generations 3 and 5 (none between), 30 and 7 sellers, with nulls and arrays in some columns
    for (const [g, n] of [
      [3, 30],
      [5, 7],
    ] as const)
      await sql`
        insert into gen_sellers (generation, seller_address, listing_count, payments_30d, payers_30d,
                                 verified_revenue_30d_micro, median_payment_30d_micro, evidence_state, tier,
                                 farm_flag, farm_reasons, rank, categories, evidence_sha256,
                                 external_revenue_30d_micro, class_payments_30d, seller_no)
        select ${g}, '0x' || md5(i::text) || substr(md5(i::text), 1, 8), 1 + i % 3, i % 5, i % 3,
               i * 1000003, case when i % 2 = 0 then i * 7 end, 'insufficient', 'listed_only', i % 2,
               case when i % 2 = 1 then '["listing_count>5"]' end, case when i % 4 = 0 then i end,
               array['inference', 'c' || i], repeat('c', 64), case when ${g} = 5 then i % 4 end,
               case when ${g} = 5 then array[i, 0, 1, 2] end, i
          from generate_series(1, ${n}) i`.execute(db);
    const rowsBefore = await digest(db, 'gen_sellers');
    const perGeneration = [await digest(db, 'gen_sellers', 3), await digest(db, 'gen_sellers', 5)];
    const view = async () =>
      (await sql<{ d: string }>`select pg_get_viewdef('gen_listings'::regclass, true) as d`.execute(db)).rows[0]!.d;
    const viewBefore = await view();
    expect(rowsBefore.n).toBe(37);

    expect(await migrate(db)).toEqual(all.filter((m) => m.version >= 47).map((m) => m.version));
    expect(await partitions(db)).toEqual([
      [3, 'gen_sellers_3'],
      [5, 'gen_sellers_5'],
    ]);
    expect(await digest(db, 'gen_sellers')).toEqual(rowsBefore);
    expect(await digest(db, 'gen_sellers_3')).toEqual(perGeneration[0]);
    expect(await digest(db, 'gen_sellers_5')).toEqual(perGeneration[1]);
    expect(await view()).toBe(viewBefore);
    expect(await tableExists(db, 'gen_sellers_unpartitioned')).toBe(false);
    // a new generation's partition opens and closes beside them
    await sql`select gen_sellers_open(6)`.execute(db);
    await sql`select gen_sellers_close(6)`.execute(db);
    expect((await partitions(db)).map((p) => p[0])).toEqual([3, 5, 6]);
  });
});

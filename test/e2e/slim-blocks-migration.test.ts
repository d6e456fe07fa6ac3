import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import type { Schema } from '../../src/db/schema.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { mismatches, oldLayoutDatabase, serveAll } from '../helpers/old-layout.ts';

// Migration 0051 (a slimmer blocks table): blocks loses block_number (block_id >> 20) and its seqs
// become int4, rewriting every partition in place. From the old layout's fixture (two published
// generations, a reorg and a backfill: removed and several versions of one block) migrated up to
// 0049 (its facts copied by sql/store/load_facts.sql, which writes 0051's layout, through the
// copy's shim), every block version keeps its id, time, seqs and hash, every payment row of the
// views and every body the API serves stays the same; a run killed halfway changes nothing, and
// the rerun applies it once.

const ALL = loadMigrations();
const BEFORE_0051 = ALL.filter((m) => m.version < 51);
const M0051 = ALL.find((m) => m.version === 51)!;

/** Every block version as text, with the count and an md5 of the lines in block_id order. */
async function blockVersions(db: Kysely<Schema>) {
  const { rows } = await sql<{ n: string; md5: string; removed: string; numbers: string }>`
    select count(*)::text as n,
           md5(string_agg(concat_ws('|', block_id, block_timestamp, added_seq, removed_seq, encode(block_hash, 'hex')),
                          ',' order by block_id)) as md5,
           count(removed_seq)::text as removed,
           string_agg(distinct (block_id >> 20)::text, ',') as numbers
      from blocks`.execute(db);
  return rows[0]!;
}

/** Every row of generation_payments (every retained generation's payments) as text, in one order. */
async function paymentRows(db: Kysely<Schema>) {
  const { rows } = await sql<{ line: string }>`
    select line
      from (select concat_ws('|', generation, tx_hash, log_index, block_number, block_hash, block_timestamp, payer,
                             seller_address, value, in_window, class, internal_reason) as line
              from generation_payments) x
     order by line collate "C"`.execute(db);
  return rows.map((r) => r.line);
}

async function columns(db: Kysely<Schema>) {
  const { rows } = await sql<{ c: string }>`
    select attname || ' ' || format_type(atttypid, atttypmod) as c
      from pg_attribute
     where attrelid = to_regclass('blocks') and attnum > 0 and not attisdropped
     order by attnum`.execute(db);
  return rows.map((r) => r.c);
}

describe.each(backends())('migration 0051, a slimmer blocks table, on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: rewritten in place; the block versions, the payments and every body served are the same, a killed run changes nothing', async () => {
    database = await oldLayoutDatabase(backend);
    const { db } = database;
    await migrate(db, BEFORE_0051, { copyFacts: { batchTransfers: 50 } });
    // The old layout: the stored number, equal to block_id >> 20 (its check), and int8 seqs.
    expect(await columns(db)).toEqual([
      'block_id bigint',
      'block_number bigint',
      'block_timestamp bigint',
      'added_seq bigint',
      'removed_seq bigint',
      'block_hash bytea',
    ]);
    const { rows: numbered } = await sql<{ bad: string }>`
      select count(*)::text as bad from blocks where block_number <> block_id >> 20`.execute(db);
    expect(numbered[0]!.bad).toBe('0');
    const versions = await blockVersions(db);
    // (not an empty comparison: the fixture holds removed versions and a block of two versions)
    expect(Number(versions.n)).toBeGreaterThan(0);
    expect(Number(versions.removed)).toBeGreaterThan(0);
    const { rows: twice } = await sql<{ n: string }>`
      select count(*)::text as n from (select block_id >> 20 from blocks group by 1 having count(*) > 1) x`.execute(db);
    expect(Number(twice[0]!.n)).toBeGreaterThan(0);
    const payments = await paymentRows(db);
    expect(payments.length).toBeGreaterThan(0);
    const served = (await serveAll(db)).served;
    expect(mismatches(served)).toEqual([]);

    // Killed halfway: the rewrite done, the views not yet made again. The transaction rolls back.
    const half = M0051.sql.slice(0, M0051.sql.indexOf('create function block_version_id'));
    expect(half).toContain('alter column added_seq type int4');
    await expect(
      db.transaction().execute(async (trx) => {
        await sql.raw(half).execute(trx);
        expect(await columns(trx)).toEqual([
          'block_id bigint',
          'block_timestamp bigint',
          'added_seq integer',
          'removed_seq integer',
          'block_hash bytea',
        ]);
        throw new Error('killed');
      }),
    ).rejects.toThrow('killed');
    expect(await blockVersions(db)).toEqual(versions);

    expect(await migrate(db)).toEqual([51]);
    expect(await migrate(db)).toEqual([]);
    expect(await columns(db)).toEqual([
      'block_id bigint',
      'block_timestamp bigint',
      'added_seq integer',
      'removed_seq integer',
      'block_hash bytea',
    ]);
    expect(await blockVersions(db)).toEqual(versions);
    expect(await paymentRows(db)).toEqual(payments);
    expect((await serveAll(db)).served).toEqual(served);
    // the indexes were rebuilt, each with its options
    const { rows: indexes } = await sql<{ d: string }>`
      select regexp_replace(pg_get_indexdef(indexrelid), ' ON ONLY \\S+', '') as d from pg_index
       where indrelid = to_regclass('blocks') order by 1`.execute(db);
    expect(indexes.map((r) => r.d)).toEqual([
      "CREATE INDEX blocks_added_seq USING brin (added_seq) WITH (autosummarize='on')",
      'CREATE INDEX blocks_removed_seq USING btree (removed_seq) WHERE (removed_seq IS NOT NULL)',
      "CREATE INDEX blocks_ts USING btree (block_timestamp) WITH (fillfactor='100')",
      "CREATE UNIQUE INDEX blocks_pkey USING btree (block_id) WITH (fillfactor='100')",
    ]);
  });

  it('behavior: a seq past 2^31 - 1 and a block version past 2^20 - 1 are errors, not wraparound', async () => {
    database = await freshDatabase(backend);
    const { db } = database;
    await sql`select setval('ingest_seq', 2147483646)`.execute(db);
    const { rows } = await sql<{ s: string }>`select nextval('ingest_seq')::text as s`.execute(db);
    expect(rows[0]!.s).toBe('2147483647');
    await expect(sql`select nextval('ingest_seq')`.execute(db)).rejects.toThrow(/maximum value/);
    const { rows: ids } = await sql<{ a: string; b: string }>`
      select block_version_id(5, 0)::text as a, block_version_id(5, 1048575)::text as b`.execute(db);
    expect(ids[0]).toEqual({ a: String(5 * 1048576), b: String(6 * 1048576 - 1) });
    await expect(sql`select block_version_id(5, 1048576)`.execute(db)).rejects.toThrow(/at most 2\^20 versions/);
    await expect(sql`select block_version_id(5, -1)`.execute(db)).rejects.toThrow(/at most 2\^20 versions/);
    // visible_at on blocks' int4 seqs is the rule of the bigint one (migration 0023), case by case
    const { rows: rules } = await sql<{ a: boolean; b: boolean }>`
      select visible_at(a::int4, r::int4, s) as a, visible_at(a, r, s) as b
        from unnest(array[1, 1, 1, 2, 2, 3, 3]::int8[], array[null, 2, 3, null, 3, null, 4]::int8[]) as x(a, r),
             unnest(array[0, 1, 2, 3, 2147483647]::int8[]) as y(s)`.execute(db);
    expect(rules.length).toBe(35);
    expect(rules.filter((r) => r.a).length).toBeGreaterThan(0);
    expect(rules.filter((r) => !r.a).length).toBeGreaterThan(0);
    for (const r of rules) expect(r.a).toBe(r.b);
  });
});

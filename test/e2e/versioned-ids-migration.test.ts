import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import type { Schema } from '../../src/db/schema.ts';
import { backends, type TestDatabase } from '../helpers/db.ts';
import { mismatches, oldLayoutDatabase, serveAll } from '../helpers/old-layout.ts';

// Migration 0033 keys the versioned rows that retained generations read (part_seller_hours,
// part_hours, seller_daily_rows) by address id, with the sha256 as bytes, converting them in
// place. Starting from the old layout's fixture (two published generations) migrated up to 0032,
// what the API serves and every row of the three views that read those tables must be the same
// after it, byte for byte, including rows naming an address that no stored fact names any more
// (its facts dropped with their partition while a retained generation still shows its hours).

const ALL = loadMigrations();
const BEFORE_0033 = ALL.filter((m) => m.version < 33);

/** Every row of the three views, as text, in one order (the API and the bundle read them). */
async function viewRows(db: Kysely<Schema>) {
  const { rows } = await sql<{ line: string }>`
    select line
      from (select concat_ws('|', 'sp', generation, seller_address, period_start, payments, sha256) as line
              from gen_seller_periods
            union all
            select concat_ws('|', 'p', generation, period_start, payments, sha256) from gen_periods
            union all
            select concat_ws('|', 'sd', generation, seller_address, day, payments, revenue_micro, payers)
              from gen_seller_daily) v
     order by line collate "C"`.execute(db);
  return rows.map((r) => r.line);
}

const GONE = '0x' + 'ab'.repeat(20); // an address no fact names
const hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** A closed hour and a closed daily row of GONE, served by the first generation only. */
async function addRowsOfAGoneAddress(db: Kysely<Schema>, address = GONE) {
  const { rows } = await sql<{ generation: number; w1: string; day: string }>`
    select generation,
           (window_start_ts - window_start_ts % 3600 + 3600)::text as w1,
           to_char(to_timestamp(as_of_ts) at time zone 'UTC', 'YYYY-MM-DD') as day
      from generations order by generation limit 1`.execute(db);
  const { generation, w1, day } = rows[0]!;
  await sql`insert into part_seller_hours (seller_address, hour_start, payments, sha256, gen_from, gen_to)
            values (${address}, ${w1}::int8, 3, ${hex('hour')}, ${generation}, ${generation + 1})`.execute(db);
  await sql`insert into seller_daily_rows (seller_address, day, payments, revenue_micro, payers, gen_from, gen_to)
            values (${address}, ${day}::date, 3, 1234567, 2, ${generation}, ${generation + 1})`.execute(db);
}

describe.each(backends())('migration 0033, the versioned rows by address id, on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: converted in place, every body served and every row of the views is the same, a gone address included', async () => {
    database = await oldLayoutDatabase(backend);
    await migrate(database.db, BEFORE_0033, { copyFacts: { batchTransfers: 50 } });
    expect(mismatches((await serveAll(database.db)).served)).toEqual([]);
    await addRowsOfAGoneAddress(database.db);
    const { rows: gone } = await sql<{ n: number }>`
      select count(*)::int4 as n from addresses where address = decode(${GONE.slice(2)}, 'hex')`.execute(database.db);
    expect(gone[0]!.n).toBe(0);
    const before = { served: (await serveAll(database.db)).served, views: await viewRows(database.db) };
    // (not an empty comparison: each view has rows, the gone address's among them)
    for (const kind of ['sp|', 'p|', 'sd|']) expect(before.views.some((l) => l.startsWith(kind))).toBe(true);
    expect(before.views.filter((l) => l.includes(GONE))).toHaveLength(2);

    expect(await migrate(database.db)).toEqual(ALL.filter((m) => m.version >= 33).map((m) => m.version));

    expect(await viewRows(database.db)).toEqual(before.views);
    expect((await serveAll(database.db)).served).toEqual(before.served);
    // the tables hold ids and bytes now, and the gone address has an addresses row again
    const { rows } = await sql<{ text: string; sha: string }>`
      select '0x' || encode(a.address, 'hex') as text, encode(h.sha256, 'hex') as sha
        from part_seller_hours h join addresses a on a.address_id = h.seller_id
       where a.address = decode(${GONE.slice(2)}, 'hex')`.execute(database.db);
    expect(rows).toEqual([{ text: GONE, sha: hex('hour') }]);
  });

  it('error: a row whose address is not lowercase hex stops it, and nothing is converted', async () => {
    database = await oldLayoutDatabase(backend);
    await migrate(database.db, BEFORE_0033, { copyFacts: { batchTransfers: 50 } });
    await addRowsOfAGoneAddress(database.db, GONE.toUpperCase().replace('0X', '0x'));
    const views = await viewRows(database.db);
    await expect(migrate(database.db)).rejects.toThrow(/migration 0033: .* not lowercase hex/);
    const { rows } = await sql<{ v: number }>`select max(version)::int4 as v from schema_migrations`.execute(
      database.db,
    );
    expect(rows[0]!.v).toBe(32);
    expect(await viewRows(database.db)).toEqual(views);
  });
});

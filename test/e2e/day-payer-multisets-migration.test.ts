import { sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { forgetDerivedState } from '../../src/method/index.ts';
import { compareGenerationRows, formatDifference, readGenerationRows } from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertFacts3 } from '../helpers/facts3.ts';
import { closeOldLayouts, mismatches, oldLayoutDatabase, serveAll } from '../helpers/old-layout.ts';
import { AS_OF_TS, block } from '../method/fixture.ts';
import { S3S } from '../method/fixture3.ts';
import { compute, loadFixture3 } from '../method/setup.ts';

// Migration 0050: acc_day_payers, one row per (seller, day, payer) with its count n, becomes one row
// per (seller, day) whose payer_ids hold the day's payers ascending, each once per payment.
// Converted in place: from the rows the code before it left, the next run is steady (not cold),
// counts a new payer of a day, and publishes what a from-scratch run publishes.

const ALL = loadMigrations();
const BEFORE_0050 = ALL.filter((m) => m.version < 50);
const UP_TO_0050 = ALL.filter((m) => m.version <= 50);
const NEW_PAYER = `0x${'0d'.repeat(20)}`;

afterAll(closeOldLayouts);

describe.each(backends())('migration 0050, the days’ payers as multisets, on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: the day rows become arrays in place; the next run is steady and equals one from scratch', async () => {
    database = await freshDatabase(backend);
    const { db } = database;
    const { snapshotId } = await loadFixture3(db);
    const g1 = await compute(db, snapshotId, { methodVersion: '3.0.0' });
    // The days' payers with their counts, worked out from the published evidence rows (not from
    // the method's tables): (seller id, day, payer id, payments).
    const { rows: expected } = await sql<{ line: string }>`
      select concat_ws('|', s.address_id, g.block_timestamp / 86400, p.address_id, count(*)) as line
        from generation_payments g
        join addresses s on '0x' || encode(s.address, 'hex') = g.seller_address
        join addresses p on '0x' || encode(p.address, 'hex') = g.payer
       where g.generation = ${g1} and g.in_window
       group by s.address_id, g.block_timestamp / 86400, p.address_id
       order by s.address_id, g.block_timestamp / 86400, p.address_id`.execute(db);
    expect(expected.length).toBeGreaterThan(3); // (not an empty comparison)
    expect(expected.some((r) => !r.line.endsWith('|1'))).toBe(true); // (a payer paying twice a day)
    const arrays = async () =>
      (
        await sql<{ seller_id: number; day: number; payer_ids: number[] }>`
          select seller_id, day, payer_ids from acc_day_payers order by seller_id, day`.execute(db)
      ).rows;
    const arraysBefore = await arrays();

    // The layout the code before 0050 left: the same days as rows with counts.
    await sql`delete from schema_migrations where version = 50`.execute(db);
    await sql`drop table acc_day_payers`.execute(db);
    await sql`create table acc_day_payers (seller_id int4 not null, day int4 not null, payer_id int4 not null,
                                           n int4 not null, primary key (seller_id, day, payer_id))`.execute(db);
    const rowsBefore = expected.map((r) => r.line.split('|').map(Number));
    for (const [s, d, p, n] of rowsBefore)
      await sql`insert into acc_day_payers values (${s}, ${d}, ${p}, ${n})`.execute(db);
    const file = async () =>
      (await sql<{ f: string }>`select pg_relation_filenode('acc_payers')::text as f`.execute(db)).rows[0]!.f;
    const fileBefore = await file();

    // Killed halfway: the migration's statements up to the arrays' insert, in a transaction that
    // dies before its commit, leave the rows as they were, and the migration then runs whole.
    const m50 = ALL.find((m) => m.version === 50)!;
    const half = m50.sql.slice(0, m50.sql.indexOf('drop table acc_day_payers_rows'));
    expect(half.length).toBeLessThan(m50.sql.length);
    await expect(
      db.transaction().execute(async (trx) => {
        await sql.raw(half).execute(trx);
        throw new Error('killed');
      }),
    ).rejects.toThrow('killed');
    const { rows: after } = await sql<{ line: string }>`
      select concat_ws('|', seller_id, day, payer_id, n) as line from acc_day_payers
       order by seller_id, day, payer_id`.execute(db);
    expect(after.map((r) => r.line)).toEqual(expected.map((r) => r.line));

    expect(await migrate(db)).toEqual([50]);

    // each day's payers, repeated by their counts, ascending: as the method built them
    expect(await arrays()).toEqual(arraysBefore);
    const fromRows = new Map<string, number[]>();
    for (const [s, d, p, n] of rowsBefore) {
      const key = `${s}|${d}`;
      fromRows.set(key, [...(fromRows.get(key) ?? []), ...Array<number>(n!).fill(p!)]);
    }
    expect((await arrays()).map((r) => [`${r.seller_id}|${r.day}`, r.payer_ids])).toEqual(
      [...fromRows.entries()].map(([k, ids]) => [k, ids.sort((a, b) => a - b)]),
    );

    // A payment by a new payer to S4, stored by a later run below the as-of: its day gains a payer.
    const ts = AS_OF_TS - 100n;
    await insertFacts3(db, {
      transfers: [
        {
          tx: `0x${'ed'.repeat(32)}`,
          logIndex: 7,
          block: block(ts),
          ts,
          from: NEW_PAYER,
          to: S3S.S4,
          value: 100n,
          class: 1,
          addedSeq: 2n,
        },
      ],
    });
    const g2 = await compute(db, snapshotId, { methodVersion: '3.0.0', runSeq: 2n });
    expect(await file()).toBe(fileBefore); // steady: a cold run truncates, which gives a new file
    const days = async (g: number) =>
      (
        await sql<{ day_start: string; payers: number }>`
          select d.day::text as day_start, d.payers from gen_seller_daily d
           where d.generation = ${g} and d.seller_address = ${S3S.S4} order by d.day`.execute(db)
      ).rows;
    const [d1, d2] = [await days(g1), await days(g2)];
    const today = new Date(Number(ts) * 1000).toISOString().slice(0, 10);
    const was = d1.find((r) => r.day_start === today)?.payers ?? 0;
    expect(d2.find((r) => r.day_start === today)!.payers).toBe(was + 1);

    await forgetDerivedState(db);
    const g3 = await compute(db, snapshotId, { methodVersion: '3.0.0', runSeq: 2n });
    const [a, b] = [await readGenerationRows(db, g2), await readGenerationRows(db, g3)];
    expect(compareGenerationRows(a, b).map(formatDifference)).toEqual([]);
  });

  it('default: what the API serves of the old layout is the same after it', async () => {
    database = await oldLayoutDatabase(backend);
    await migrate(database.db, BEFORE_0050, { copyFacts: { batchTransfers: 50 } });
    const before = (await serveAll(database.db)).served;
    expect(mismatches(before)).toEqual([]);
    expect(await migrate(database.db, UP_TO_0050)).toEqual([50]);
    expect((await serveAll(database.db)).served).toEqual(before);
    // (and the later migrations keep it so)
    await migrate(database.db);
    expect((await serveAll(database.db)).served).toEqual(before);
  });
});

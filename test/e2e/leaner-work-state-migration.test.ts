import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import type { Schema } from '../../src/db/schema.ts';
import { forgetDerivedState } from '../../src/method/index.ts';
import { compareGenerationRows, formatDifference, readGenerationRows } from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertFacts3 } from '../helpers/facts3.ts';
import { mismatches, oldLayoutDatabase, serveAll } from '../helpers/old-layout.ts';
import { AS_OF_TS, block } from '../method/fixture.ts';
import { S3S } from '../method/fixture3.ts';
import { compute, loadFixture3 } from '../method/setup.ts';

// Migration 0041 (fewer bytes per payment): acc_reason_payers loses its external (reason 0) rows,
// which step 1c now derives from acc_payers, and its count becomes an int4; acc_seller_days' counts
// become int4; the two per-seller coverage tables are copied into tables with half of each page
// free. Converted in place: from a database whose method 3.0.0 state was left by the code before
// it, the next run is steady (not cold) and publishes what a from-scratch run publishes, and the
// rows it keeps are unchanged. And what the API serves of the old layout's fixture is unchanged.

const ALL = loadMigrations();
const BEFORE_0041 = ALL.filter((m) => m.version < 41);
const NEW_PAYER = `0x${'0e'.repeat(20)}`;

/** Rows of the tables 0041 converts that it must keep as they were, as text in one order. */
async function keptRows(db: Kysely<Schema>) {
  const { rows } = await sql<{ line: string }>`
    select line
      from (select concat_ws('|', 'r', seller_id, reason, payer_id, n) as line from acc_reason_payers
            union all
            select concat_ws('|', 'rs', seller_id, reason, payers) from acc_reason_sellers
            union all
            select concat_ws('|', 'd', seller_id, day_start, payments, payers, revenue) from acc_seller_days
            union all
            select concat_ws('|', 'c', seller_address, from_block, from_ts, to_block) from seller_coverage
            union all
            select concat_ws('|', 'o', seller_address, from_block, from_ts, to_block) from seller_outgoing_coverage
            union all
            select concat_ws('|', 's', checked_seq, window_start_ts, as_of_ts, as_of_block, payment_set) from acc_state) x
     order by line collate "C"`.execute(db);
  return rows.map((r) => r.line);
}

describe.each(backends())('migration 0041, leaner work state, on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: 3.0.0 state converted in place; the next run is steady and equals one from scratch', async () => {
    database = await freshDatabase(backend, { migrate: false });
    const { db } = database;
    await migrate(db, BEFORE_0041);
    // Today's method SQL needs the layout of the migrations after 0041 (0042's and 0046's
    // acc_sellers columns, 0044's line days, ...), none of which depends on 0041: they are applied
    // first, out of order, so that migrate() below applies 0041 to the state the code before it
    // left. (A later migration that does depend on 0041 makes this test fail.) 0045 is the
    // exception, so that its conversion is tested too: its arrays of the market days' sets are
    // added by hand for the first run and, before migrating, moved into the tables the code
    // before 0045 kept them in.
    await migrate(
      db,
      ALL.filter((m) => m.version > 41 && m.version !== 45),
    );
    await sql`alter table acc_market_days add column payer_ids int4[], add column seller_ids int4[]`.execute(db);
    const { snapshotId } = await loadFixture3(db);
    await sql`insert into seller_outgoing_coverage (seller_address, from_block, from_ts, to_block)
              select seller_address, from_block, from_ts, to_block from seller_coverage`.execute(db);
    const g1 = await compute(db, snapshotId, { methodVersion: '3.0.0' });
    // The code before 0041 also kept one external (reason 0) row per (seller, payer) with an
    // external payment in the window: here from the published evidence rows, not from the method's
    // tables. By hand (method3.test.ts): S1 has 8 external payers, S2 2, S3 none, S4 4.
    await sql`
      insert into acc_reason_payers (seller_id, reason, payer_id, n)
      select s.address_id, 0, p.address_id, count(*)
        from generation_payments g
        join addresses s on '0x' || encode(s.address, 'hex') = g.seller_address
        join addresses p on '0x' || encode(p.address, 'hex') = g.payer
       where g.generation = ${g1} and g.in_window and g.internal_reason is null
       group by 1, 3`.execute(db);
    const { rows: external } = await sql<{ n: number }>`
      select count(*)::int4 as n from acc_reason_payers where reason = 0`.execute(db);
    expect(external[0]!.n).toBe(8 + 2 + 4);
    const before = await keptRows(db);
    const marketSets = async () =>
      (
        await sql<{ day_start: string; payer_ids: number[]; seller_ids: number[] }>`
          select day_start::text, payer_ids, seller_ids from acc_market_days order by day_start`.execute(db)
      ).rows;
    const setsBefore = await marketSets();
    // (not an empty comparison: the fixture's publishable days have payers)
    expect(setsBefore.some((d) => d.payer_ids.length > 0 && d.seller_ids.length > 0)).toBe(true);
    await sql`insert into acc_market_day_payers (day_start, payer_id)
              select day_start, unnest(payer_ids) from acc_market_days`.execute(db);
    await sql`insert into acc_market_day_sellers (day_start, seller_id)
              select day_start, unnest(seller_ids) from acc_market_days`.execute(db);
    await sql`alter table acc_market_days drop column payer_ids, drop column seller_ids`.execute(db);

    expect(await migrate(db)).toEqual([41, 45]);

    // the external rows went, every other row stayed (acc_state included: the next run is not cold)
    expect(await keptRows(db)).toEqual(before.filter((l) => !/^r\|\d+\|0\|/.test(l)));
    // the market days' sets moved into their arrays (0045), each day's as it was
    expect(await marketSets()).toEqual(setsBefore);
    const { rows: options } = await sql<{ t: string; o: string }>`
      select relname as t, array_to_string(reloptions, ',') as o from pg_class
       where relname in ('seller_coverage', 'seller_outgoing_coverage') and relnamespace = current_schema()::regnamespace
       order by 1`.execute(db);
    expect(options).toEqual([
      { t: 'seller_coverage', o: 'fillfactor=50' },
      { t: 'seller_outgoing_coverage', o: 'fillfactor=50' },
    ]);

    // A payment by a new payer to S4, stored by a later run below the as-of: S4 gains an external payer.
    const ts = AS_OF_TS - 100n;
    await insertFacts3(db, {
      transfers: [
        {
          tx: `0x${'ee'.repeat(32)}`,
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
    // (a cold run truncates the accumulators, which gives a table a new file: a steady one does not)
    const file = async () =>
      (await sql<{ f: string }>`select pg_relation_filenode('acc_payers')::text as f`.execute(db)).rows[0]!.f;
    const fileBefore = await file();
    const g2 = await compute(db, snapshotId, { methodVersion: '3.0.0', runSeq: 2n });
    expect(await file()).toBe(fileBefore);
    const { rows: state } = await sql<{ checked_seq: string }>`select checked_seq::text from acc_state`.execute(db);
    expect(state[0]!.checked_seq).toBe('2');
    const numbers = (g: number) =>
      db
        .selectFrom('gen_sellers')
        .select([
          'seller_address',
          'payers_30d',
          'external_payers_30d',
          'internal_seller_funded_payers_30d',
          'internal_same_operator_payers_30d',
        ])
        .where('generation', '=', g)
        .orderBy('seller_address')
        .execute();
    const [n1, n2] = [await numbers(g1), await numbers(g2)];
    const s4 = (rows: typeof n1) => rows.find((r) => r.seller_address === S3S.S4)!;
    expect(s4(n1).external_payers_30d).toBe(4);
    expect(s4(n2)).toEqual({ ...s4(n1), payers_30d: s4(n1).payers_30d + 1, external_payers_30d: 5 });
    expect(n2.filter((r) => r.seller_address !== S3S.S4)).toEqual(n1.filter((r) => r.seller_address !== S3S.S4));

    await forgetDerivedState(db);
    const g3 = await compute(db, snapshotId, { methodVersion: '3.0.0', runSeq: 2n });
    const [a, b] = [await readGenerationRows(db, g2), await readGenerationRows(db, g3)];
    expect(compareGenerationRows(a, b).map(formatDifference)).toEqual([]);
    expect(await numbers(g3)).toEqual(n2);
  });

  it('default: what the API serves of the old layout is the same after it', async () => {
    database = await oldLayoutDatabase(backend);
    await migrate(database.db, BEFORE_0041, { copyFacts: { batchTransfers: 50 } });
    const before = (await serveAll(database.db)).served;
    expect(mismatches(before)).toEqual([]);
    expect(await migrate(database.db)).toEqual(ALL.filter((m) => m.version >= 41).map((m) => m.version));
    expect((await serveAll(database.db)).served).toEqual(before);
  });
});

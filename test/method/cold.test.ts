import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import { backends, freshDatabase } from '../helpers/db.ts';
import { blockHash, insertCatalog, insertTransfers, type FixtureTransfer } from '../helpers/facts.ts';
import { computeGeneration, DERIVED_TABLES, forgetDerivedState } from '../../src/method/index.ts';
import { compareGenerationRows, formatDifference, readGenerationRows } from '../../src/publish/index.ts';
import { resetHistory } from './setup.ts';
import { PROPERTY_RUNS, PROPERTY_TEST } from '../helpers/property.ts';

/**
 * The bulk cold path (sql/method/01a_window.sql, 2.0.0/01b_digests.sql and 06_seller_daily.sql
 * under `reset`: each derived table filled by one GROUP BY of the window's payments) reaches
 * the state the steady path reaches from nothing, which is how a cold run built it before.
 *
 * "From nothing": accumulators and partials exact for the empty window (0, 0] at seq 0 (a state
 * row saying so, every table empty). From there the steady statements find every seller of the
 * catalog new (acc_sellers is empty), read all of its payments in the window with sign 1 and
 * upsert them, build every closed hour of every seller (part_sellers is empty) and rebuild every
 * seller's kept lines from the partials: the statements and inputs the old cold run used after
 * emptying the tables. Two databases get the same facts; one computes cold (no state, or
 * `forgetDerivedState` after an earlier generation: the truncate path), the other from nothing,
 * and the generations (rows, digests, periods) and the live derived state (every table of
 * DERIVED_TABLES; versioned rows live, without their generation numbers) must be equal.
 */

const T0 = 1_767_225_600n; // 2026-01-01T00:00:00Z
const B0 = 1_000n; // the block at TB
const TB = T0 - 864_000n; // blocks start 10 days before T0
const PER_SECOND = 5n; // post-Denim: five blocks share each timestamp
const WINDOW = 2_592_000n;
const HOUR = 3_600n;
const blockAt = (ts: bigint, k: bigint) => B0 + (ts - TB) * PER_SECOND + k;
const addr = (c: string) => `0x${c.repeat(40)}`;
const SELLERS = [addr('a'), addr('b'), addr('c'), `0x${'1d'.repeat(20)}`];
const PAYERS = [addr('7'), addr('8'), addr('9')];
/** The first as-of: half past the hour, so the window's first and last hours are partial. */
const AS_OF = T0 + WINDOW + 1_800n;
const START = AS_OF - WINDOW;
const FIRST_CLOSED = START - (START % HOUR) + HOUR;

/** Where a payment lies, relative to the first generation's window (START, AS_OF]. */
type Where =
  | 'before_start' // out of both windows
  | 'at_start' // the excluded start
  | 'first_hour' // the partial first period (an edge period)
  | 'first_closed' // the first closed hour: it leaves the window when the as-of moves an hour
  | 'anywhere'
  | 'last_hours' // the last closed hours and the open last period
  | 'at_as_of' // the as-of second, in one of its five blocks (some after the as-of block)
  | 'future';

interface Pay {
  where: Where;
  offset: number;
  k: number;
  seller: number;
  payer: number;
  value: number; // 0: not a payment (rule 2)
  self: boolean; // paid to itself (rule 2)
  plain: boolean; // no AuthorizationUsed (rule 3)
  addedSeq: number; // 1..3; the generations run at seq 2 and 3
  removedSeq: number | null; // a reorg removed it at this seq
}

function timestampOf(p: Pay): bigint {
  const o = BigInt(p.offset);
  switch (p.where) {
    case 'before_start':
      return START - 1n - (o % 7_200n);
    case 'at_start':
      return START;
    case 'first_hour':
      return START + 1n + (o % (FIRST_CLOSED - START - 1n));
    case 'first_closed':
      return FIRST_CLOSED + (o % HOUR);
    case 'anywhere':
      return START + 1n + ((o * 359n) % (WINDOW - 1n));
    case 'last_hours':
      return AS_OF - (o % 7_200n);
    case 'at_as_of':
      return AS_OF;
    case 'future':
      return AS_OF + 1n + (o % 3n);
  }
}

function transfersOf(pays: Pay[]): FixtureTransfer[] {
  return pays.map((p, i) => {
    const ts = timestampOf(p);
    const from = p.self ? SELLERS[p.seller]! : PAYERS[p.payer]!;
    return {
      tx: `0x${(i + 1).toString(16).padStart(64, '0')}`,
      logIndex: 2 + i, // one log index per transfer: a block's logs have distinct indexes ((block_id, log_index) is the key)
      block: blockAt(ts, BigInt(p.k)),
      ts,
      from,
      to: SELLERS[p.seller]!,
      value: BigInt(p.value),
      authorizer: p.plain ? null : from,
      addedSeq: BigInt(p.addedSeq),
      removedSeq: p.removedSeq === null ? null : BigInt(Math.max(p.removedSeq, p.addedSeq + 1)),
    };
  });
}

interface History {
  pays: Pay[];
  catalog: number[]; // indexes into SELLERS
  k: number; // which block of the as-of second is the as-of block
  /** The second generation: how far its as-of lies from the first's (negative: back), and its seq. */
  advance: number;
  seq2: number;
}

const payArb: fc.Arbitrary<Pay> = fc.record({
  where: fc.constantFrom<Where>(
    'before_start',
    'at_start',
    'first_hour',
    'first_hour',
    'first_closed',
    'first_closed',
    'anywhere',
    'anywhere',
    'last_hours',
    'last_hours',
    'at_as_of',
    'future',
  ),
  offset: fc.integer({ min: 0, max: 100_000 }),
  k: fc.integer({ min: 0, max: 4 }),
  seller: fc.integer({ min: 0, max: SELLERS.length - 1 }),
  payer: fc.integer({ min: 0, max: PAYERS.length - 1 }),
  value: fc.constantFrom(0, 1, 5, 100, 100, 250, 999, 1_000_000),
  self: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
  plain: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
  addedSeq: fc.constantFrom(1, 1, 1, 2, 3),
  removedSeq: fc.constantFrom(null, null, null, null, 2, 3),
});

const historyArb: fc.Arbitrary<History> = fc.record({
  pays: fc.array(payArb, { maxLength: 40 }),
  catalog: fc.subarray([0, 1, 2, 3]),
  k: fc.integer({ min: 0, max: 4 }),
  advance: fc.constantFrom(-3_600, 0, 1, 1_799, 1_800, 3_600, 5_400, 86_400),
  seq2: fc.constantFrom(2, 3),
});

/** Accumulators and partials exact for the empty window (0, 0] at seq 0: the next run starts from nothing. */
async function fromNothing(t: TestDatabase) {
  for (const table of DERIVED_TABLES) if (table !== 'catalog_snapshot_sellers') await t.db.deleteFrom(table).execute();
  await t.db
    .insertInto('acc_state')
    .values({ checked_seq: 0n, window_start_ts: 0n, as_of_ts: 0n, as_of_block: 0n })
    .execute();
  await t.db
    .insertInto('part_state')
    .values({ checked_seq: 0n, period_seconds: HOUR, lo: 0n, hi: 0n, sellers_key: '' })
    .execute();
}

/**
 * The live derived state, comparable across databases: every row of every derived table, the
 * versioned ones (gen_to) only live and without gen_from/gen_to, snapshot ids and the market's
 * day-set ids (acc_market_days.set_id, acc_market_summary.set_max: drawn from a sequence) left
 * out (each database numbers its own).
 */
async function derivedState(t: TestDatabase) {
  const state: Record<string, string[]> = {};
  for (const table of DERIVED_TABLES) {
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(t.db)).rows;
    state[table] = rows
      .filter((r) => !('gen_to' in r) || r.gen_to === null)
      .map((r) => {
        // (acc_sellers' median state, migration 0046, is compared too: the cold run fills it from
        // its histogram, the run from nothing by the steady path's whole-histogram sum)
        const { gen_from: _f, gen_to: _t, snapshot_id: _s, set_id: _i, set_max: _m, ...rest } = r;
        return JSON.stringify(rest, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
      })
      .sort();
  }
  return state;
}

async function compute(t: TestDatabase, snapshotId: bigint, asOfTs: bigint, k: bigint, runSeq: bigint) {
  const block = blockAt(asOfTs, k);
  return computeGeneration(t.db, {
    runSeq,
    asOf: { number: block, hash: blockHash(block), timestamp: asOfTs },
    catalogSnapshotId: snapshotId,
    sources: [],
    generatedAt: new Date('2026-03-01T00:00:00Z'),
  });
}

async function expectSame(bulk: TestDatabase, gb: number, old: TestDatabase, go: number, label: string) {
  const [a, b] = [await readGenerationRows(bulk.db, gb), await readGenerationRows(old.db, go)];
  expect(compareGenerationRows(a, b).map(formatDifference), label).toEqual([]);
  expect(a.generation.digests, label).toEqual(b.generation.digests);
  expect(a.periods, label).toEqual(b.periods);
  expect(a.sellerPeriods, label).toEqual(b.sellerPeriods);
  expect(await derivedState(bulk), label).toEqual(await derivedState(old));
  return a;
}

/**
 * One history in both databases: generation 1 at AS_OF (seq 2) from no state in `bulk` and
 * from nothing in `old`; then generation 2 at AS_OF + advance (seq2), in `bulk` cold again after
 * forgetDerivedState (its tables full of generation 1's rows), in `old` from nothing after
 * removing generation 1 and the derived rows. Returns the two generations' rows of `bulk`.
 */
async function runBoth(bulk: TestDatabase, old: TestDatabase, h: History) {
  const transfers = transfersOf(h.pays);
  const snapshots: bigint[] = [];
  for (const t of [bulk, old]) {
    await resetHistory(t.db, SELLERS);
    await insertTransfers(t.db, transfers);
    snapshots.push(
      await insertCatalog(
        t.db,
        h.catalog.map((i) => ({
          listing_id: `${i}`.padStart(64, '0'),
          seller_address: SELLERS[i]!,
          category: 'inference',
        })),
      ),
    );
  }
  const [sb, so] = snapshots as [bigint, bigint];
  const k = BigInt(h.k);
  const asOf2 = AS_OF + BigInt(h.advance);
  const seq2 = BigInt(h.seq2);

  const b1 = await compute(bulk, sb, AS_OF, k, 2n);
  await fromNothing(old);
  const o1 = await compute(old, so, AS_OF, k, 2n);
  const first = await expectSame(bulk, b1, old, o1, 'generation 1');

  await forgetDerivedState(bulk.db);
  const b2 = await compute(bulk, sb, asOf2, 4n - k, seq2);
  await old.db.deleteFrom('generations').execute();
  await fromNothing(old);
  const o2 = await compute(old, so, asOf2, 4n - k, seq2);
  const second = await expectSame(bulk, b2, old, o2, 'generation 2');
  // generation 1 is untouched by the cold run after it (its versioned rows were closed, not changed)
  expect(compareGenerationRows(first, await readGenerationRows(bulk.db, b1)).map(formatDifference)).toEqual([]);
  return { first, second };
}

describe.each(backends())(
  'a cold generation built in bulk equals one built from nothing on $backend',
  ({ backend }) => {
    let bulk: TestDatabase;
    let old: TestDatabase;
    beforeAll(async () => {
      [bulk, old] = await Promise.all([freshDatabase(backend), freshDatabase(backend)]);
    });
    afterAll(async () => Promise.all([bulk?.close(), old?.close()]));

    const pay = (where: Where, seller: number, offset: number, payer = 0, value = 100): Pay => ({
      where,
      offset,
      k: 1,
      seller,
      payer,
      value,
      self: false,
      plain: false,
      addedSeq: 1,
      removedSeq: null,
    });

    it('behavior: edge hours at both ends, and a seller whose payments all left the window', async () => {
      // Seller c is paid only in the partial first hour and the first closed hour: an hour later
      // (generation 2) both have left, c is in the catalog with no payment. Seller a is paid at the
      // excluded start, in the last hours (the open period) and at the as-of second; b everywhere,
      // by three payers, one payment removed by a reorg at seq 2 and one added only at seq 3.
      const { first, second } = await runBoth(bulk, old, {
        pays: [
          pay('first_hour', 2, 10, 0, 250),
          pay('first_closed', 2, 20, 1, 5),
          pay('first_closed', 2, 1_000, 1, 999),
          pay('at_start', 0, 0),
          pay('last_hours', 0, 30),
          pay('last_hours', 0, 1_900, 2),
          { ...pay('at_as_of', 0, 0, 1), k: 0 },
          { ...pay('at_as_of', 0, 0, 2), k: 4 },
          pay('anywhere', 1, 1, 0, 100),
          pay('anywhere', 1, 50_000, 1, 100),
          pay('anywhere', 1, 90_000, 2, 5),
          { ...pay('anywhere', 1, 70_000, 1), removedSeq: 2 },
          { ...pay('anywhere', 1, 80_000, 2), addedSeq: 3 },
          pay('before_start', 1, 5),
          pay('future', 0, 1),
        ],
        catalog: [0, 1, 2],
        k: 2,
        advance: 3_600,
        seq2: 3,
      });
      const seller = (rows: typeof first, s: string) => rows.sellers.find((r) => r.seller_address === s)!;
      // worked out from the list above: c has three payments in the first window, none in the second
      expect(seller(first, SELLERS[2]!).payments_30d).toBe(3);
      expect(seller(second, SELLERS[2]!).payments_30d).toBe(0);
      // b: at seq 2 three payments (360 s, 1,206,013 s and 2,398,007 s after the start; the one
      // removed at seq 2 is gone, the one added at seq 3 not yet there); an hour later at seq 3
      // the first has left and the seq-3 one (208,012 s after the start) has entered: three again
      expect(seller(first, SELLERS[1]!).payments_30d).toBe(3);
      expect(seller(second, SELLERS[1]!).payments_30d).toBe(3);
      // a: two in the last hours, and at the as-of second only the block at or before the as-of
      // block (k = 2: block 0 in, block 4 out); the payment at the excluded start is out, and the
      // one 2 s after the as-of. An hour later both blocks of that second are in, and that one.
      expect(seller(first, SELLERS[0]!).payments_30d).toBe(3);
      expect(seller(second, SELLERS[0]!).payments_30d).toBe(5);
      // the first window's edge periods hold c's first-hour payment and a's last-hour ones
      expect(
        first.sellerPeriods.some(
          (p) => p.seller_address === SELLERS[2]! && BigInt(p.period_start as string) < FIRST_CLOSED,
        ),
      ).toBe(true);
    });

    it('behavior: a cold run refills the work tables in new storage (truncate), a steady run keeps them', async () => {
      // Deleting a 10M-payment window's accumulators row by row takes minutes; truncate gives each
      // table a new file (pg_relation_filenode changes), delete keeps it. The versioned rows
      // (part_seller_hours, part_hours, seller_daily_rows) serve retained generations: kept.
      const work = [
        'acc_sellers',
        'acc_values',
        'acc_payers',
        'acc_day_payers',
        'acc_seller_days',
        'part_sellers',
        'part_seller_digests',
        'part_seller_lines',
      ];
      const kept = ['part_seller_hours', 'part_hours', 'seller_daily_rows'];
      const files = async () =>
        Object.fromEntries(
          await Promise.all(
            [...work, ...kept].map(async (table) => {
              const { rows } = await sql<{
                f: number;
              }>`select pg_relation_filenode(${sql.lit(table)}::regclass)::int as f`.execute(bulk.db);
              return [table, rows[0]!.f] as const;
            }),
          ),
        );
      const { first } = await runBoth(bulk, old, {
        pays: [pay('first_closed', 0, 10), pay('anywhere', 1, 7), pay('last_hours', 2, 4_000, 1)],
        catalog: [0, 1, 2],
        k: 0,
        advance: 0,
        seq2: 2,
      });
      expect(first.sellers.map((r) => r.payments_30d)).toEqual([1, 1, 1]); // (not an empty comparison)
      const snapshot = await bulk.db.selectFrom('catalog_snapshots').select('snapshot_id').executeTakeFirstOrThrow();
      const beforeSteady = await files();
      await compute(bulk, snapshot.snapshot_id, AS_OF + 900n, 0n, 3n);
      expect(await files()).toEqual(beforeSteady);
      await forgetDerivedState(bulk.db);
      await compute(bulk, snapshot.snapshot_id, AS_OF + 1_800n, 0n, 3n);
      const afterCold = await files();
      for (const table of work) expect(afterCold[table], table).not.toBe(beforeSteady[table]);
      for (const table of kept) expect(afterCold[table], table).toBe(beforeSteady[table]);
      // The large ones are filled without their primary key, which the cold run builds again after
      // the insert (01a_window.sql, 3.0.0/01c_reasons.sql): each is back, by name, on its columns.
      const { rows: keys } = await sql<{ tbl: string; name: string; def: string }>`
        select conrelid::regclass::text as tbl, conname as name, pg_get_constraintdef(oid) as def
          from pg_constraint
         where contype = 'p'
           and conrelid = any(array['acc_values', 'acc_payers', 'acc_day_payers', 'acc_seller_days',
                                    'acc_reason_payers']::regclass[])
         order by 1`.execute(bulk.db);
      expect(keys).toEqual([
        { tbl: 'acc_day_payers', name: 'acc_day_payers_pkey', def: 'PRIMARY KEY (seller_id, day)' },
        { tbl: 'acc_payers', name: 'acc_payers_pkey', def: 'PRIMARY KEY (seller_id, payer_id)' },
        { tbl: 'acc_reason_payers', name: 'acc_reason_payers_pkey', def: 'PRIMARY KEY (seller_id, reason, payer_id)' },
        { tbl: 'acc_seller_days', name: 'acc_seller_days_pkey', def: 'PRIMARY KEY (seller_id, day_start)' },
        { tbl: 'acc_values', name: 'acc_values_pkey', def: 'PRIMARY KEY (seller_id, value)' },
      ]);
      // and the next steady run's upserts find them
      await compute(bulk, snapshot.snapshot_id, AS_OF + 2_700n, 0n, 3n);
    });

    it('property: random facts, catalogs and as-of points', PROPERTY_TEST, async () => {
      let histories = 0;
      await fc.assert(
        fc.asyncProperty(historyArb, async (h) => {
          await runBoth(bulk, old, h);
          histories++;
        }),
        { numRuns: PROPERTY_RUNS, endOnFailure: true },
      );
      expect(histories).toBe(PROPERTY_RUNS);
    });
  },
);

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeGeneration } from '../../src/method/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { blockHash, insertCatalog, insertTransfers, type FixtureTransfer } from '../helpers/facts.ts';
import { resetHistory } from './setup.ts';

/**
 * The lower median moved by a steady run (migration 0046, sql/method/01a_window.sql): from the old
 * median up or down through acc_values, with the stored histogram count and count below it. One
 * seller, one payment per block, runs a minute or two apart; payments enter at the as-of and leave
 * at the window's start. Every expected median is worked out by hand from the window's values
 * (n values sorted ascending: the one at position ceil(n/2)), every stored count by counting them.
 */

const T0 = 1_767_225_600n; // 2026-01-01T00:00:00Z
const B0 = 1_000n;
const TB = T0 - 3_000_000n; // blocks start before any window start used here
const WINDOW = 2_592_000n;
const blockAt = (ts: bigint) => B0 + (ts - TB) * 5n; // post-Denim: five blocks a second, k = 0
const SELLER = `0x${'a'.repeat(40)}`;
const PAYER = `0x${'7'.repeat(40)}`;
const A1 = T0 + WINDOW; // the first run's as-of

describe.each(backends())('the lower median moved by steady runs on $backend', ({ backend }) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(backend);
  });
  afterAll(async () => t?.close());

  it('behavior: up, down across two values, up again, emptied, then from empty (hand-worked)', async () => {
    await resetHistory(t.db, [SELLER]);
    const snapshotId = await insertCatalog(t.db, [
      { listing_id: '0'.padStart(64, '0'), seller_address: SELLER, category: 'inference' },
    ]);
    let tx = 0;
    let seq = 0n;
    const run = async (asOfTs: bigint, pays: [ts: bigint, value: number][]) => {
      seq++;
      const transfers: FixtureTransfer[] = pays.map(([ts, value]) => {
        tx++;
        return {
          tx: `0x${tx.toString(16).padStart(64, '0')}`,
          logIndex: 2 + tx,
          block: blockAt(ts),
          ts,
          from: PAYER,
          to: SELLER,
          value: BigInt(value),
          authorizer: PAYER,
          addedSeq: seq,
        };
      });
      await insertTransfers(t.db, transfers);
      const asOfBlock = blockAt(asOfTs);
      const generation = await computeGeneration(t.db, {
        runSeq: seq,
        asOf: { number: asOfBlock, hash: blockHash(asOfBlock), timestamp: asOfTs },
        catalogSnapshotId: snapshotId,
        sources: [],
        generatedAt: new Date('2026-03-01T00:00:00Z'),
        methodVersion: '2.0.0',
      });
      const { rows } = await sql<{ median: string | null; requests: string | null; below: string | null }>`
        select median::text as median, request_payments::text as requests, below_median::text as below
          from acc_sellers`.execute(t.db);
      const published = await t.db
        .selectFrom('gen_sellers')
        .select(['median_payment_30d_micro as median'])
        .where('generation', '=', generation)
        .execute();
      expect(published.map((r) => (r.median === null ? null : String(r.median)))).toEqual([rows[0]!.median]);
      return rows[0];
    };
    const start = A1 - WINDOW; // the first window is (start, A1]

    // Cold: 100, 200, 500, 500: the 2nd, 200; the cold run fills the state: 4 counted, one (100) below.
    expect(
      await run(A1, [
        [start + 100n, 500],
        [start + 200n, 500],
        [A1 - 1_000n, 100],
        [A1 - 900n, 200],
      ]),
    ).toEqual({ median: '200', requests: '4', below: '1' });
    // +300: 100, 200, [300], 500, 500: up from 200; 2 values below 300.
    expect(await run(A1 + 60n, [[A1 + 30n, 300]])).toEqual({ median: '300', requests: '5', below: '2' });
    // The first 500 leaves (start + 100 <= A1 + 150 - WINDOW), 50 and 60 enter:
    // 50, 60, [100], 200, 300, 500: the 3rd, 100, two values below the old median 300 (down).
    expect(
      await run(A1 + 150n, [
        [A1 + 100n, 50],
        [A1 + 110n, 60],
      ]),
    ).toEqual({ median: '100', requests: '6', below: '2' });
    // The other 500 leaves, 700, 800, 900 enter: 50, 60, 100, [200], 300, 700, 800, 900: the 4th (up).
    expect(
      await run(A1 + 250n, [
        [A1 + 200n, 700],
        [A1 + 210n, 800],
        [A1 + 220n, 900],
      ]),
    ).toEqual({ median: '200', requests: '8', below: '3' });
    // Nothing enters; 31 days later every payment has left: no median, nothing counted.
    expect(await run(A1 + 250n + 31n * 86_400n, [])).toEqual({ median: null, requests: '0', below: '0' });
    // One payment of 42 then three of 7: 42 alone, then 7, [7], 7, 42 (from no median, then down).
    const A2 = A1 + 250n + 31n * 86_400n;
    expect(await run(A2 + 60n, [[A2 + 30n, 42]])).toEqual({ median: '42', requests: '1', below: '0' });
    expect(
      await run(A2 + 120n, [
        [A2 + 90n, 7],
        [A2 + 91n, 7],
        [A2 + 92n, 7],
      ]),
    ).toEqual({ median: '7', requests: '4', below: '0' });
    // The state unknown, as migration 0046 leaves every row (request_payments and below_median
    // null): the next run computes the median from the whole histogram and stores the state again.
    // 30, 40, 50 enter: 7, 7, 7, [30], 40, 42, 50: the 4th, 30, three values below it.
    await sql`update acc_sellers set request_payments = null, below_median = null`.execute(t.db);
    expect(
      await run(A2 + 180n, [
        [A2 + 150n, 30],
        [A2 + 151n, 40],
        [A2 + 152n, 50],
      ]),
    ).toEqual({ median: '30', requests: '7', below: '3' });
  });
});

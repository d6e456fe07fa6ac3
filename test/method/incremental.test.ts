import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeGeneration, DERIVED_TABLES, forgetDerivedState } from '../../src/method/index.ts';
import { compareGenerationRows, formatDifference, readGenerationRows } from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { writeFactRows } from '../../src/db/load-facts.ts';
import { blockHash, insertCatalog, insertTransfers, type FixtureTransfer } from '../helpers/facts.ts';
import { misnumberedSellers } from '../helpers/seller-numbers.ts';
import { outputsOf0038 } from './fixture-groups.ts';
import { resetHistory } from './setup.ts';
import { PROPERTY_RUNS, PROPERTY_TEST } from '../helpers/property.ts';

/**
 * Property: an incremental generation (method 2.0.0 reusing the hour partials of earlier runs)
 * has exactly the rows and digests of a from-scratch computation over the same facts, after any
 * history of runs: new blocks, backfills near the window start, reorgs below the as-of block
 * (some of whose removed logs come back as new rows: a chain that flips back),
 * sellers added to and removed from the catalog, runs killed between steps, as-of points moving
 * across hour and UTC-day boundaries, and post-Denim blocks (five per second) sharing the
 * as-of timestamp. PROPERTY_RUNS sets the number of histories (default 10 per backend).
 */

const T0 = 1_767_225_600n; // 2026-01-01T00:00:00Z
const B0 = 1_000n; // the block at TB
const TB = T0 - 864_000n; // blocks start 10 days before T0, before any window start used here
const PER_SECOND = 5n; // post-Denim: 200 ms blocks, five blocks share each timestamp
const WINDOW = 2_592_000n;
const tsOf = (block: bigint) => TB + (block - B0) / PER_SECOND;
const blockAt = (ts: bigint, k: bigint) => B0 + (ts - TB) * PER_SECOND + k;
const addr = (c: string) => `0x${c.repeat(40)}`;
const SELLERS = [addr('a'), addr('b'), addr('c'), `0x${'1d'.repeat(20)}`];
const PAYERS = [addr('7'), addr('8'), addr('9')];

type Where = 'recent' | 'future' | 'window_start' | 'at_start' | 'at_as_of' | 'anywhere';
interface Pay {
  where: Where;
  offset: number;
  k: number;
  seller: number;
  payer: number;
  value: number;
  plain: boolean;
}
interface Step {
  advance: number; // seconds the as-of moves forward
  k: number; // which of the five blocks of that second is the as-of block
  pays: Pay[];
  reorgBack: number | null; // seconds below the as-of where a reorg forks (facts above it removed)
  toggleSeller: number | null;
  kill: string | null;
}

/** `arb` in `weight` of `weight + nil` cases, else null. */
const sometimes = <T>(arb: fc.Arbitrary<T>, weight: number, nil: number): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: fc.constant(null), weight: nil }, { arbitrary: arb, weight });

const payArb: fc.Arbitrary<Pay> = fc.record({
  where: fc.constantFrom<Where>('recent', 'recent', 'future', 'window_start', 'at_start', 'at_as_of', 'anywhere'),
  offset: fc.integer({ min: 0, max: 7_200 }),
  k: fc.integer({ min: 0, max: 4 }),
  seller: fc.integer({ min: 0, max: SELLERS.length - 1 }),
  payer: fc.integer({ min: 0, max: PAYERS.length - 1 }),
  value: fc.constantFrom(1, 5, 100, 100, 250, 999),
  plain: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
});
const stepArb: fc.Arbitrary<Step> = fc.record({
  advance: fc.constantFrom(0, 1, 7, 600, 900, 3_599, 3_600, 5_400, 86_400, 90_000),
  k: fc.integer({ min: 0, max: 4 }),
  pays: fc.array(payArb, { maxLength: 6 }),
  reorgBack: sometimes(fc.constantFrom(0, 30, 3_600, 7_200), 1, 3),
  toggleSeller: sometimes(fc.integer({ min: 0, max: SELLERS.length - 1 }), 1, 3),
  kill: sometimes(fc.constantFrom('inputs', 'digests', 'sellers', 'market_daily'), 1, 5),
});

/**
 * Derived rows compared row for row: accumulators (the top payer's sum reaches a published row only
 * through a threshold), and the digests' kept lines (migration 0044: the sellers' day rows, cut and
 * appended to, and the edge lines, moved with the window) with those a computation from nothing
 * reads whole.
 */
const ACCUMULATORS = ['acc_sellers', 'acc_payers', 'acc_day_payers', 'part_seller_lines', 'part_edge_lines'] as const;
// (acc_sellers' median state, migration 0046, is null after a from-scratch run: checked by medianStateErrors)
const MEDIAN_STATE = new Set(['request_payments', 'below_median']);
const sortedRows = (rows: unknown[]) =>
  rows
    .map((r) =>
      JSON.stringify(r, (k, v: unknown) =>
        MEDIAN_STATE.has(k) ? undefined : typeof v === 'bigint' ? v.toString() : v,
      ),
    )
    .sort();

/** acc_sellers rows whose median state is not the histogram's count and its count below the median. */
let medianStatesKnown = 0; // rows with a known state seen by medianStateErrors (not a vacuous check)
async function medianStateErrors(t: TestDatabase) {
  const { rows } = await sql<{ seller_id: number; ok: boolean }>`
    select a.seller_id,
           a.request_payments = (select coalesce(sum(v.n), 0) from acc_values v where v.seller_id = a.seller_id)
             and a.below_median = (select coalesce(sum(v.n), 0) from acc_values v
                                    where v.seller_id = a.seller_id and v.value < a.median) as ok
      from acc_sellers a
     where a.request_payments is not null`.execute(t.db);
  medianStatesKnown += rows.length;
  return rows.filter((r) => !r.ok);
}

/**
 * Computes from scratch (forgetDerivedState: the run rebuilds every derived table from the
 * facts), reads both generations and both sets of accumulators, then puts the incremental derived
 * tables (DERIVED_TABLES) back exactly as they were, so the next run continues the incremental chain.
 */
async function fromScratch(t: TestDatabase, incremental: number, compute: () => Promise<number>) {
  const saved = await Promise.all(DERIVED_TABLES.map((p) => t.db.selectFrom(p).selectAll().execute()));
  await forgetDerivedState(t.db);
  const scratch = await compute();
  const rows = [await readGenerationRows(t.db, incremental), await readGenerationRows(t.db, scratch)] as const;
  const accumulators = {
    incremental: ACCUMULATORS.map((p) => sortedRows(saved[DERIVED_TABLES.indexOf(p)]!)),
    scratch: await Promise.all(
      ACCUMULATORS.map(async (p) => sortedRows(await t.db.selectFrom(p).selectAll().execute())),
    ),
  };
  for (const p of DERIVED_TABLES) await t.db.deleteFrom(p).execute();
  for (const [i, p] of DERIVED_TABLES.entries())
    if (saved[i]!.length > 0)
      await t.db
        .insertInto(p)
        .values(saved[i] as never)
        .execute();
  return [...rows, accumulators] as const;
}

/** Each seller's kept lines (part_seller_lines: one row per seller and UTC day, migration 0044), as sorted strings. */
async function keptLines(t: TestDatabase) {
  const rows = await t.db.selectFrom('part_seller_lines').selectAll().execute();
  return rows.map((r) => `${r.seller_id} ${r.day_start} ${r.lines}`).sort();
}

/**
 * The same rows made here from the live hour partials, independently of the step's cut and
 * append: per seller and UTC day, `hour_start:payments:sha256\n` of each live hour in hour order.
 */
async function linesOfLiveHours(t: TestDatabase) {
  const hours = await t.db
    .selectFrom('part_seller_hours')
    .selectAll()
    .where('gen_to', 'is', null)
    .orderBy('seller_id')
    .orderBy('hour_start')
    .execute();
  const days = new Map<string, string>();
  for (const h of hours) {
    const hour = BigInt(h.hour_start);
    const key = `${h.seller_id} ${hour - (hour % 86_400n)}`;
    days.set(key, `${days.get(key) ?? ''}${hour}:${h.payments}:${Buffer.from(h.sha256).toString('hex')}\n`);
  }
  return [...days].map(([key, lines]) => `${key} ${lines}`).sort();
}

async function runHistory(t: TestDatabase, steps: Step[]) {
  await resetHistory(t.db, SELLERS);
  let seq = 0n;
  let tx = 0;
  let asOfTs = T0 + WINDOW + 1_800n;
  let catalog = new Set([0, 1, 2]);
  let snapshotId: bigint | null = null;
  let reused = 0;
  const published = new Map<number, Awaited<ReturnType<typeof readGenerationRows>>>();
  for (const step of steps) {
    seq++;
    asOfTs += BigInt(step.advance);
    const asOfBlock = blockAt(asOfTs, BigInt(step.k));
    if (step.reorgBack !== null) {
      const fork = blockAt(asOfTs - BigInt(step.reorgBack), 0n);
      await sql`update blocks set removed_seq = ${seq} where removed_seq is null and block_id >= ${fork}::int8 * 1048576`.execute(
        t.db,
      );
      if (step.k % 2 === 0) {
        // the chain flips back: the removed logs of every other block are live again (new block versions)
        const back = await t.db
          .selectFrom('transfer_facts')
          .selectAll()
          .where('removed_seq', '=', seq)
          .where(sql<boolean>`block_number % 2 = 0`)
          .execute();
        await writeFactRows(
          t.db,
          back.map((r) => ({
            tx: r.tx_hash,
            logIndex: r.log_index,
            blockHash: r.block_hash,
            block: BigInt(r.block_number),
            ts: BigInt(r.block_timestamp),
            from: r.from_address,
            to: r.to_address,
            value: BigInt(r.value),
            addedSeq: seq,
            removedSeq: null,
            authorized: r.authorized,
          })),
        );
      }
    }
    const transfers: FixtureTransfer[] = step.pays.map((p) => {
      const start = asOfTs - WINDOW;
      const ts = {
        recent: asOfTs - BigInt(p.offset),
        future: asOfTs + BigInt(p.offset % 3),
        window_start: start + BigInt(p.offset) - 3_600n,
        at_start: start,
        at_as_of: asOfTs,
        anywhere: start + ((BigInt(p.offset) * 359n) % WINDOW),
      }[p.where];
      const from = PAYERS[p.payer]!;
      tx++;
      return {
        tx: `0x${tx.toString(16).padStart(64, '0')}`,
        logIndex: 2 + tx, // one log index per transfer: a block's logs have distinct indexes
        block: blockAt(ts, BigInt(p.k)),
        ts,
        from,
        to: SELLERS[p.seller]!,
        value: BigInt(p.value),
        authorizer: p.plain ? null : from,
        addedSeq: seq,
      };
    });
    for (const tr of transfers) expect(tsOf(tr.block)).toBe(tr.ts);
    await insertTransfers(t.db, transfers);
    if (step.toggleSeller !== null || snapshotId === null) {
      if (step.toggleSeller !== null) {
        catalog = new Set(catalog);
        if (catalog.has(step.toggleSeller)) catalog.delete(step.toggleSeller);
        else catalog.add(step.toggleSeller);
      }
      snapshotId = await insertCatalog(
        t.db,
        [...catalog].sort().map((i) => ({
          listing_id: `${i}`.padStart(64, '0'),
          seller_address: SELLERS[i]!,
          category: 'inference',
        })),
      );
    }
    const compute = (afterStep?: (s: string) => void) =>
      computeGeneration(t.db, {
        runSeq: seq,
        asOf: { number: asOfBlock, hash: blockHash(asOfBlock), timestamp: asOfTs },
        catalogSnapshotId: snapshotId!,
        sources: [],
        generatedAt: new Date('2026-03-01T00:00:00Z'),
        // 2.0.0's incremental path, kept computable for operators who stay on it (3.0.0's:
        // incremental3.test.ts)
        methodVersion: '2.0.0',
        ...(afterStep ? { afterStep } : {}),
      });
    if (step.kill !== null) {
      const kill = step.kill;
      await expect(
        compute((s) => {
          if (s === kill) throw new Error(`killed after ${kill}`);
        }),
      ).rejects.toThrow('killed');
      continue;
    }
    const before = await t.db.selectFrom('part_state').select('checked_seq').executeTakeFirst();
    if (before) reused++;
    const incremental = await compute();
    // the kept lines are exactly the live hours' (cut, appended to or rebuilt, day row by day row)
    expect(await keptLines(t), `run ${seq}`).toEqual(await linesOfLiveHours(t));
    expect(await medianStateErrors(t), `run ${seq}`).toEqual([]);
    const [a, b, accumulators] = await fromScratch(t, incremental, () => compute());
    expect(compareGenerationRows(a, b).map(formatDifference), `run ${seq}`).toEqual([]);
    // (top_sum among them: a steady run looks a top payer up only when one with the top sum fell)
    expect(accumulators.incremental, `run ${seq}`).toEqual(accumulators.scratch);
    expect(a.generation.digests).toEqual(b.generation.digests);
    expect(a.periods).toEqual(b.periods);
    expect(a.sellerPeriods).toEqual(b.sellerPeriods);
    // the directory's seller numbers (migration 0043; not in the bundle): in address order
    expect(await misnumberedSellers(t.db, incremental), `run ${seq}`).toEqual([]);
    // the market summary (migration 0038; not in the bundle): equal too
    expect(await outputsOf0038(t.db, incremental), `run ${seq}`).toEqual(
      await outputsOf0038(t.db, b.generation.generation),
    );
    published.set(incremental, a);
  }
  // The rows of every earlier generation are unchanged by the later runs (partials are versioned).
  for (const [g, rows] of published) {
    expect(
      compareGenerationRows(rows, await readGenerationRows(t.db, g)).map(formatDifference),
      `generation ${g} later`,
    ).toEqual([]);
  }
  return {
    reused,
    generations: await t.db
      .selectFrom('generations')
      .select('generation')
      .execute()
      .then((r) => r.length),
  };
}

describe.each(backends())('incremental generations equal from-scratch ones on $backend', ({ backend }) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(backend);
  });
  afterAll(async () => t?.close());

  it('behavior: a fixed history: slide by an hour, a reorg below the as-of, a new seller, a killed run', async () => {
    const pay = (where: Where, seller: number, offset = 60): Pay => ({
      where,
      offset,
      k: 1,
      seller,
      payer: offset % 3,
      value: 100,
      plain: false,
    });
    const result = await runHistory(t, [
      {
        advance: 0,
        k: 0,
        pays: [pay('recent', 0, 4_000), pay('window_start', 1, 30), pay('at_as_of', 0), pay('anywhere', 2, 5)],
        reorgBack: null,
        toggleSeller: null,
        kill: null,
      },
      {
        advance: 3_600,
        k: 4,
        pays: [pay('recent', 0, 10), pay('future', 1, 1)],
        reorgBack: null,
        toggleSeller: null,
        kill: null,
      },
      { advance: 900, k: 2, pays: [pay('recent', 1, 5_000)], reorgBack: 7_200, toggleSeller: 3, kill: null },
      { advance: 900, k: 0, pays: [pay('recent', 3, 3_000)], reorgBack: null, toggleSeller: null, kill: 'digests' },
      { advance: 86_400, k: 3, pays: [pay('window_start', 2, 7_000)], reorgBack: null, toggleSeller: 0, kill: null },
    ]);
    // four runs computed twice (the killed one left nothing); every run after the first reused partials
    expect(result).toEqual({ reused: 3, generations: 8 });
    const last = await t.db
      .selectFrom('gen_sellers')
      .select(['seller_address', 'payments_30d'])
      .where('generation', '=', 8)
      .orderBy('seller_address')
      .execute();
    expect(last.reduce((n, r) => n + r.payments_30d, 0)).toBeGreaterThan(0); // not a vacuous comparison
    expect((await t.db.selectFrom('part_seller_hours').selectAll().execute()).length).toBeGreaterThan(0);
  });

  it('behavior: a catalog seller no transfer names yet has no address id: unpaid, then counted from its first payment', async () => {
    // The work state is keyed by address ids (migration 0028); step 1 resolves each catalog seller
    // to its id: null for b and c in run 1 (only a and the payer have addresses rows). In run 2, a
    // steady run, b's first payments are stored: b gets an id and enters the accumulators and
    // partials as a seller new to them. c never gets one.
    const pay = (where: Where, seller: number, offset: number): Pay => ({
      where,
      offset,
      k: 1,
      seller,
      payer: 1,
      value: 250,
      plain: false,
    });
    const quiet = { reorgBack: null, toggleSeller: null, kill: null };
    const result = await runHistory(t, [
      { advance: 0, k: 0, pays: [pay('recent', 0, 600)], ...quiet },
      { advance: 900, k: 0, pays: [pay('recent', 1, 300), pay('recent', 1, 200)], ...quiet },
    ]);
    expect(result).toEqual({ reused: 1, generations: 4 });
    const known = await t.db
      .selectFrom('addresses')
      .select(sql<string>`'0x' || encode(address, 'hex')`.as('text'))
      .execute();
    expect(known.map((r) => r.text).sort()).toEqual([SELLERS[0]!, SELLERS[1]!, PAYERS[1]!].sort());
    // the incremental generation of each run (each run is computed again from scratch after it)
    const [run1, , run2] = (
      await t.db.selectFrom('generations').select('generation').orderBy('generation').execute()
    ).map((r) => r.generation);
    const sellersOf = async (generation: number) =>
      (
        await t.db
          .selectFrom('gen_sellers')
          .select(['seller_address', 'payments_30d', 'payers_30d', 'evidence_sha256'])
          .where('generation', '=', generation)
          .orderBy('seller_address')
          .execute()
      ).map((r) => [r.seller_address, r.payments_30d, r.payers_30d, r.evidence_sha256]);
    const [a1, b1, c1] = await sellersOf(run1!);
    const [a2, b2, c2] = await sellersOf(run2!);
    expect([a1, b1, c1].map((r) => r!.slice(0, 3))).toEqual([
      [SELLERS[0], 1, 1],
      [SELLERS[1], 0, 0],
      [SELLERS[2], 0, 0],
    ]);
    expect([a2, b2, c2].map((r) => r!.slice(0, 3))).toEqual([
      [SELLERS[0], 1, 1],
      [SELLERS[1], 2, 1],
      [SELLERS[2], 0, 0],
    ]);
    // the evidence: an unpaid seller's is an unpaid seller's; b's changed with its payments
    expect(b1![3]).toBe(c1![3]);
    expect(c2![3]).toBe(c1![3]);
    expect(b2![3]).not.toBe(b1![3]);
    expect(a2![3]).toBe(a1![3]);
  });

  it('behavior: a seller listed after its payments: its closed hours and its counts change in the run that lists it', async () => {
    // Run 1: seller 3 (not in the catalog) is paid three times, in hours that are closed by then;
    // run 2 lists it and adds no payment. Its payments reach the run through the steps' "sellers
    // new to the catalog" statements (m_delta in 01a_window.sql, m_changed_hours in the digests),
    // not through changed facts: runHistory checks run 2 against a from-scratch computation.
    const pay = (where: Where, seller: number, offset: number): Pay => ({
      where,
      offset,
      k: 2,
      seller,
      payer: offset % 3,
      value: 100,
      plain: false,
    });
    const quiet = { reorgBack: null, kill: null };
    const result = await runHistory(t, [
      {
        advance: 0,
        k: 0,
        pays: [pay('anywhere', 3, 100), pay('anywhere', 3, 5_000), pay('recent', 3, 4_000), pay('recent', 0, 10)],
        toggleSeller: null,
        ...quiet,
      },
      { advance: 600, k: 0, pays: [], toggleSeller: 3, ...quiet },
    ]);
    expect(result).toEqual({ reused: 1, generations: 4 });
    const [run1, , run2] = (
      await t.db.selectFrom('generations').select('generation').orderBy('generation').execute()
    ).map((r) => r.generation);
    const paymentsOf3 = async (generation: number) =>
      (
        await t.db
          .selectFrom('gen_sellers')
          .select('payments_30d')
          .where('generation', '=', generation)
          .where('seller_address', '=', SELLERS[3]!)
          .executeTakeFirst()
      )?.payments_30d;
    expect(await paymentsOf3(run1!)).toBeUndefined(); // not listed
    expect(await paymentsOf3(run2!)).toBe(3); // the three payments above, all inside the window
  });

  it('behavior: hours leave the window at its start and close at its end (the kept lines are cut and appended to)', async () => {
    // The first as-of is T0 + 30 days + 1,800 s, so the window starts at T0 + 1,800 and its first
    // closed hour is [T0 + 3,600, T0 + 7,200). Seller c is paid in that hour (window_start, offset
    // 7,200: at T0 + 5,400) and ten hours later (anywhere, offset 100: 35,900 s after the start).
    const pay = (where: Where, seller: number, offset: number): Pay => ({
      where,
      offset,
      k: 1,
      seller,
      payer: 1,
      value: 100,
      plain: false,
    });
    const quiet = { reorgBack: null, toggleSeller: null, kill: null };
    const result = await runHistory(t, [
      { advance: 0, k: 0, pays: [pay('window_start', 2, 7_200), pay('anywhere', 2, 100)], ...quiet },
      // a is paid 30 min before the as-of: in the open hour, an edge period; b 10 min before
      { advance: 0, k: 1, pays: [pay('recent', 0, 1_800), pay('recent', 1, 600)], ...quiet },
      // An hour later the window starts at T0 + 5,400: c's first hour is the partial first period
      // and its payment (at the excluded start) is out, so its line is cut; a's hour has closed
      // at the end, so its line is appended. b gets a payment 20 days before its first one (a
      // backfill): nothing of b left, yet its first payment is the new one.
      { advance: 3_600, k: 2, pays: [pay('anywhere', 1, 100)], ...quiet },
    ]);
    expect(result).toEqual({ reused: 2, generations: 6 });
    // (the lines are kept by the seller's address id, migration 0028: its text from addresses; one
    // row per UTC day, migration 0044, read here as the one text the digest hashes)
    const { rows: lines } = await sql<{ seller_address: string; lines: string }>`
      select '0x' || encode(a.address, 'hex') as seller_address, string_agg(l.lines, '' order by l.day_start) as lines
        from part_seller_lines l join addresses a on a.address_id = l.seller_id
       group by a.address`.execute(t.db);
    const of = (seller: string) =>
      lines
        .find((l) => l.seller_address === seller)
        ?.lines.split('\n')
        .filter(Boolean);
    // c: only its hour ten hours in is a closed hour now; a: the hour of its payment has closed
    expect(of(SELLERS[2]!)).toEqual([
      expect.stringMatching(new RegExp(`^${T0 + 1_800n + 35_900n - ((1_800n + 35_900n) % 3_600n)}:1:[0-9a-f]{64}$`)),
    ]);
    expect(of(SELLERS[0]!)).toHaveLength(1);
  });

  it('property: random histories of runs', PROPERTY_TEST, async () => {
    let histories = 0;
    let computed = 0;
    medianStatesKnown = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 2, maxLength: 5 }), async (steps) => {
        const { generations } = await runHistory(t, steps);
        histories++;
        computed += generations;
      }),
      { numRuns: PROPERTY_RUNS, endOnFailure: true },
    );
    expect(histories).toBe(PROPERTY_RUNS);
    expect(computed).toBeGreaterThan(0);
    expect(medianStatesKnown).toBeGreaterThan(0); // steady runs moved medians from a stored state
  });
});

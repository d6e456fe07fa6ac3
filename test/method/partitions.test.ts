import fc from 'fast-check';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schema } from '../../src/db/schema.ts';
import { writeFactRows } from '../../src/db/load-facts.ts';
import { computeGeneration, DERIVED_TABLES, forgetDerivedState } from '../../src/method/index.ts';
import {
  compareGenerationRows,
  formatDifference,
  publishGeneration,
  pruneGenerations,
  pruneGenerationRows,
  readGenerationRows,
} from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { blockHash, insertCatalog, insertTransfers, type FixtureTransfer } from '../helpers/facts.ts';
import { resetHistory } from './setup.ts';
import { PROPERTY_RUNS, PROPERTY_TEST } from '../helpers/property.ts';

/**
 * The fact tables partitioned by block range (migration 0027) and pruned by partition
 * (src/publish/prune.ts), with a partition width of one day of blocks instead of a week. Random
 * histories of runs, each published and followed by a prune keeping 1 to 3 generations, check:
 * every incremental generation equals one computed from scratch (after the drops); the published
 * rows (payments included: the evidence endpoint's rows) of every retained generation are
 * unchanged by every later prune; the oldest retained generation, recomputed from the facts left
 * (its audit), gives its published rows; and no partition that no retained generation reaches is
 * left. PROPERTY_RUNS sets the number of histories (default 10 per backend).
 */

const T0 = 1_767_225_600n; // 2026-01-01T00:00:00Z
const B0 = 1_000n; // the block at TB
const TB = T0 - 864_000n; // blocks start 10 days before T0
const PER_SECOND = 5n; // post-Denim: 200 ms blocks
const WINDOW = 2_592_000n;
/** One day of blocks: partition k holds block numbers [k * WIDTH, (k + 1) * WIDTH). */
const WIDTH = 432_000n;
const blockAt = (ts: bigint, k: bigint) => B0 + (ts - TB) * PER_SECOND + k;
const tsOf = (block: bigint) => TB + (block - B0) / PER_SECOND;
/** The first block number of the partition holding a block. */
const rangeOf = (block: bigint) => block - (block % WIDTH);
const addr = (c: string) => `0x${c.repeat(40)}`;
const SELLERS = [addr('a'), addr('b'), addr('c')];
const PAYERS = [addr('7'), addr('8'), addr('9')];

type Where = 'recent' | 'window_start' | 'at_start' | 'anywhere' | 'before_window';
interface Pay {
  where: Where;
  offset: number;
  k: number;
  seller: number;
  payer: number;
  value: number;
}
interface Step {
  advance: number;
  k: number;
  pays: Pay[];
  /** Seconds below the as-of where a reorg forks; 90,000 always crosses a partition boundary. */
  reorgBack: number | null;
  toggleSeller: number | null;
  retain: number;
}

const sometimes = <T>(arb: fc.Arbitrary<T>, weight: number, nil: number): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: fc.constant(null), weight: nil }, { arbitrary: arb, weight });
const payArb: fc.Arbitrary<Pay> = fc.record({
  where: fc.constantFrom<Where>('recent', 'recent', 'window_start', 'at_start', 'anywhere', 'before_window'),
  offset: fc.integer({ min: 0, max: 100_000 }),
  k: fc.integer({ min: 0, max: 4 }),
  seller: fc.integer({ min: 0, max: SELLERS.length - 1 }),
  payer: fc.integer({ min: 0, max: PAYERS.length - 1 }),
  value: fc.constantFrom(1, 5, 100, 250),
});
const stepArb: fc.Arbitrary<Step> = fc.record({
  advance: fc.constantFrom(0, 900, 3_600, 43_200, 86_400, 100_000, 172_800),
  k: fc.integer({ min: 0, max: 4 }),
  pays: fc.array(payArb, { maxLength: 5 }),
  reorgBack: sometimes(fc.constantFrom(30, 3_600, 90_000), 1, 3),
  toggleSeller: sometimes(fc.integer({ min: 0, max: SELLERS.length - 1 }), 1, 4),
  retain: fc.integer({ min: 1, max: 3 }),
});

/** The first block number of every partition of `blocks`, `transfers` and `batch_claims` (names say it). */
async function partitions(
  db: Kysely<Schema>,
): Promise<{ blocks: bigint[]; transfers: bigint[]; batch_claims: bigint[] }> {
  const { rows } = await sql<{ parent: 'blocks' | 'transfers' | 'batch_claims'; name: string }>`
    select p.relname as parent, c.relname as name
      from pg_inherits h
      join pg_class c on c.oid = h.inhrelid
      join pg_class p on p.oid = h.inhparent
     where p.relnamespace = (select oid from pg_namespace where nspname = current_schema())
       and p.relname in ('blocks', 'transfers', 'batch_claims')`.execute(db);
  const of = (parent: string) =>
    rows
      .filter((r) => r.parent === parent)
      .map((r) => BigInt(r.name.slice(`${parent}_from_`.length)))
      .sort((a, b) => (a < b ? -1 : 1));
  return { blocks: of('blocks'), transfers: of('transfers'), batch_claims: of('batch_claims') };
}

/** Empties the facts, drops every partition, and sets the test's width (an empty fact set may change it). */
async function useWidth(db: Kysely<Schema>, width: bigint) {
  await db.deleteFrom('published_pointer').execute();
  await resetHistory(db, SELLERS);
  const parts = await partitions(db);
  for (const [parent, firsts] of Object.entries(parts))
    for (const first of firsts) await sql`drop table ${sql.table(`${parent}_from_${first}`)}`.execute(db);
  await sql`update fact_partitioning set width_blocks = ${width.toString()}::int8`.execute(db);
}

/** A from-scratch generation of the same run; the incremental work state is put back after. */
async function fromScratch(db: Kysely<Schema>, compute: () => Promise<number>) {
  const saved = await Promise.all(DERIVED_TABLES.map((p) => db.selectFrom(p).selectAll().execute()));
  await forgetDerivedState(db);
  const scratch = await compute();
  const rows = await readGenerationRows(db, scratch);
  for (const p of DERIVED_TABLES) await db.deleteFrom(p).execute();
  for (const [i, p] of DERIVED_TABLES.entries())
    if (saved[i]!.length > 0)
      await db
        .insertInto(p)
        .values(saved[i] as never)
        .execute();
  return rows;
}

type Rows = Awaited<ReturnType<typeof readGenerationRows>>;
const differences = (a: Rows, b: Rows) => compareGenerationRows(a, b).map(formatDifference);

interface Run {
  generation: number;
  seq: bigint;
  asOf: { number: bigint; hash: `0x${string}`; timestamp: bigint };
  snapshotId: bigint;
  rows: Rows;
}

async function runHistory(t: TestDatabase, steps: Step[]) {
  await useWidth(t.db, WIDTH);
  const db = t.db;
  let seq = 0n;
  let tx = 0;
  let asOfTs = T0 + WINDOW + 1_800n;
  let catalog = new Set([0, 1, 2]);
  let snapshotId: bigint | null = null;
  const published = new Map<number, Run>();
  const stats = { dropped: 0, addresses: 0, edgeInside: 0, reorgAcross: 0 };
  for (const step of steps) {
    seq++;
    asOfTs += BigInt(step.advance);
    const asOfBlock = blockAt(asOfTs, BigInt(step.k));
    if (step.reorgBack !== null) {
      const fork = blockAt(asOfTs - BigInt(step.reorgBack), 0n);
      const removed = await sql<{ n: bigint }>`
        with r as (update blocks set removed_seq = ${seq} where removed_seq is null and block_id >= ${fork}::int8 * 1048576
                   returning block_id >> 20 as block_number)
        select count(distinct block_number - block_number % ${WIDTH.toString()}::int8) as n from r`.execute(db);
      if (Number(removed.rows[0]!.n) > 1) stats.reorgAcross++;
      // the chain flips back: the removed logs of every other block are live again (new block versions)
      const back = await db
        .selectFrom('transfer_facts')
        .selectAll()
        .where('removed_seq', '=', seq)
        .where(sql<boolean>`block_number % 2 = 0`)
        .execute();
      await writeFactRows(
        db,
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
    const transfers: FixtureTransfer[] = step.pays.map((p) => {
      const start = asOfTs - WINDOW;
      const ts = {
        recent: asOfTs - BigInt(p.offset % 7_200),
        window_start: start + BigInt(p.offset % 7_200) - 3_600n,
        at_start: start,
        anywhere: start + ((BigInt(p.offset) * 359n) % WINDOW),
        // a backfill below every window: into a partition prune dropped (created again)
        before_window: start - 86_400n - BigInt(p.offset),
      }[p.where];
      const from = PAYERS[p.payer]!;
      tx++;
      return {
        tx: `0x${tx.toString(16).padStart(64, '0')}`,
        logIndex: 2 + tx,
        block: blockAt(ts, BigInt(p.k)),
        ts,
        from,
        to: SELLERS[p.seller]!,
        value: BigInt(p.value),
        authorizer: from,
        addedSeq: seq,
      };
    });
    for (const tr of transfers) expect(tsOf(tr.block)).toBe(tr.ts);
    await insertTransfers(db, transfers);
    if (step.toggleSeller !== null || snapshotId === null) {
      if (step.toggleSeller !== null) {
        catalog = new Set(catalog);
        if (catalog.has(step.toggleSeller)) catalog.delete(step.toggleSeller);
        else catalog.add(step.toggleSeller);
      }
      snapshotId = await insertCatalog(
        db,
        [...catalog].sort().map((i) => ({
          listing_id: `${i}`.padStart(64, '0'),
          seller_address: SELLERS[i]!,
          category: 'inference',
        })),
      );
    }
    const asOf = { number: asOfBlock, hash: blockHash(asOfBlock), timestamp: asOfTs };
    const compute = (run: { seq: bigint; asOf: typeof asOf; snapshotId: bigint }) => () =>
      computeGeneration(db, {
        runSeq: run.seq,
        asOf: run.asOf,
        catalogSnapshotId: run.snapshotId,
        sources: [],
        generatedAt: new Date('2026-03-01T00:00:00Z'),
      });
    const run = { seq, asOf, snapshotId: snapshotId! };
    const incremental = await compute(run)();
    const rows = await readGenerationRows(db, incremental);
    expect(differences(rows, await fromScratch(db, compute(run))), `run ${seq}`).toEqual([]);
    await publishGeneration(db, incremental, { allowOlderAsOf: true }); // (advance 0 may pick an earlier block of the second)
    published.set(incremental, { generation: incremental, ...run, rows });

    // Prune: what it drops, and what must stay.
    const before = await partitions(db);
    const pruned = await pruneGenerations(db, step.retain);
    for (const g of pruned.generations) published.delete(g);
    const after = await partitions(db);
    expect(after.blocks).toEqual(after.transfers); // dropped and created together
    expect(after.blocks).toEqual(after.batch_claims);
    expect(before.blocks.filter((b) => !after.blocks.includes(b))).toEqual(pruned.droppedPartitions);
    stats.dropped += pruned.droppedPartitions.length;
    stats.addresses += pruned.addresses;
    const generations = await db.selectFrom('generations').select(['generation', 'market_from_ts']).execute();
    const horizon = generations.reduce((m, g) => (BigInt(g.market_from_ts) < m ? BigInt(g.market_from_ts) : m), asOfTs);
    // No partition below the newest is left whose blocks are all older than every retained window.
    const kept = await sql<{ first: bigint; latest: bigint | null }>`
      select (block_id >> 20) - (block_id >> 20) % ${WIDTH.toString()}::int8 as first, max(block_timestamp) as latest
        from blocks group by 1`.execute(db);
    for (const p of after.blocks.slice(0, -1)) {
      const latest = kept.rows.find((r) => BigInt(r.first) === p)?.latest;
      expect(latest != null && BigInt(latest) >= horizon, `partition ${p} under horizon ${horizon}`).toBe(true);
    }
    // A window edge inside a kept partition (the partition boundaries are not at day starts).
    for (const g of generations)
      if (after.blocks.includes(rangeOf(blockAt(BigInt(g.market_from_ts), 0n)))) stats.edgeInside++;
    // Every retained generation serves what it published; the oldest, recomputed, gives it again.
    for (const [g, published_] of published)
      expect(differences(published_.rows, await readGenerationRows(db, g)), `generation ${g} after prune`).toEqual([]);
    const oldest = [...published.values()].sort((a, b) => a.generation - b.generation)[0]!;
    const audit = await fromScratch(db, compute(oldest));
    expect(differences(oldest.rows, audit), `audit of generation ${oldest.generation}`).toEqual([]);
    expect(audit.payments).toEqual(oldest.rows.payments);
  }
  return stats;
}

describe.each(backends())('fact partitions and prune on $backend', ({ backend }) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(backend);
  });
  afterAll(async () => t?.close());

  it('behavior: prune drops whole partitions (no row deletes) and the addresses only they named', async () => {
    await useWidth(t.db, WIDTH);
    const db = t.db;
    // Partitions 0, 432,000 and 864,000 (days ~ -10, -9 and -8 before T0), one transfer each, and
    // one in the partition of the as-of block. Payer 9 pays only in the first partition.
    const asOfTs = T0 + WINDOW + 1_800n;
    const days = [TB + 100n, TB + 86_400n + 100n, TB + 2n * 86_400n + 100n, asOfTs - 600n];
    const payer = (i: number) => (i === 0 ? PAYERS[2]! : PAYERS[0]!);
    await insertTransfers(
      db,
      days.map((ts, i) => ({
        tx: `0x${(i + 1).toString(16).padStart(64, '0')}`,
        logIndex: 2,
        block: blockAt(ts, 0n),
        ts,
        from: payer(i),
        to: SELLERS[0]!,
        value: 100n,
        authorizer: payer(i),
        addedSeq: 1n,
      })),
    );
    expect((await partitions(db)).blocks).toEqual([0n, 432_000n, 864_000n, rangeOf(blockAt(asOfTs, 0n))]);
    const snapshotId = await insertCatalog(db, [{ listing_id: '0'.padStart(64, '0'), seller_address: SELLERS[0]! }]);
    const asOf = { number: blockAt(asOfTs, 0n), hash: blockHash(blockAt(asOfTs, 0n)), timestamp: asOfTs };
    const g = await computeGeneration(db, { runSeq: 1n, asOf, catalogSnapshotId: snapshotId, sources: [] });
    await publishGeneration(db, g);
    const ids = await db.selectFrom('addresses').select(['address_id', 'address']).execute();
    const idOf = (a: string) => ids.find((r) => Buffer.from(r.address).toString('hex') === a.slice(2))!.address_id;
    const rowsBefore = await readGenerationRows(db, g);
    // the kept partition's rows, with their physical places: a row delete and re-insert would move them
    const keptRows = await sql<{ ctid: string; block_id: string }>`
      select ctid::text, block_id::text from ${sql.table(`transfers_from_${rangeOf(blockAt(asOfTs, 0n))}`)}`.execute(
      db,
    );

    const pruned = await pruneGenerations(db, 1);
    expect(pruned.droppedPartitions).toEqual([0n, 432_000n, 864_000n]);
    expect(await partitions(db)).toEqual({
      blocks: [rangeOf(blockAt(asOfTs, 0n))],
      transfers: [rangeOf(blockAt(asOfTs, 0n))],
      batch_claims: [rangeOf(blockAt(asOfTs, 0n))],
    });
    for (const first of pruned.droppedPartitions)
      expect(
        (await sql<{ r: string | null }>`select to_regclass(${`transfers_from_${first}`})::text as r`.execute(db)).rows,
      ).toEqual([{ r: null }]);
    expect(
      (
        await sql<{ ctid: string; block_id: string }>`
        select ctid::text, block_id::text from ${sql.table(`transfers_from_${rangeOf(blockAt(asOfTs, 0n))}`)}`.execute(
          db,
        )
      ).rows,
    ).toEqual(keptRows.rows);
    // payer 9 was named only by the dropped facts: gone; seller a and payer 7 stay, with their ids
    expect(pruned.addresses).toBe(1);
    const left = await db.selectFrom('addresses').select('address_id').orderBy('address_id').execute();
    expect(left.map((r) => r.address_id)).toEqual([idOf(SELLERS[0]!), idOf(PAYERS[0]!)].sort((a, b) => a - b));
    expect(differences(rowsBefore, await readGenerationRows(db, g))).toEqual([]);
    // coverage moved past the dropped blocks (reset covered every block from 0)
    const coverage = await db.selectFrom('seller_coverage').select(['from_block', 'from_ts']).execute();
    expect(new Set(coverage.map((c) => `${c.from_block}:${c.from_ts}`))).toEqual(
      new Set([`${3n * WIDTH}:${days[2]! + 1n}`]),
    );
    // a second prune drops nothing and deletes no address
    expect(await pruneGenerations(db, 1)).toMatchObject({ droppedPartitions: [], addresses: 0 });
  });

  it('behavior: a prune killed between its two transactions leaves its addresses to the next prune, which drops nothing', async () => {
    await useWidth(t.db, WIDTH);
    const db = t.db;
    // As above: payer 9 pays only in partition 0, which the prune drops; payer 7 and seller a in
    // the partition of the as-of block, which stays.
    const asOfTs = T0 + WINDOW + 1_800n;
    const days = [TB + 100n, asOfTs - 600n];
    await insertTransfers(
      db,
      days.map((ts, i) => ({
        tx: `0x${(i + 1).toString(16).padStart(64, '0')}`,
        logIndex: 2,
        block: blockAt(ts, 0n),
        ts,
        from: i === 0 ? PAYERS[2]! : PAYERS[0]!,
        to: SELLERS[0]!,
        value: 100n,
        authorizer: i === 0 ? PAYERS[2]! : PAYERS[0]!,
        addedSeq: 1n,
      })),
    );
    const snapshotId = await insertCatalog(db, [{ listing_id: '0'.padStart(64, '0'), seller_address: SELLERS[0]! }]);
    const asOf = { number: blockAt(asOfTs, 0n), hash: blockHash(blockAt(asOfTs, 0n)), timestamp: asOfTs };
    await publishGeneration(
      db,
      await computeGeneration(db, { runSeq: 1n, asOf, catalogSnapshotId: snapshotId, sources: [] }),
    );
    const stored = async () =>
      (await db.selectFrom('addresses').select('address').execute())
        .map((r) => `0x${Buffer.from(r.address).toString('hex')}`)
        .sort();
    const due = async () => (await db.selectFrom('address_prune_due').select('due').execute()).length;
    expect(await stored()).toEqual([PAYERS[0]!, PAYERS[2]!, SELLERS[0]!].sort());

    // The run is killed after the first transaction: the partition is gone, payer 9's address not yet.
    const first = await pruneGenerationRows(db, 1);
    expect(first.droppedPartitions).toEqual([0n]);
    expect(await stored()).toEqual([PAYERS[0]!, PAYERS[2]!, SELLERS[0]!].sort());
    expect(await due()).toBe(1);
    // The next prune drops no partition but finishes the address prune.
    expect(await pruneGenerations(db, 1)).toMatchObject({ droppedPartitions: [], addresses: 1 });
    expect(await stored()).toEqual([PAYERS[0]!, SELLERS[0]!].sort());
    expect(await due()).toBe(0);
    // and the one after deletes nothing
    expect(await pruneGenerations(db, 1)).toMatchObject({ droppedPartitions: [], addresses: 0 });
  });

  it('behavior: prune drops seller_outgoing partitions below the horizon minus the lookback, the proxy pairings with the facts, and moves their coverage', async () => {
    await useWidth(t.db, WIDTH);
    const db = t.db;
    await sql`delete from seller_outgoing`.execute(db);
    await sql`delete from seller_outgoing_coverage`.execute(db);
    await sql`delete from stream_coverage`.execute(db);
    await sql`delete from x402_proxy_pairings`.execute(db);
    // As-of 60 days after T0: the window's first day (market_from_ts) is T0 + 30 days, and the
    // outgoing horizon 30 days before it, T0. Outgoing transfers of seller a: one 10 days before
    // T0 (partition 0), one just after T0 (kept: inside the lookback), one near the as-of.
    const asOfTs = T0 + 2n * WINDOW + 1_800n;
    const asOf = { number: blockAt(asOfTs, 0n), hash: blockHash(blockAt(asOfTs, 0n)), timestamp: asOfTs };
    const fact = (i: number, ts: bigint): FixtureTransfer => ({
      tx: `0x${(i + 1).toString(16).padStart(64, '0')}`,
      logIndex: 2,
      block: blockAt(ts, 0n),
      ts,
      from: PAYERS[0]!,
      to: SELLERS[0]!,
      value: 100n,
      authorizer: PAYERS[0]!,
      addedSeq: 1n,
    });
    await insertTransfers(db, [fact(0, TB + 100n), fact(1, asOfTs - 600n)]);
    const outgoingAt = [TB + 200n, T0 + 100n, asOfTs - 300n];
    const blocks = outgoingAt.map((ts) => blockAt(ts, 1n).toString());
    await sql`select outgoing_partitions_cover(${blocks}::int8[])`.execute(db);
    await sql`
      insert into seller_outgoing (value, block_number, block_timestamp, added_seq, removed_seq, log_index, from_id, to_id, tx_hash, block_hash)
      select 7, u.n, u.ts, 1, null, 0,
             (select address_id from addresses where address = decode(${SELLERS[0]!.slice(2)}, 'hex')),
             (select address_id from addresses where address = decode(${PAYERS[0]!.slice(2)}, 'hex')),
             decode(lpad(u.n::text, 64, '0'), 'hex'), decode(lpad(u.n::text, 64, '0'), 'hex')
        from unnest(${blocks}::int8[], ${outgoingAt.map(String)}::int8[]) as u(n, ts)`.execute(db);
    await sql`insert into seller_outgoing_coverage values (0, 0, ${asOf.number.toString()}::int8, ${SELLERS[0]!})`.execute(
      db,
    );
    await sql`insert into stream_coverage values (0, 0, ${asOf.number.toString()}::int8, 'x402_proxies'),
                                                (0, 0, ${asOf.number.toString()}::int8, 'x402_channels')`.execute(db);
    // A proxy pairing of the old transfer (it goes with its partition) and of the recent one (stays).
    await sql`
      insert into x402_proxy_pairings values
        (${blockAt(TB + 100n, 0n).toString()}::int8, 1, null, 3, 2, 2, decode(${'00'.repeat(31) + '01'}, 'hex'), decode('00', 'hex')),
        (${blockAt(asOfTs - 600n, 0n).toString()}::int8, 1, null, 3, 2, 2, decode(${'00'.repeat(31) + '02'}, 'hex'), decode('00', 'hex'))`.execute(
      db,
    );
    const snapshotId = await insertCatalog(db, [{ listing_id: '0'.padStart(64, '0'), seller_address: SELLERS[0]! }]);
    const g = await computeGeneration(db, { runSeq: 1n, asOf, catalogSnapshotId: snapshotId, sources: [] });
    await publishGeneration(db, g);

    await pruneGenerations(db, 1);
    const parts = await sql<{ name: string }>`
      select c.relname as name from pg_inherits h join pg_class c on c.oid = h.inhrelid
       where h.inhparent = 'seller_outgoing'::regclass order by 1`.execute(db);
    // Only partition 0's transfer is older than T0.
    expect(parts.rows.map((r) => r.name).sort()).toEqual(
      [rangeOf(BigInt(blocks[1]!)), rangeOf(BigInt(blocks[2]!))].map((n) => `seller_outgoing_from_${n}`).sort(),
    );
    const left = await sql<{ ts: string }>`select block_timestamp::text as ts from seller_outgoing order by 1`.execute(
      db,
    );
    expect(left.rows.map((r) => BigInt(r.ts))).toEqual([T0 + 100n, asOfTs - 300n]);
    // The outgoing coverage starts after partition 0 (its latest row + 1 s); the proxies' after the
    // dropped fact partitions (the facts' last dropped block: partition 0's transfer + 1 s);
    // the channels' is never moved.
    const coverage = await sql<{ k: string }>`
      select seller_address || ':' || from_block || ':' || from_ts as k from seller_outgoing_coverage
      union all select stream || ':' || from_block || ':' || from_ts from stream_coverage`.execute(db);
    expect(coverage.rows.map((r) => r.k).sort()).toEqual(
      [`${SELLERS[0]}:${WIDTH}:${TB + 201n}`, `x402_proxies:${WIDTH}:${TB + 101n}`, 'x402_channels:0:0'].sort(),
    );
    const pairings = await sql<{ n: string }>`select block_number::text as n from x402_proxy_pairings`.execute(db);
    expect(pairings.rows.map((r) => BigInt(r.n))).toEqual([blockAt(asOfTs - 600n, 0n)]);
  });

  it('behavior: a partition only the oldest retained generation reaches stays until that generation goes', async () => {
    // Three runs a day apart, retaining two: the partition holding the first window's start stays
    // while run 1 is retained, and goes when run 3's prune removes run 1.
    const day = (n: number) => ({
      advance: n === 0 ? 0 : 86_400,
      k: 0,
      pays: [
        { where: 'at_start' as const, offset: 0, k: 1, seller: 0, payer: 0, value: 100 },
        { where: 'recent' as const, offset: 60, k: 1, seller: 1, payer: 1, value: 5 },
      ],
      reorgBack: null,
      toggleSeller: null,
      retain: 2,
    });
    const first = rangeOf(blockAt(T0 + 1_800n - ((T0 + 1_800n) % 86_400n), 0n)); // run 1's market_from_ts
    await runHistory(t, [day(0), day(1)]);
    expect((await partitions(t.db)).blocks).toContain(first);
    const stats = await runHistory(t, [day(0), day(1), day(2)]);
    expect((await partitions(t.db)).blocks).not.toContain(first);
    expect(stats.dropped).toBeGreaterThan(0);
    expect(stats.edgeInside).toBeGreaterThan(0);
  });

  it('behavior: a reorg across a partition boundary, then prune', async () => {
    // One-day partitions start 200 s before each day of T0 (block 432,000k is at TB + 86,400k - 200),
    // so the first as-of (T0 + 30 days + 1,800 s) is 2,000 s above a boundary: payments 30 s and
    // 5,000 s before it lie on either side, and the second run's reorg 7,200 s back removes both.
    const pay = (where: Where, offset: number): Pay => ({ where, offset, k: 2, seller: 1, payer: 2, value: 100 });
    const quiet = { toggleSeller: null, reorgBack: null };
    const stats = await runHistory(t, [
      { advance: 0, k: 0, pays: [pay('recent', 30), pay('recent', 5_000), pay('anywhere', 1)], ...quiet, retain: 2 },
      { advance: 0, k: 1, pays: [pay('recent', 10)], ...quiet, reorgBack: 7_200, retain: 2 },
      { advance: 86_400, k: 2, pays: [pay('recent', 100)], ...quiet, retain: 1 },
      { advance: 172_800, k: 3, pays: [pay('recent', 100)], ...quiet, retain: 1 },
    ]);
    expect(stats.reorgAcross).toBe(1);
    expect(stats.dropped).toBeGreaterThan(0);
  });

  it('property: random histories of runs, each published and pruned', PROPERTY_TEST, async () => {
    let histories = 0;
    let dropped = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 2, maxLength: 5 }), async (steps) => {
        dropped += (await runHistory(t, steps)).dropped;
        histories++;
      }),
      { numRuns: PROPERTY_RUNS, endOnFailure: true },
    );
    expect(histories).toBe(PROPERTY_RUNS);
    expect(dropped).toBeGreaterThan(0);
  }); // 10 histories of up to 5 runs with publish and prune: 58-72 s quiet
});

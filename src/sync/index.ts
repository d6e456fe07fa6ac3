import { setMaxListeners } from 'node:events';
import { sql, type Kysely } from 'kysely';
import pLimit from 'p-limit';
import { AdaptiveLimit } from '../lib/adaptive-limit.ts';
import {
  BlockCache,
  fetchPaymentLogs,
  findFirstBlockAtOrAfter,
  type AsOf,
  type ChainClient,
  type PaymentLogs,
} from '../chain/index.ts';
import type { Schema } from '../db/index.ts';
import { summarizeFactIndexes } from '../db/load-facts.ts';
import { TallyError } from '../lib/errors.ts';
import { silentLogger, type Logger } from '../lib/log.ts';
import { ChunkSizer, chunkAt } from './chunk-size.ts';
import { batches, utcDayStart } from './ranges.ts';
import { rollbackReorgs } from './reorg.ts';
import { coverBlockRange, deleteCoverage, loadCoverage, storeChunk } from './store.ts';
import { syncStreams, type StreamStats } from './streams.ts';
import { reclassNewPairings } from './streams-store.ts';

export { utcDayStart } from './ranges.ts';
export { rollbackReorgs } from './reorg.ts';
export { loadCoverage, storeChunk } from './store.ts';
export { channelsFromBlock, FUNDING_LOOKBACK_SECONDS, syncStreams, type StreamStats } from './streams.ts';

export interface SyncProgress {
  /** Chunks stored so far in this sync. */
  ranges: number;
  /** Blocks stored so far, summed over the seller batches, and the sum the sync will reach. */
  blocks: bigint;
  totalBlocks: bigint;
  /** The chunk just stored, and the transfer logs it held. */
  fromBlock: bigint;
  toBlock: bigint;
  transfers: number;
  sellers: number;
}

export interface SyncOptions {
  usdcAddress: string;
  /** Seller addresses, any case; duplicates are ignored. */
  sellers: string[];
  asOf: AsOf;
  /** The method's window (2592000 for method 1.0.0). */
  windowSeconds: number;
  /** This run's value of ingest_seq: stamps added and removed rows. */
  runSeq: bigint;
  log?: Logger;
  /** Most RPC requests in flight (RPC_CONCURRENCY); the sync starts at 4 and adapts below this. Default 4. */
  concurrency?: number;
  signal?: AbortSignal;
  /** The depth the as-of was resolved with, if any (reorgs are checked on every sync anyway). */
  confirmations?: number;
  /**
   * Stored blocks at or below this number are final: a node whose chain parts from ours there is
   * not reorganising, it is out of sync or on another network, and the sync stops with a
   * TemporaryError rather than roll final facts back (see rollbackReorgs).
   */
  finalBlock?: bigint;
  /**
   * Most blocks per chunk: the unit stored in one transaction with its coverage step. Default
   * 200000. Larger chunks mean fewer coverage updates (each rewrites every seller row of the batch).
   */
  blockRange?: number;
  /**
   * Transfers a chunk should hold at most: chunks shrink below `blockRange` where payments are
   * dense (src/sync/chunk-size.ts), so the memory a sync holds does not grow with the chain's
   * payments. Default 2000.
   */
  chunkTransfers?: number;
  /** Blocks per eth_getLogs request at first; it shrinks if the provider refuses. Default 10000. */
  requestSpan?: number;
  /** Sellers per Transfer topic filter. Default 500. */
  sellerBatchSize?: number;
  /**
   * Seller batches synced at once (each fetching `fetchAhead` chunks ahead). Default 4: enough queued
   * requests to keep `concurrency` busy, while few chunks wait half-fetched in memory and the
   * chunk writes reach the database spread out rather than all together.
   */
  parallelBatches?: number;
  /**
   * Chunks each seller batch fetches ahead of the one it stores. Default 1. What the sync holds is
   * about parallelBatches x (fetchAhead + 1) chunks, and V8 lets its heap grow to a multiple of
   * what is live at a full collection (bench/indexer.ts at 200k: 59 MB live in a heap of ~300 MB
   * at the peak), so each chunk live at a full collection can raise the peak by a multiple of its
   * size (not shown at 200k: docs/benchmarks.md, "The staging tables, one chunk ahead"). With 4
   * batches, one chunk ahead each keeps 4 chunks' requests queued, enough for RPC_CONCURRENCY 4.
   */
  fetchAhead?: number;
  /** Called after each stored chunk (progress display; tests stop runs here). */
  onProgress?: (progress: SyncProgress) => void;
  /**
   * Method 3.0.0's streams (src/sync/streams.ts), synced after the reorg walk and before the USDC
   * stream, over the same as-of point, requests limit and headers. Without it they are not read.
   */
  streams?: {
    /** funding_lookback_seconds (2592000). */
    lookbackSeconds: number;
    /** The batch contract's deployment block (BATCH_SETTLEMENT_FROM_BLOCK). */
    channelsFromBlock: bigint;
    receipts?: 'transaction' | 'block';
    /** Called after each stored chunk of a stream (tests stop runs here). */
    onChunk?: (stream: string) => void;
    /** Called when every stream is stored, just before the last pass (tests stop runs here). */
    beforePairingPass?: () => void;
  };
}

export interface SyncStats {
  sellers: number;
  newSellers: number;
  /** Chunks stored. */
  ranges: number;
  /** New rows stored (rows already there are not counted again). */
  transfers: number;
  authorizations: number;
  /** Stored blocks found orphaned by a reorg and rolled back. */
  reorgedBlocks: number;
  indexedToBlock: bigint;
  /** Method 3.0.0's streams, when synced (SyncOptions.streams). */
  streams?: StreamStats;
}

interface Batch {
  sellers: string[];
  start: bigint;
  from: { block: bigint; ts: bigint };
}

/**
 * Brings the stored USDC facts of every seller up to the as-of block (SPEC section 2, coverage):
 * rolls back a reorg below the as-of point, backfills each new seller from the first block of the
 * UTC day holding `asOf.timestamp - windowSeconds` (block 0 when the chain is younger), and
 * extends each covered seller from its `to_block + 1`. Each chunk's logs and coverage are stored
 * together, so a run killed at any point restarts from what was stored. Safe to re-run; RPC
 * failures that outlast the retries are thrown as TemporaryError.
 */
export async function syncChain(db: Kysely<Schema>, client: ChainClient, options: SyncOptions): Promise<SyncStats> {
  const log = options.log ?? silentLogger;
  const { asOf, runSeq } = options;
  // Requests in flight adapt to the provider: from 4 up to `concurrency` (RPC_CONCURRENCY),
  // halved when a request met a rate limit (src/lib/adaptive-limit.ts).
  const limit = new AdaptiveLimit(options.concurrency ?? 4);
  const run = <T>(fn: () => Promise<T>) => {
    const before = client.rateLimits?.() ?? 0;
    return limit.run(fn, () => (client.rateLimits?.() ?? 0) > before);
  };
  const failure = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, failure.signal]) : failure.signal;
  // Every request in flight listens on it (src/chain/client.ts removes its listener when done):
  // up to RPC_CONCURRENCY (<= 256) for the USDC stream and as many for method 3.0.0's streams,
  // which run beside it. Node warns past 10 listeners, on stderr, where `run` writes JSON logs.
  setMaxListeners(1024, signal);
  const sellers = [...new Set(options.sellers.map((s) => s.toLowerCase()))].sort();

  const reorg = await rollbackReorgs(db, client, {
    asOf,
    runSeq,
    signal,
    run,
    log,
    ...(options.finalBlock !== undefined ? { finalBlock: options.finalBlock } : {}),
  });
  const coverage = await loadCoverage(db, sellers);
  const dayStart = utcDayStart(asOf.timestamp - BigInt(options.windowSeconds));
  const fresh = sellers.filter((s) => {
    const c = coverage.get(s);
    return c === undefined || c.fromTs > dayStart;
  });
  let backfillFrom = { block: 0n, ts: 0n };
  if (fresh.length > 0) {
    const first = await findFirstBlockAtOrAfter(client, dayStart, asOf.number, signal);
    // Block 0 at or after the day start: the chain is younger than the window.
    backfillFrom = first.number === 0n ? { block: 0n, ts: 0n } : { block: first.number, ts: dayStart };
    await deleteCoverage(
      db,
      fresh.filter((s) => coverage.has(s)),
    );
  }

  // Sellers grouped by where they start, cut into batches of one topic filter each.
  const freshSet = new Set(fresh);
  const byStart = new Map<bigint, string[]>();
  for (const s of sellers) {
    const c = coverage.get(s);
    const start = freshSet.has(s) || c === undefined ? backfillFrom.block : c.toBlock + 1n;
    if (start > asOf.number) continue;
    const group = byStart.get(start);
    if (group) group.push(s);
    else byStart.set(start, [s]);
  }
  const work: Batch[] = [];
  for (const [start, group] of byStart) {
    for (const b of batches(group, options.sellerBatchSize ?? 500))
      work.push({ sellers: b, start, from: backfillFrom });
  }
  const blockRange = BigInt(options.blockRange ?? 200_000);
  const requestSpan = BigInt(options.requestSpan ?? 10_000);
  const chunkTransfers = options.chunkTransfers ?? 2_000;
  const totalBlocks = work.reduce((n, b) => n + (asOf.number - b.start + 1n), 0n);
  log.info(
    { sellers: sellers.length, newSellers: fresh.length, batches: work.length, blocks: totalBlocks.toString() },
    'sync planned',
  );

  if (work.length > 0)
    await coverBlockRange(
      db,
      work.reduce((min, b) => (b.start < min ? b.start : min), asOf.number),
      asOf.number,
    );

  const blocks = new BlockCache(client, run);
  blocks.put({ number: asOf.number, hash: asOf.hash, timestamp: asOf.timestamp, parentHash: asOf.hash });
  const context = { limit: { span: requestSpan < blockRange ? requestSpan : blockRange }, run, signal, blocks };
  const stats: SyncStats = {
    sellers: sellers.length,
    newSellers: fresh.length,
    ranges: 0,
    transfers: 0,
    authorizations: 0,
    reorgedBlocks: reorg.orphanedBlocks,
    indexedToBlock: asOf.number,
  };

  // Each batch fetches up to `ahead` chunks in advance but stores them in order, so its coverage
  // always grows from its start without gaps. What the sync holds is then at most
  // parallelBatches x (ahead + 1) chunks, each of about `chunkTransfers` transfers once the
  // batch's ChunkSizer has seen the density.
  const ahead = Math.max(1, options.fetchAhead ?? 1);
  // No ANALYZE during a backfill (one ran each time the transfers it added had doubled, 9 times at
  // 200k, from 93f5579): it was added while the chunk statements still joined the stored tables,
  // so their plans followed the tables' statistics. Since 4bba2e0 every stored row a chunk needs is
  // found by a per-row probe through a unique index or a primary key's range (the OFFSET 0
  // subqueries of sql/store), a plan that does not follow the statistics. Measured at 200k
  // (bench/indexer.ts --profile-statements, backend CPU per statement): the ANALYZEs cost 2.3 s of
  // the backends' ~22 CPU-s, and without them the chunk statements cost no more (docs/benchmarks.md,
  // "The sync's CPU: no ANALYZE during a backfill"). The one after the sync (analyzeAfterBackfill)
  // stays: the method's cold generation plans joins on the statistics.
  // Method 3.0.0's streams run beside the USDC stream, under the same request limit (the sync is
  // bound by round trips: in sequence they added their whole time to the run's). A transfer and
  // the proxy pairing that classes it may then be stored by concurrent transactions: the last
  // pass below (reclassNewPairings) settles it once both are in.
  const streamsDone = options.streams
    ? syncStreams(db, client, {
        usdcAddress: options.usdcAddress,
        sellers,
        asOf,
        windowSeconds: options.windowSeconds,
        lookbackSeconds: options.streams.lookbackSeconds,
        channelsFromBlock: options.streams.channelsFromBlock,
        runSeq,
        log,
        run,
        signal,
        blocks,
        limit: context.limit,
        blockRange,
        chunkLogs: chunkTransfers,
        sellerBatchSize: options.sellerBatchSize ?? 500,
        parallelBatches: options.parallelBatches ?? 4,
        ...(options.streams.receipts ? { receipts: options.streams.receipts } : {}),
        ...(options.streams.onChunk ? { onChunk: options.streams.onChunk } : {}),
      }).catch((error: unknown) => {
        failure.abort(error); // stop the USDC stream's batches at their next step
        throw error;
      })
    : undefined;
  streamsDone?.catch(() => {}); // awaited below
  let storedBlocks = 0n;
  const runBatch = async (batch: Batch) => {
    signal.throwIfAborted(); // a batch waiting for its turn does not start after a failure
    const sizer = new ChunkSizer(blockRange, chunkTransfers);
    const inflight: { fromBlock: bigint; toBlock: bigint; logs: Promise<PaymentLogs> }[] = [];
    let cursor = batch.start;
    const launch = () => {
      if (cursor > asOf.number) return;
      const [fromBlock, toBlock] = chunkAt(cursor, sizer.size, asOf.number);
      cursor = toBlock + 1n;
      const logs = fetchPaymentLogs(
        client,
        { usdcAddress: options.usdcAddress, sellers: batch.sellers, fromBlock, toBlock, anchor: asOf },
        context,
      );
      logs.catch(() => {}); // awaited below, in order
      inflight.push({ fromBlock, toBlock, logs });
    };
    for (let i = 0; i < ahead; i++) launch();
    for (let chunk = inflight.shift(); chunk; chunk = inflight.shift()) {
      const { fromBlock, toBlock } = chunk;
      const logs = await chunk.logs;
      // The next chunk is sized by the chunks before it in order (this one included), never by
      // which fetch came back first: the same chain gives the same chunks.
      sizer.observe(toBlock - fromBlock + 1n, logs.transfers.length);
      launch();
      signal.throwIfAborted();
      const added = await storeChunk(db, { logs, sellers: batch.sellers, from: batch.from, toBlock, runSeq });
      stats.ranges++;
      stats.transfers += added.transfers;
      stats.authorizations += added.authorizations;
      storedBlocks += toBlock - fromBlock + 1n;
      log.debug(
        { fromBlock, toBlock, sellers: batch.sellers.length, transfers: logs.transfers.length },
        'stored chunk',
      );
      options.onProgress?.({
        ranges: stats.ranges,
        blocks: storedBlocks,
        totalBlocks,
        fromBlock,
        toBlock,
        transfers: logs.transfers.length,
        sellers: batch.sellers.length,
      });
    }
  };
  const planSlots = pLimit(options.parallelBatches ?? 4);
  const results = await Promise.allSettled(
    work.map((batch) =>
      planSlots(() => runBatch(batch)).catch((error: unknown) => {
        failure.abort(error); // stop the other batches at their next step
        throw error;
      }),
    ),
  );
  const streamsResult = streamsDone ? await Promise.allSettled([streamsDone]) : [];
  // The first failure is the cause; the others were stopped by it.
  const failed = [...streamsResult, ...results].find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  if (streamsDone) {
    stats.streams = await streamsDone;
    options.streams?.beforePairingPass?.();
    stats.streams.reclassed += await reclassNewPairings(db, runSeq);
  }

  await assertCovered(db, sellers, dayStart, asOf.number);
  await analyzeAfterBackfill(db, stats.transfers, log);
  // the BRIN index of the new block versions' seqs: summarized here, not only by autovacuum (the
  // embedded database has none), so the method's changed-fact scans read only the newest pages
  if (stats.transfers > 0) await summarizeFactIndexes(db);
  log.info({ ...stats, indexedToBlock: stats.indexedToBlock.toString() }, 'chain synced');
  return stats;
}

/**
 * Refreshes the planner's statistics of the fact tables when this sync added a large part of
 * them (a backfill: more than a tenth of the transfers now stored, Postgres' own autovacuum
 * analyze threshold). The method runs right after the sync, before autovacuum has looked at the
 * new rows: planned on the empty tables' statistics, its first (cold) generation chose plans for
 * a few rows. A steady run adds far less than a tenth and skips this. ANALYZE reads a sample of
 * each table (30,000 rows by default), not the whole table; it changes plans, never results.
 */
async function analyzeAfterBackfill(db: Kysely<Schema>, added: number, log: Logger) {
  if (added === 0) return;
  const { rows } = await sql<{ estimate: number }>`
    select reltuples::float8 as estimate from pg_class where oid = 'transfers'::regclass`.execute(db);
  // reltuples is -1 (Postgres 14+) or 0 for a table never analyzed.
  const estimate = Math.max(0, Number(rows[0]?.estimate ?? 0));
  if (added <= estimate / 10) return;
  const started = performance.now();
  await sql`analyze addresses, blocks, transfers`.execute(db);
  log.info({ added, estimate, ms: Math.round(performance.now() - started) }, 'fact tables analyzed after a backfill');
}

// Defensive: the promise of syncChain, checked from what is stored rather than assumed.
async function assertCovered(db: Kysely<Schema>, sellers: string[], dayStart: bigint, asOfNumber: bigint) {
  const coverage = await loadCoverage(db, sellers);
  const short = sellers.filter((s) => {
    const c = coverage.get(s);
    return !c || c.toBlock < asOfNumber || c.fromTs > dayStart;
  });
  if (short.length > 0) {
    throw new TallyError('chain sync ended with sellers not covered', {
      details: { sellers: short.length, example: short[0] },
    });
  }
}

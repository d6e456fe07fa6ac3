import type { Kysely } from 'kysely';
import pLimit from 'p-limit';
import {
  fetchChannelsCreated,
  fetchClaims,
  fetchProxySettlements,
  fetchSellerOutgoing,
  findFirstBlockAtOrAfter,
  type AsOf,
  type BlockCache,
  type BlockRecord,
  type ChainClient,
  type Hex,
  type LogsContext,
} from '../chain/index.ts';
import type { Schema } from '../db/index.ts';
import { TallyError, TemporaryError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';
import { ChunkSizer, chunkAt } from './chunk-size.ts';
import { batches, utcDayStart } from './ranges.ts';
import {
  deleteOutgoingCoverage,
  deleteStreamCoverage,
  loadOutgoingCoverage,
  loadStreamCoverage,
  storeChannelsChunk,
  storeClaimsChunk,
  storeOutgoingChunk,
  storeProxyChunk,
  type CoverageStep,
  type StreamName,
} from './streams-store.ts';

/**
 * The sync of method 3.0.0's streams (SPEC section 2, "Method 3.0.0", "Coverage"; issue 22), run
 * by syncChain after the reorg walk, beside the USDC stream:
 * - `x402_channels`: every ChannelCreated of the batch contract from its deployment block on
 *   (`channelsFromBlock`), once, then chunk by chunk as the head moves;
 * - `x402_claims`: its Claimed logs over the window, after the channels (a claim needs its
 *   channel's config, logged before it on chain);
 * - `x402_proxies`: the Permit2 proxies' settlements over the window, paired through receipts; a
 *   transfer stored after its pairing is stored with its class (store_chunk.sql), one stored
 *   before gets it when the pairing is stored, and syncChain's last pass (reclassAllPairings)
 *   covers the two stored at once by concurrent transactions;
 * - `seller_outgoing`: each seller's outgoing USDC Transfers over the window plus
 *   `lookbackSeconds` further back, with its own coverage per seller.
 * The guarantees are the USDC stream's: each chunk is stored with its coverage step in one
 * transaction (a killed run loses and doubles nothing), each stream reads from its coverage's end,
 * a stream whose coverage starts after the window's (an older as-of point) is read again from the
 * window's start, and what is held at a time is a chunk being stored plus one fetched ahead per
 * stream, sized by ChunkSizer like the USDC stream's.
 */

export { FUNDING_LOOKBACK_SECONDS } from '../config/index.ts';

/**
 * The block ChannelCreated is read from: the setting when given; else, on Base, the documented
 * lower bound of the contract's deployment (BASE_BATCH_SETTLEMENT_FROM_BLOCK), except on a chain
 * that has not reached it (a local chain that says it is 8453, as the dev chain does), and 0 on
 * any other chain.
 */
export function channelsFromBlock(
  setting: bigint | undefined,
  chain: { chainId: number; baseChainId: number; baseFromBlock: bigint; asOfBlock: bigint },
): bigint {
  if (setting !== undefined) return setting;
  if (chain.chainId !== chain.baseChainId) return 0n;
  return chain.baseFromBlock <= chain.asOfBlock ? chain.baseFromBlock : 0n;
}

export interface StreamsOptions {
  usdcAddress: string;
  /** Lowercase, distinct. */
  sellers: readonly string[];
  asOf: AsOf;
  windowSeconds: number;
  /** funding_lookback_seconds: how much further back than the window outgoing transfers reach. */
  lookbackSeconds: number;
  /** The batch contract's deployment block (or a block below it): ChannelCreated is read from here. */
  channelsFromBlock: bigint;
  runSeq: bigint;
  log: Logger;
  run: <T>(fn: () => Promise<T>) => Promise<T>;
  signal: AbortSignal;
  blocks: BlockCache;
  /** The eth_getLogs span, shared with the USDC stream (it shrinks when the provider refuses). */
  limit: LogsContext['limit'];
  blockRange: bigint;
  /** Logs a chunk should hold at most (ChunkSizer's target). */
  chunkLogs: number;
  sellerBatchSize: number;
  parallelBatches: number;
  /** How receipts are read (fetchProxySettlements). Default 'transaction'. */
  receipts?: 'transaction' | 'block';
  /** Called after each stored chunk of a stream (tests stop runs here). */
  onChunk?: (stream: StreamName | 'seller_outgoing') => void;
}

export interface StreamStats {
  /** Proxy settlements paired and stored (new rows). */
  proxyPairings: number;
  /** Receipt requests made for the pairing (eth_getTransactionReceipt or eth_getBlockReceipts). */
  receiptCalls: number;
  /** Stored transfers given class 2 or 3 by a pairing stored after them. */
  reclassed: number;
  claims: number;
  /** Claims read and not stored: a zero claim or a channel whose token is not USDC. */
  claimsSkipped: number;
  channelsCreated: number;
  outgoing: number;
  chunks: number;
}

/** A coverage that starts after `dayStart` (coverage from block 0 holds everything before it). */
const startsAfter = (c: { fromBlock: bigint; fromTs: bigint }, dayStart: bigint) =>
  c.fromBlock > 0n && c.fromTs > dayStart;

/** Where the window's coverage starts: the first block of the UTC day holding the window start. */
async function firstBlockOfDay(
  client: ChainClient,
  dayStart: bigint,
  asOf: AsOf,
  signal: AbortSignal,
): Promise<{ block: bigint; ts: bigint }> {
  if (dayStart <= 0n) return { block: 0n, ts: 0n };
  const first = await findFirstBlockAtOrAfter(client, dayStart, asOf.number, signal);
  // Block 0 at or after the day start: the chain is younger than the window.
  return first.number === 0n ? { block: 0n, ts: 0n } : { block: first.number, ts: dayStart };
}

/**
 * Headers of these blocks, each checked against the hash its logs carried: a mismatch means the
 * node answered from two forks, and the chunk is read again (a bounded number of times).
 */
class HashMismatch extends TallyError {}
async function headersOf(
  o: StreamsOptions,
  want: ReadonlyMap<bigint, Hex>,
  end: bigint,
): Promise<{ blocks: BlockRecord[]; end: BlockRecord }> {
  const numbers = [...new Set([...want.keys(), end])];
  const headers = await Promise.all(numbers.map((n) => o.blocks.get(n, o.signal)));
  for (const h of headers) {
    const hash = want.get(h.number);
    if (hash !== undefined && hash !== h.hash) {
      o.blocks.forget(h.number);
      throw new HashMismatch(`block ${h.number}: the logs and the header name two hashes`);
    }
  }
  const records = headers.map((h) => ({ number: h.number, hash: h.hash, timestamp: h.timestamp }));
  return { blocks: records.filter((r) => want.has(r.number)), end: records.find((r) => r.number === end)! };
}

const READS = 3;
async function withHeaders<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof HashMismatch)) throw error;
      if (attempt >= READS)
        throw new TemporaryError('the RPC keeps answering inconsistently about a block', {
          details: { reason: error.message },
        });
    }
  }
}

/**
 * Reads [start, asOf] chunk by chunk, the next chunk fetched while the one before is stored, and
 * stores each in order (so coverage grows without gaps).
 */
async function eachChunk<T>(
  o: StreamsOptions,
  start: bigint,
  fetch: (from: bigint, to: bigint) => Promise<T>,
  size: (fetched: T) => number,
  store: (fetched: T, from: bigint, to: bigint) => Promise<void>,
): Promise<void> {
  // (mostly empty streams: an empty chunk lets the next grow by more than one doubling)
  const sizer = new ChunkSizer(o.blockRange, o.chunkLogs, { emptyJumps: true });
  let cursor = start;
  const next = () => {
    if (cursor > o.asOf.number) return undefined;
    const [from, to] = chunkAt(cursor, sizer.size, o.asOf.number);
    cursor = to + 1n;
    const fetched = fetch(from, to);
    fetched.catch(() => {}); // awaited below, in order
    return { from, to, fetched };
  };
  for (let chunk = next(); chunk;) {
    const fetched = await chunk.fetched;
    sizer.observe(chunk.to - chunk.from + 1n, size(fetched));
    const following = next();
    o.signal.throwIfAborted();
    await store(fetched, chunk.from, chunk.to);
    chunk = following;
  }
}

/** Syncs the four streams to the as-of block; see the file's comment. */
export async function syncStreams(db: Kysely<Schema>, client: ChainClient, o: StreamsOptions): Promise<StreamStats> {
  const stats: StreamStats = {
    proxyPairings: 0,
    receiptCalls: 0,
    reclassed: 0,
    claims: 0,
    claimsSkipped: 0,
    channelsCreated: 0,
    outgoing: 0,
    chunks: 0,
  };
  const context: LogsContext = { limit: o.limit, run: o.run, signal: o.signal };
  const anchor = { number: o.asOf.number, hash: o.asOf.hash as Hex };
  const dayStart = utcDayStart(o.asOf.timestamp - BigInt(o.windowSeconds));
  let windowFrom: Promise<{ block: bigint; ts: bigint }> | undefined;
  const windowStart = () => (windowFrom ??= firstBlockOfDay(client, dayStart, o.asOf, o.signal));
  const coverage = await loadStreamCoverage(db);

  /** Where a window stream reads from, and the coverage start it stores (forgetting one that starts too late). */
  async function windowPlan(stream: StreamName): Promise<{ start: bigint; from: { block: bigint; ts: bigint } }> {
    const c = coverage.get(stream);
    if (c !== undefined && !startsAfter(c, dayStart))
      return { start: c.toBlock + 1n, from: { block: c.fromBlock, ts: c.fromTs } };
    if (c !== undefined) await deleteStreamCoverage(db, stream);
    const from = await windowStart();
    return { start: from.block, from };
  }
  const stepOf = (from: { block: bigint; ts: bigint }, to: bigint): CoverageStep => ({ from, toBlock: to });
  const chunkDone = (stream: StreamName | 'seller_outgoing') => {
    stats.chunks++;
    o.onChunk?.(stream);
  };

  async function channelsThenClaims() {
    // Channels from the deployment block on. A stored coverage that starts above the configured
    // block (the setting was lowered) is read again from it.
    if (o.channelsFromBlock <= o.asOf.number) {
      const c = coverage.get('x402_channels');
      let start = o.channelsFromBlock;
      let from = { block: o.channelsFromBlock, ts: 0n };
      if (c !== undefined && c.fromBlock <= o.channelsFromBlock) {
        start = c.toBlock + 1n;
        from = { block: c.fromBlock, ts: c.fromTs };
      } else {
        if (c !== undefined) await deleteStreamCoverage(db, 'x402_channels');
        from.ts = (await o.blocks.get(o.channelsFromBlock, o.signal)).timestamp;
      }
      await eachChunk(
        o,
        start,
        (fromBlock, toBlock) =>
          withHeaders(async () => {
            const created = await fetchChannelsCreated(client, { fromBlock, toBlock, anchor }, context);
            return { created, ...(await headersOf(o, new Map(), toBlock)) };
          }),
        (r) => r.created.length,
        async (r, _from, to) => {
          const stored = await storeChannelsChunk(db, {
            created: r.created,
            end: r.end,
            step: stepOf(from, to),
            runSeq: o.runSeq,
          });
          stats.channelsCreated += stored.created;
          chunkDone('x402_channels');
        },
      );
    }
    const claims = await windowPlan('x402_claims');
    await eachChunk(
      o,
      claims.start,
      (fromBlock, toBlock) =>
        withHeaders(async () => {
          const read = await fetchClaims(client, { fromBlock, toBlock, anchor }, context);
          const want = new Map(read.map((c) => [c.blockNumber, c.blockHash]));
          return { claims: read, ...(await headersOf(o, want, toBlock)) };
        }),
      (r) => r.claims.length,
      async (r, _from, to) => {
        const stored = await storeClaimsChunk(db, {
          claims: r.claims,
          blocks: r.blocks,
          end: r.end,
          usdcAddress: o.usdcAddress,
          step: stepOf(claims.from, to),
          runSeq: o.runSeq,
        });
        stats.claims += stored.claims;
        stats.claimsSkipped += stored.skipped;
        chunkDone('x402_claims');
      },
    );
  }

  async function proxies() {
    const plan = await windowPlan('x402_proxies');
    await eachChunk(
      o,
      plan.start,
      (fromBlock, toBlock) =>
        withHeaders(async () => {
          const read = await fetchProxySettlements(
            client,
            { usdcAddress: o.usdcAddress, fromBlock, toBlock, anchor, ...(o.receipts ? { receipts: o.receipts } : {}) },
            context,
          );
          stats.receiptCalls += read.receiptCalls;
          return { settlements: read.settlements, ...(await headersOf(o, new Map(), toBlock)) };
        }),
      (r) => r.settlements.length,
      async (r, _from, to) => {
        const stored = await storeProxyChunk(db, {
          settlements: r.settlements,
          end: r.end,
          step: stepOf(plan.from, to),
          runSeq: o.runSeq,
        });
        stats.proxyPairings += stored.pairings;
        stats.reclassed += stored.reclassed;
        chunkDone('x402_proxies');
      },
    );
  }

  async function outgoing() {
    if (o.sellers.length === 0) return;
    const outDayStart = dayStart - BigInt(o.lookbackSeconds);
    const cov = await loadOutgoingCoverage(db, o.sellers);
    const fresh = o.sellers.filter((s) => {
      const c = cov.get(s);
      return c === undefined || startsAfter(c, outDayStart);
    });
    const backfillFrom = fresh.length > 0 ? await firstBlockOfDay(client, outDayStart, o.asOf, o.signal) : undefined;
    await deleteOutgoingCoverage(
      db,
      fresh.filter((s) => cov.has(s)),
    );
    const freshSet = new Set(fresh);
    const byStart = new Map<bigint, string[]>();
    for (const s of o.sellers) {
      const start = freshSet.has(s) ? backfillFrom!.block : cov.get(s)!.toBlock + 1n;
      if (start > o.asOf.number) continue;
      byStart.set(start, [...(byStart.get(start) ?? []), s]);
    }
    const work = [...byStart].flatMap(([start, group]) =>
      batches(group, o.sellerBatchSize).map((sellers) => ({ start, sellers })),
    );
    const slots = pLimit(o.parallelBatches);
    const failure = new AbortController();
    const results = await Promise.allSettled(
      work.map((batch) =>
        slots(async () => {
          failure.signal.throwIfAborted();
          // Every seller of a batch starts at the same block: all fresh, or all covered to start - 1.
          const covered = cov.get(batch.sellers[0]!);
          const from =
            freshSet.has(batch.sellers[0]!) || !covered
              ? backfillFrom!
              : { block: covered.fromBlock, ts: covered.fromTs };
          await eachChunk(
            o,
            batch.start,
            (fromBlock, toBlock) =>
              withHeaders(async () => {
                const read = await fetchSellerOutgoing(
                  client,
                  {
                    usdcAddress: o.usdcAddress,
                    sellers: batch.sellers,
                    fromBlock,
                    toBlock,
                    sellerBatchSize: o.sellerBatchSize,
                    anchor,
                  },
                  context,
                );
                const want = new Map(read.map((t) => [t.blockNumber, t.blockHash]));
                const headers = await headersOf(o, want, toBlock);
                const time = new Map(headers.blocks.map((b) => [b.number, b.timestamp]));
                const transfers = read.map((t) => ({ ...t, blockTimestamp: time.get(t.blockNumber)! }));
                return { transfers, end: headers.end };
              }),
            (r) => r.transfers.length,
            async (r, _from, to) => {
              const stored = await storeOutgoingChunk(db, {
                transfers: r.transfers,
                sellers: batch.sellers,
                end: r.end,
                step: stepOf(from, to),
                runSeq: o.runSeq,
              });
              stats.outgoing += stored.outgoing;
              chunkDone('seller_outgoing');
            },
          );
        }).catch((error: unknown) => {
          failure.abort(error);
          throw error;
        }),
      ),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  const results = await Promise.allSettled([channelsThenClaims(), proxies(), outgoing()]);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  await assertStreamsCovered(db, o, dayStart);
  o.log.info({ ...stats }, 'x402 streams synced');
  return stats;
}

// Defensive, as assertCovered for the USDC stream: the promise checked from what is stored.
async function assertStreamsCovered(db: Kysely<Schema>, o: StreamsOptions, dayStart: bigint): Promise<void> {
  const coverage = await loadStreamCoverage(db);
  const short: string[] = [];
  for (const stream of ['x402_proxies', 'x402_claims'] as const) {
    const c = coverage.get(stream);
    if (!c || c.toBlock < o.asOf.number || startsAfter(c, dayStart)) short.push(stream);
  }
  if (o.channelsFromBlock <= o.asOf.number) {
    const c = coverage.get('x402_channels');
    if (!c || c.toBlock < o.asOf.number || c.fromBlock > o.channelsFromBlock) short.push('x402_channels');
  }
  const outDayStart = dayStart - BigInt(o.lookbackSeconds);
  const outgoing = await loadOutgoingCoverage(db, o.sellers);
  const seller = o.sellers.find((s) => {
    const c = outgoing.get(s);
    return !c || c.toBlock < o.asOf.number || startsAfter(c, outDayStart);
  });
  if (seller !== undefined) short.push('seller_outgoing');
  if (short.length > 0)
    throw new TallyError('stream sync ended with streams not covered', { details: { streams: short, seller } });
}

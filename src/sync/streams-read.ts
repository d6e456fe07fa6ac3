import { findFirstBlockAtOrAfter, type AsOf, type BlockRecord, type ChainClient, type Hex } from '../chain/index.ts';
import { TallyError, TemporaryError } from '../lib/errors.ts';
import { ChunkSizer, chunkAt } from './chunk-size.ts';
import type { StreamsOptions } from './streams.ts';

/**
 * How the sync of method 3.0.0's streams (./streams.ts) reads: where the window's coverage starts,
 * headers checked against the hashes the logs carried, and a stream read chunk by chunk with one
 * chunk fetched ahead.
 */

/** A coverage that starts after `dayStart` (coverage from block 0 holds everything before it). */
export const startsAfter = (c: { fromBlock: bigint; fromTs: bigint }, dayStart: bigint) =>
  c.fromBlock > 0n && c.fromTs > dayStart;

/** Where the window's coverage starts: the first block of the UTC day holding the window start. */
export async function firstBlockOfDay(
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
export async function headersOf(
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
export async function withHeaders<T>(read: () => Promise<T>): Promise<T> {
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
export async function eachChunk<T>(
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

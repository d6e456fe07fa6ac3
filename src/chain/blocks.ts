import type { ChainClient } from './client.ts';
import { InvalidResponseError } from './errors.ts';
import { RpcBlockSchema } from './rpc-schema.ts';
import type { BlockHeader, Hex } from './types.ts';

export type BlockRef = bigint | 'latest' | 'finalized' | 'safe';

/**
 * One block header (without transactions). Throws InvalidResponseError, which the client retries,
 * when the node answers null (a block it does not have yet), a malformed block, a block of another
 * number, or a hash other than `expectHash`. Read-only; safe to repeat.
 */
export async function getBlockHeader(
  client: ChainClient,
  ref: BlockRef,
  options: { expectHash?: Hex | undefined; signal?: AbortSignal | undefined } = {},
): Promise<BlockHeader> {
  const tag = typeof ref === 'bigint' ? `0x${ref.toString(16)}` : ref;
  return client.request('eth_getBlockByNumber', [tag, false], {
    signal: options.signal,
    validate: (raw) => {
      if (raw === null || raw === undefined)
        throw new InvalidResponseError('eth_getBlockByNumber returned null', { block: tag });
      const parsed = RpcBlockSchema.safeParse(raw);
      if (!parsed.success)
        throw new InvalidResponseError('eth_getBlockByNumber returned a malformed block', { block: tag });
      const header: BlockHeader = {
        number: BigInt(parsed.data.number),
        hash: parsed.data.hash.toLowerCase() as Hex,
        parentHash: parsed.data.parentHash.toLowerCase() as Hex,
        timestamp: BigInt(parsed.data.timestamp),
      };
      if (typeof ref === 'bigint' && header.number !== ref) {
        throw new InvalidResponseError('eth_getBlockByNumber returned another block', { block: tag });
      }
      if (options.expectHash !== undefined && header.hash !== options.expectHash) {
        throw new InvalidResponseError('block hash disagrees with the logs of the block', { block: tag });
      }
      return header;
    },
  });
}

/**
 * The canonical header at a number, or null when the node has no block there. For reorg
 * checks, where "no such block" is an answer rather than an inconsistency.
 */
export async function getCanonicalHeader(
  client: ChainClient,
  number: bigint,
  signal?: AbortSignal,
): Promise<BlockHeader | null> {
  const raw = await client.request('eth_getBlockByNumber', [`0x${number.toString(16)}`, false], { signal });
  if (raw === null) return null;
  const parsed = RpcBlockSchema.safeParse(raw);
  if (!parsed.success || BigInt(parsed.data.number) !== number) {
    return getBlockHeader(client, number, { signal }); // retried through the validating path
  }
  return {
    number,
    hash: parsed.data.hash.toLowerCase() as Hex,
    parentHash: parsed.data.parentHash.toLowerCase() as Hex,
    timestamp: BigInt(parsed.data.timestamp),
  };
}

/**
 * The first block with timestamp >= `timestamp` in [0, upTo], by binary search on block
 * timestamps (they never decrease). Returns block 0 when block 0 is already at or after it (the
 * chain is younger), and `upTo` itself when no block up to it qualifies. About log2(upTo)
 * requests, one at a time. Read-only.
 */
export async function findFirstBlockAtOrAfter(
  client: ChainClient,
  timestamp: bigint,
  upTo: bigint,
  signal?: AbortSignal,
): Promise<BlockHeader> {
  let lo = 0n;
  let hi = upTo;
  let found = await getBlockHeader(client, hi, { signal });
  if (found.timestamp < timestamp) return found; // nothing later is known; caller's as-of predates it
  while (lo < hi) {
    const mid = (lo + hi) / 2n;
    const header = await getBlockHeader(client, mid, { signal });
    if (header.timestamp >= timestamp) {
      hi = mid;
      found = header;
    } else lo = mid + 1n;
  }
  return found;
}

import type { Hash } from 'viem';
import { rpcRequest, toQuantity } from './rpc.ts';

/**
 * Makes the next mined block carry timestamp `ts` (unix seconds). It must be greater than the
 * latest block's timestamp; later blocks continue from it.
 */
export async function setNextBlockTimestamp(rpcUrl: string, ts: bigint): Promise<void> {
  await rpcRequest(rpcUrl, 'evm_setNextBlockTimestamp', [toQuantity(ts)]);
}

/**
 * Mines `blocks` empty-of-new-work blocks at once (anvil_mine); with `intervalSeconds` each block's
 * timestamp is the previous one's plus the interval, so long histories are built in one call.
 * Includes whatever is waiting in the pool in the first block.
 *
 * The interval is set with anvil_setBlockTimestampInterval for the call and removed after it, not
 * passed to anvil_mine: anvil_mine's own interval is added to the wall clock's time, so a second that
 * ticks between two calls lands in the timestamps (a test expecting 33 x 86,400 s got one more on a
 * loaded machine, 2026-11-28); a set interval counts from the previous block's timestamp alone.
 */
export async function mine(rpcUrl: string, blocks: number, intervalSeconds?: number): Promise<void> {
  if (!Number.isInteger(blocks) || blocks < 1) throw new RangeError(`blocks must be an integer >= 1, got ${blocks}`);
  if (intervalSeconds === undefined) {
    await rpcRequest(rpcUrl, 'anvil_mine', [toQuantity(blocks)]);
    return;
  }
  await rpcRequest(rpcUrl, 'anvil_setBlockTimestampInterval', [intervalSeconds]);
  try {
    await rpcRequest(rpcUrl, 'anvil_mine', [toQuantity(blocks)]);
  } finally {
    await rpcRequest(rpcUrl, 'anvil_removeBlockTimestampInterval', []);
  }
}

/** Turns automine on or off (off: sent transactions wait in the pool until a block is mined). */
export async function setAutomine(rpcUrl: string, enabled: boolean): Promise<void> {
  await rpcRequest(rpcUrl, 'evm_setAutomine', [enabled]);
}

export interface MinedBlock {
  number: bigint;
  hash: Hash;
  /** unix seconds */
  timestamp: bigint;
}

/** The latest block (number, hash, timestamp). */
export async function latestBlock(rpcUrl: string): Promise<MinedBlock> {
  const block = await rpcRequest<{ number: string; hash: Hash; timestamp: string }>(rpcUrl, 'eth_getBlockByNumber', [
    'latest',
    false,
  ]);
  return { number: BigInt(block.number), hash: block.hash, timestamp: BigInt(block.timestamp) };
}

/**
 * Runs `send` with automine off, then mines exactly one block holding everything it sent (in
 * the order sent: the node is started with `--order fifo`), optionally at `timestamp`, and turns
 * automine back on even when `send` throws. Throws when some transactions did not fit in that
 * block (block gas limit): keep batches to at most ~100 settlements.
 * `send` must only submit transactions, never wait for their receipts.
 */
export async function inOneBlock<T>(
  rpcUrl: string,
  send: () => Promise<T>,
  options: { timestamp?: bigint } = {},
): Promise<{ result: T; block: MinedBlock }> {
  await setAutomine(rpcUrl, false);
  let result: T;
  try {
    result = await send();
    if (options.timestamp !== undefined) await setNextBlockTimestamp(rpcUrl, options.timestamp);
    await rpcRequest(rpcUrl, 'evm_mine', []);
    const status = await rpcRequest<{ pending: string; queued: string }>(rpcUrl, 'txpool_status', []);
    if (BigInt(status.pending) !== 0n || BigInt(status.queued) !== 0n) {
      throw new Error(
        `inOneBlock: ${BigInt(status.pending) + BigInt(status.queued)} transactions did not fit in the block`,
      );
    }
  } finally {
    await setAutomine(rpcUrl, true);
  }
  return { result, block: await latestBlock(rpcUrl) };
}

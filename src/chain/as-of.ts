import type { AsOf } from '../lib/as-of.ts';
import { TallyError } from '../lib/errors.ts';
import { getBlockHeader } from './blocks.ts';
import type { ChainClient } from './client.ts';

export type { AsOf } from '../lib/as-of.ts';

/**
 * Resolves the as-of point: block `asOfBlock` when given, else `latest - confirmations` when a
 * confirmation depth is given, else the chain's `finalized` block. Read-only.
 */
export async function resolveAsOf(
  client: ChainClient,
  options: { asOfBlock?: bigint | undefined; confirmations?: number | undefined; signal?: AbortSignal } = {},
): Promise<AsOf> {
  if (options.asOfBlock !== undefined && options.confirmations !== undefined) {
    throw new TallyError('set an as-of block or a confirmation depth, not both');
  }
  let ref: bigint | 'finalized' = 'finalized';
  if (options.asOfBlock !== undefined) ref = options.asOfBlock;
  else if (options.confirmations !== undefined) {
    const latest = await getBlockHeader(client, 'latest', { signal: options.signal });
    const target = latest.number - BigInt(options.confirmations);
    if (target < 0n)
      throw new TallyError(
        `the chain has ${latest.number + 1n} blocks, fewer than ${options.confirmations} confirmations`,
      );
    ref = target;
  }
  const header = await getBlockHeader(client, ref, { signal: options.signal });
  return { number: header.number, hash: header.hash, timestamp: header.timestamp };
}

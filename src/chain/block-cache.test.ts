import { describe, expect, it } from 'vitest';
import { BlockCache } from './block-cache.ts';
import type { ChainClient } from './client.ts';

/** A client that answers eth_getBlockByNumber for any number and counts the calls. */
function countingClient(): { client: ChainClient; calls: () => number } {
  let calls = 0;
  const request = async (
    _method: string,
    params: readonly unknown[],
    options?: { validate?: (r: unknown) => unknown },
  ) => {
    calls++;
    const n = BigInt(params[0] as string);
    const block = {
      number: `0x${n.toString(16)}`,
      hash: `0x${n.toString(16).padStart(64, 'a')}`,
      parentHash: `0x${'0'.repeat(64)}`,
      timestamp: `0x${(1000n + n).toString(16)}`,
    };
    return options?.validate ? options.validate(block) : block;
  };
  return { client: { request } as unknown as ChainClient, calls: () => calls };
}

describe('BlockCache', () => {
  it('default: a header is fetched once while it stays in the cache', async () => {
    const { client, calls } = countingClient();
    const cache = new BlockCache(client, undefined, 3);
    await cache.get(1n);
    await cache.get(1n);
    expect(calls()).toBe(1);
  });

  it('behavior: it keeps the most recently used headers only, so memory stays bounded', async () => {
    const { client, calls } = countingClient();
    const cache = new BlockCache(client, undefined, 3);
    for (const n of [1n, 2n, 3n]) await cache.get(n);
    await cache.get(1n); // 1 is now the most recent; 2 the oldest
    await cache.get(4n); // evicts 2
    expect(cache.size).toBe(3);
    expect(calls()).toBe(4);
    await cache.get(1n); // still there
    expect(calls()).toBe(4);
    await cache.get(2n); // was evicted: fetched again
    expect(calls()).toBe(5);
    for (let n = 10n; n < 1000n; n++) await cache.get(n);
    expect(cache.size).toBe(3);
  });
});

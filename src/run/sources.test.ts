import { describe, expect, it } from 'vitest';
import { buildSources } from './sources.ts';

describe('buildSources', () => {
  it('default', () => {
    // as-of at 2025-01-01T00:00:00Z (1735689600), read 90 seconds later.
    const sources = buildSources(
      {
        source: 'catalog.json',
        fetchedAt: new Date('2025-01-01T00:00:05Z'),
        items: 3,
        listings: 2,
        rejected: 1,
        sha256: 'ab',
      },
      {
        chainId: 8453,
        contract: '0xc',
        indexedToBlock: 7n,
        indexedToTimestamp: 1_735_689_600n,
        now: new Date('2025-01-01T00:01:30Z'),
      },
    );
    expect(sources).toEqual([
      {
        name: 'catalog',
        source: 'catalog.json',
        fetched_at: '2025-01-01T00:00:05.000Z',
        items: 3,
        listings: 2,
        rejected: 1,
        sha256: 'ab',
      },
      {
        name: 'base_usdc',
        chain_id: 8453,
        contract: '0xc',
        indexed_to_block: 7,
        indexed_to_timestamp: '2025-01-01T00:00:00.000Z',
        lag_seconds: 90,
      },
    ]);
  });

  it('behavior: a clock behind the block gives lag 0, never negative', () => {
    const sources = buildSources(
      { source: 's', fetchedAt: new Date(0), items: 0, listings: 0, rejected: 0, sha256: '' },
      { chainId: 1, contract: '0xc', indexedToBlock: 1n, indexedToTimestamp: 100n, now: new Date(50_000) },
    );
    expect((sources[1] as { lag_seconds: number }).lag_seconds).toBe(0);
  });
});

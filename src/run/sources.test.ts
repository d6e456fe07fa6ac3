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

  it('behavior: with the 3.0.0 streams, one source per stream with its logs and its coverage', () => {
    // Window day start 2025-01-01T00:00:00Z (1735689600); the lookback 30 days before it is
    // 2024-12-02T00:00:00Z. as-of 2025-01-31T00:00:00Z (1738281600), read 10 seconds later.
    const sources = buildSources(
      { source: 's', fetchedAt: new Date(0), items: 0, listings: 0, rejected: 0, sha256: '' },
      {
        chainId: 8453,
        contract: '0xUSDC',
        indexedToBlock: 9n,
        indexedToTimestamp: 1_738_281_600n,
        now: new Date('2025-01-31T00:00:10Z'),
      },
      { windowDayStart: 1_735_689_600n, lookbackSeconds: 2_592_000, channelsFromBlock: 5n },
    );
    const to = { indexed_to_block: 9, indexed_to_timestamp: '2025-01-31T00:00:00.000Z', lag_seconds: 10 };
    expect(sources.slice(2)).toEqual([
      {
        name: 'x402_proxies',
        chain_id: 8453,
        contracts: ['0x402085c248eea27d92e8b30b2c58ed07f9e20001', '0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002'],
        topic0: [
          '0x97088ec3606cfe8cc112180570d03fcde05f9b8e1bfef8e27784eaf5dd5691b6',
          '0xde5b89d10fc800c459329c382fabfcad0be0ed7e5328e01fae04e507b09ef5d8',
        ],
        covers_from: '2025-01-01T00:00:00.000Z',
        ...to,
      },
      {
        name: 'x402_claims',
        chain_id: 8453,
        contracts: ['0x4020074e9df2ce1dee5a9c1b5c3f541d02a10003'],
        topic0: ['0x36bd546bb573e8921fdbfd934bbed62d872796b01792cd240cce27f79dd3eddd'],
        covers_from: '2025-01-01T00:00:00.000Z',
        ...to,
      },
      {
        name: 'x402_channels',
        chain_id: 8453,
        contracts: ['0x4020074e9df2ce1dee5a9c1b5c3f541d02a10003'],
        topic0: ['0x69d8248d5566bdb2ebc4d218970710d8378a2ff9b709a999e052b71970f808fa'],
        from_block: 5,
        ...to,
      },
      {
        name: 'seller_outgoing',
        chain_id: 8453,
        contracts: ['0xusdc'],
        topic0: ['0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'],
        covers_from: '2024-12-02T00:00:00.000Z',
        ...to,
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

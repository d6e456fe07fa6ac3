import { describe, expect, it } from 'vitest';
import { chunkAt, ChunkSizer } from './chunk-size.ts';

describe('ChunkSizer', () => {
  it('default: starts at a sixteenth of the largest span', () => {
    expect(new ChunkSizer(200_000n, 2_000).size).toBe(12_500n);
  });

  it('behavior: grows at most twofold per chunk while the density allows, up to the largest span', () => {
    const sizer = new ChunkSizer(200_000n, 2_000);
    sizer.observe(12_500n, 0); // nothing seen: the largest span would do, but one doubling
    expect(sizer.size).toBe(25_000n);
    // 500 in 25,000 blocks: 200,000 blocks would hold 4,000 (> 2,000), 100,000 hold 2,000; one doubling
    sizer.observe(25_000n, 500);
    expect(sizer.size).toBe(50_000n);
    sizer.observe(50_000n, 1_000);
    expect(sizer.size).toBe(100_000n);
    sizer.observe(100_000n, 0);
    expect(sizer.size).toBe(200_000n);
    sizer.observe(200_000n, 0);
    expect(sizer.size).toBe(200_000n);
  });

  it('behavior: with emptyJumps, an empty chunk lets the span grow to the largest whose logs would fit had it held one', () => {
    const sizer = new ChunkSizer(200_000n, 2_000, { emptyJumps: true });
    sizer.observe(12_500n, 0); // one log in 12,500 blocks: 16 in 200,000, within 2,000
    expect(sizer.size).toBe(200_000n);
    const tight = new ChunkSizer(200_000n, 10, { emptyJumps: true });
    // one log in 12,500 blocks: 200,000 blocks would hold 16 (> 10), 100,000 hold 8
    tight.observe(12_500n, 0);
    expect(tight.size).toBe(100_000n);
    tight.observe(100_000n, 300); // logs seen: the density rule as without the option
    expect(tight.size).toBe(3_125n);
  });

  it('behavior: shrinks at once to a span whose expected transfers fit the target', () => {
    const sizer = new ChunkSizer(200_000n, 2_000);
    // 20,000 in 100,000 blocks (0.2 a block): 12,500 blocks hold 2,500, 6,250 hold 1,250
    sizer.observe(100_000n, 20_000);
    expect(sizer.size).toBe(6_250n);
  });

  it('args: down to one block when a single block holds more than the target', () => {
    const sizer = new ChunkSizer(8n, 1);
    expect(sizer.size).toBe(1n); // 8 / 16 rounds to nothing: the smallest span, one block
    sizer.observe(1n, 100);
    expect(sizer.size).toBe(1n);
    sizer.observe(1n, 0);
    expect(sizer.size).toBe(2n);
  });
});

describe('chunkAt', () => {
  it('default: ends before the next multiple of the span', () => {
    expect(chunkAt(95n, 100n, 312n)).toEqual([95n, 99n]);
    expect(chunkAt(100n, 100n, 312n)).toEqual([100n, 199n]);
  });
  it('args: stops at the last block', () => {
    expect(chunkAt(300n, 100n, 312n)).toEqual([300n, 312n]);
    expect(chunkAt(7n, 100n, 7n)).toEqual([7n, 7n]);
  });
});

import { describe, expect, it } from 'vitest';
import { alignedChunks, batches, utcDayStart } from './ranges.ts';

describe('alignedChunks', () => {
  it('default: cuts at multiples of the size', () => {
    expect(alignedChunks(95n, 312n, 100n)).toEqual([
      [95n, 99n],
      [100n, 199n],
      [200n, 299n],
      [300n, 312n],
    ]);
  });
  it('args: one block', () => {
    expect(alignedChunks(7n, 7n, 100n)).toEqual([[7n, 7n]]);
  });
  it('args: empty when from > to', () => {
    expect(alignedChunks(8n, 7n, 100n)).toEqual([]);
  });
  it('behavior: chunks cover the range exactly once', () => {
    const chunks = alignedChunks(3n, 1000n, 64n);
    let next = 3n;
    for (const [a, b] of chunks) {
      expect(a).toBe(next);
      expect(b >= a && b - a < 64n).toBe(true);
      next = b + 1n;
    }
    expect(next).toBe(1001n);
  });
});

describe('utcDayStart', () => {
  it('default: midnight UTC of the day', () => {
    expect(utcDayStart(BigInt(Date.parse('2025-03-04T17:20:00Z') / 1000))).toBe(
      BigInt(Date.parse('2025-03-04T00:00:00Z') / 1000),
    );
  });
  it('args: midnight itself', () => {
    expect(utcDayStart(86_400n * 3n)).toBe(86_400n * 3n);
  });
});

describe('batches', () => {
  it('default', () => {
    expect(batches([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
  });
});

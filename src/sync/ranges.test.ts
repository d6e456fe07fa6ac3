import { describe, expect, it } from 'vitest';
import { batches, utcDayStart } from './ranges.ts';

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

import { describe, expect, it } from 'vitest';
import { parseJsonLossless, stringifyJson } from './json.ts';

describe('stringifyJson', () => {
  it('default: writes a bigint above 2^53 as an exact bare integer', () => {
    expect(stringifyJson({ v: 2n ** 64n + 1n, n: 1, s: 'x' })).toBe('{"v":18446744073709551617,"n":1,"s":"x"}');
  });
  it('behavior: leaves strings that look like numbers alone', () => {
    expect(stringifyJson({ s: '18446744073709551617' })).toBe('{"s":"18446744073709551617"}');
  });
});

describe('parseJsonLossless', () => {
  it('default: reads long integers as bigint and short ones as numbers', () => {
    expect(parseJsonLossless('{"a":18446744073709551617,"b":[12,-9007199254740993],"c":1.5}')).toEqual({
      a: 18446744073709551617n,
      b: [12, -9007199254740993n],
      c: 1.5,
    });
  });
  it('behavior: never touches digits inside strings, even after escaped quotes', () => {
    expect(parseJsonLossless('{"d":"x\\":12345678901234567890","e":1}')).toEqual({ d: 'x":12345678901234567890', e: 1 });
  });
  it('behavior: round-trips with stringifyJson', () => {
    const value = { m: 10n ** 30n, l: ['a', 3] };
    expect(parseJsonLossless(stringifyJson(value))).toEqual(value);
  });
});

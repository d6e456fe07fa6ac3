import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseJsonLossless, writeJson } from './json.ts';

describe('writeJson', () => {
  it('default: a bigint above 2^53 is written with all its digits', () => {
    // 2^53 + 1 = 9007199254740993; through a JS number it would become ...992.
    expect(writeJson({ v: 2n ** 53n + 1n })).toBe('{"v":9007199254740993}');
    expect(writeJson([10n ** 30n])).toBe('[1000000000000000000000000000000]');
  });

  it('behavior: plain data without bigint matches JSON.stringify', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(writeJson(v)).toBe(JSON.stringify(v));
      }),
    );
  });

  it('behavior: a string that looks like a marker stays a string', () => {
    const text = '\u0000big:123';
    expect(JSON.parse(writeJson({ s: text }))).toEqual({ s: text });
  });

  it('behavior: undefined members are left out, undefined array items become null', () => {
    expect(writeJson({ a: undefined, b: 1, c: [undefined] })).toBe('{"b":1,"c":[null]}');
  });

  it('error: a non-finite number or a function is refused', () => {
    expect(() => writeJson(Number.NaN)).toThrow(TypeError);
    expect(() => writeJson(() => 1)).toThrow(TypeError);
  });

  it('behavior: with an indent, the layout of JSON.stringify(value, null, indent)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(writeJson(v, 2)).toBe(JSON.stringify(v, null, 2));
      }),
    );
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
    expect(parseJsonLossless('{"d":"x\\":12345678901234567890","e":1}')).toEqual({
      d: 'x":12345678901234567890',
      e: 1,
    });
  });
  it('behavior: round-trips with writeJson', () => {
    const value = { m: 10n ** 30n, l: ['a', 3] };
    expect(parseJsonLossless(writeJson(value))).toEqual(value);
  });
});

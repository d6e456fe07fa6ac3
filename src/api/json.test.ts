import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { writeJson } from './json.ts';

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
});

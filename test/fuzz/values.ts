import fc from 'fast-check';
import { CATEGORIES } from '../../src/lib/categories.ts';
import { BUNDLE_FILE_NAMES } from '../../src/publish/index.ts';
import { A, B, C, D } from '../api/fixture.ts';

/**
 * The values the parameter fuzz (./params.test.ts) gives API parameters and MCP tool arguments:
 * boundaries every parameter gets, values each known parameter takes (so a request gets past
 * validation and one bad value is what is judged), and random hostile text.
 */

export const DATES = [
  '0000-01-01',
  '0000-02-29',
  '0001-01-01',
  '1969-12-31',
  '1970-01-01',
  '2038-01-19',
  '2023-02-29',
  '1900-02-29',
  '2100-02-29',
  '2024-02-29',
  '9999-12-31',
  '10000-01-01',
  '-0001-01-01',
  '2025-12-31T00:00:00Z',
  '2025-1-1',
];
export const INTEGERS = [
  '-1',
  '0',
  '1',
  '2147483647',
  '2147483648',
  '9007199254740992',
  '9223372036854775807',
  '9223372036854775808',
  '1e400',
  '01',
  '+1',
  ' 1',
  '1 ',
  '1.5',
  '-0',
  '0x10',
  'NaN',
  'Infinity',
];
export const BREAKERS = [
  '\0',
  'a\0b',
  'inference\0',
  '\uD800',
  'a\uDC00b',
  'inference\uDBFF',
  '\uD83D\uDE00a', // a well-formed surrogate pair
  '\uFFFD',
  '\uFFFF',
  '',
  ' ',
  '%',
  '%00',
  '..',
  "'",
  '\\',
  'a'.repeat(201),
  'x'.repeat(10_240),
  'word '.repeat(2_048),
  '\u00e9'.repeat(200),
];
/** What every parameter and argument is tried with, one by one (the sweep). */
export const BOUNDARIES = [...BREAKERS, ...DATES, ...INTEGERS];

/** Text that should never break anything: boundaries and random strings of any code unit. */
export const hostile: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...BOUNDARIES),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('\0', '\uD800', '\uDC00', 'a', '1', ' ', '-', ':', '\u00e9'), maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);

/** 64 hex digits: `tag` and then `n` in hex (the layout of every cursor, src/api/cursor.ts). */
const cursorOf = (tag: string, n: bigint) => tag + n.toString(16).padStart(62, '0');

/**
 * Values each known parameter (API) or argument (MCP) takes; one not listed here gets hostile
 * text only, so a new parameter is fuzzed too. DEFAULTS: one each, for the parameters a request
 * must give (path parameters, required arguments) while another one is tried.
 */
export const TAKES: Record<string, fc.Arbitrary<string>> = {
  generation: fc.constantFrom('1', '1', '1', '2'),
  limit: fc.constantFrom('1', '2', '5', '50', '500'),
  cursor: fc.oneof(
    fc.tuple(fc.constantFrom('01', '02', '03', '06'), fc.bigInt({ min: 0n, max: 10n })).map(([t, n]) => cursorOf(t, n)),
    fc
      .tuple(fc.constantFrom('01', '02', '03'), fc.bigInt({ min: 0n, max: 2n ** 248n - 1n }))
      .map(([t, n]) => cursorOf(t, n)),
    fc.constantFrom(cursorOf('03', 2n ** 31n - 1n), cursorOf('02', 2n ** 63n * 2n ** 16n), cursorOf('01', 2n ** 31n)),
  ),
  category: fc.constantFrom(...CATEGORIES),
  tier: fc.constantFrom('verified', 'listed_only'),
  format: fc.constantFrom('json', 'csv'),
  q: fc.constantFrom('inference', 'alpha beta', 'Gamma search', 'llm', 'testnet art', 'Ω 1', 'a'),
  query: fc.constantFrom('inference', 'alpha', 'beta chat', 'images', 'Ω 1'),
  from: fc.constantFrom(
    '0001-01-01',
    '1969-12-31',
    '2024-02-29',
    '2025-12-02',
    '2025-12-30',
    '2038-01-19',
    '9999-12-31',
  ),
  to: fc.constantFrom('0001-01-01', '1970-01-01', '2025-12-31', '2038-01-19', '9999-12-31'),
  slug: fc.constantFrom(A, B, C, D, A.toUpperCase().replace('0X', '0x'), `0x${'99'.repeat(20)}`),
  address: fc.constantFrom(A, B, C, `0x${'99'.repeat(20)}`),
  file: fc.constantFrom(...BUNDLE_FILE_NAMES),
  id: fc.constantFrom(`op_${A.slice(2)}`, `op_${A.slice(2).toUpperCase()}`, `op_${'99'.repeat(20)}`),
};
export const DEFAULTS: Record<string, string> = {
  generation: '1',
  slug: A,
  file: 'manifest.json',
  query: 'inference',
  address: A,
  id: `op_${A.slice(2)}`,
};

/** Code units Postgres cannot take in a text value (U+0000) or UTF-8 cannot encode (unpaired surrogates). */
const POISON = ['\0', '\uD800', '\uDBFF', '\uDC00', '\uDFFF'];
export const NOT_STORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A value a parameter takes with one poisoned code unit put in anywhere (it passes every check but that one). */
export const poisoned = (takes: fc.Arbitrary<string>) =>
  fc
    .tuple(takes, fc.constantFrom(...POISON), fc.nat())
    .map(([v, bad, at]) => v.slice(0, at % (v.length + 1)) + bad + v.slice(at % (v.length + 1)));

/** The bad text of a parameter: what it takes, poisoned; or hostile text. */
export const badTextOf = (name: string) =>
  fc.oneof({ weight: 2, arbitrary: poisoned(TAKES[name] ?? hostile) }, { weight: 1, arbitrary: hostile });

/** True one time in eight (a parameter given twice). */
export const rarely = fc.integer({ min: 0, max: 7 }).map((n) => n === 0);
/** A value one time in eight, else undefined (an unknown parameter). */
export const seldom = <T>(value: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 7, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value });

/** Every string in a JSON value. */
export const textsOf = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : v !== null && typeof v === 'object' ? Object.values(v).flatMap(textsOf) : [];

/**
 * Percent-encodes text as its UTF-16 code units would be written as bytes: the well-formed parts
 * as UTF-8 (encodeURIComponent), an unpaired surrogate as the three bytes a naive encoder writes
 * for it (0xED 0xA0..0xBF xx, not UTF-8), since encodeURIComponent refuses it.
 */
export function percentEncode(s: string): string {
  return s
    .split(/([\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF])/)
    .map((part, i) => {
      if (i % 2 === 0) return encodeURIComponent(part);
      const u = part.charCodeAt(0);
      return [0xe0 | (u >> 12), 0x80 | ((u >> 6) & 0x3f), 0x80 | (u & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    })
    .join('');
}

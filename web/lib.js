// What every view of the page shares: the URL state, reading the API of this origin with exact
// integers, and formatting. Plain ES module, no build step.

export const params = new URLSearchParams(location.search);
export const pinned = params.get('generation');

/** A link to this page with the given parameters, keeping a pinned generation. */
export function link(p) {
  const q = new URLSearchParams(p);
  if (pinned) q.set('generation', pinned);
  const text = q.toString();
  return text ? `/?${text}` : '/';
}

/**
 * Does this browser's JSON.parse give a reviver the source text of each value (its third argument,
 * `context.source`, the "JSON.parse source text access" proposal, in Chromium since 114)? Browsers
 * without it take the fallback, quoteBigIntegers. Asked once, at load.
 */
const sourceAccess = (() => {
  let source;
  JSON.parse('7', (_key, value, context) => ((source = context?.source), value));
  return source === '7';
})();

/** A JSON integer token (no fraction, no exponent). */
export const INTEGER = /^-?\d+$/;

/**
 * A JSON string token or a number token, in the order they occur. A string is matched whole, so
 * the digits inside catalog text (a title like `Oracle ,12345678901234567890, feed`) are never
 * taken for a number; the string alternative is unrolled (`[^"\\]*(?:\\.[^"\\]*)*`) to match long
 * strings without backtracking.
 */
const TOKENS = /"[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * The fallback for browsers without source access: the JSON text with every integer token beyond
 * Number.MAX_SAFE_INTEGER put in quotes, so JSON.parse reads it as its exact digits. Only tokens
 * outside strings are touched. Exported for the tests.
 */
export function quoteBigIntegers(text) {
  return text.replace(TOKENS, (token) =>
    INTEGER.test(token) && !Number.isSafeInteger(Number(token)) ? `"${token}"` : token,
  );
}

/**
 * JSON.parse that keeps integers beyond Number.MAX_SAFE_INTEGER (money above 2^53 - 1 micro-USDC)
 * as strings of their exact digits; every other value as JSON.parse reads it. The values of the
 * page are used accordingly: usdc() and compare() take an integer as a number or as digits.
 */
export function parseExact(text) {
  if (!sourceAccess) return JSON.parse(quoteBigIntegers(text));
  return JSON.parse(text, (_key, value, context) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && INTEGER.test(context.source) ? context.source : value,
  );
}

/** The URL of an API path of the pinned (or latest) generation, with `extra` query parameters. */
export function apiUrl(path, extra = {}) {
  const q = new URLSearchParams(extra);
  if (pinned) q.set('generation', pinned);
  return `/api/v1${path}${q.toString() ? `?${q}` : ''}`;
}

/** GET an API path of the pinned (or latest) generation, integers exact (parseExact). */
export async function api(path, extra = {}) {
  const url = apiUrl(path, extra);
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  const body = parseExact(await res.text());
  if (!res.ok) throw new Error(body?.error?.message ?? `${res.status} for ${url}`);
  return body;
}

/** Every row of a paged endpoint. */
export async function all(path, key, extra = {}) {
  const rows = [];
  let cursor = null;
  do {
    const page = await api(path, { ...extra, ...(cursor ? { cursor } : {}) });
    rows.push(...page[key]);
    cursor = page.next_cursor;
  } while (cursor);
  return rows;
}

/** micro-USDC (an integer, as a string) as USDC, exactly: 1234567 -> "1.234567", 1500000 -> "1.50". */
export function usdc(micro) {
  if (micro === null || micro === undefined) return '–';
  const negative = String(micro).startsWith('-');
  const digits = String(micro).replace(/^-/, '').padStart(7, '0');
  const whole = digits.slice(0, -6).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const frac = digits.slice(-6).replace(/0+$/, '').padEnd(2, '0');
  return `${negative ? '-' : ''}${whole}.${frac}`;
}

export const esc = (s) =>
  String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
export const count = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en-US'));
export const short = (a) => `${a.slice(0, 8)}…${a.slice(-4)}`;

/** An integer as the page holds one: a number, or the exact digits of one beyond 2^53 - 1. */
const isInteger = (x) => Number.isInteger(x) || (typeof x === 'string' && INTEGER.test(x));

/** Compares integers (numbers or digit strings, exactly, as bigints), other numbers, and text. */
export function compare(a, b) {
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : -1;
  if (b === null || b === undefined) return 1;
  if (isInteger(a) && isInteger(b)) {
    const d = BigInt(a) - BigInt(b);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b));
}

/**
 * Whether a generation has method 3.0.0's numbers (classes, external revenue): method 3.x. Older
 * generations serve those fields as null, and the page shows what it showed before.
 */
export function hasClasses(methodVersion) {
  return Number(/^(\d+)\./.exec(methodVersion)?.[1] ?? 0) >= 3;
}

/** The farm reasons of a row (a JSON array as text), e.g. ["listing_count>50"]. */
export const reasonsOf = (row) => JSON.parse(row.farm_reasons ?? '[]');

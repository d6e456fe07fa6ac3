/**
 * JSON with exact big integers. Money can exceed 2^53 - 1, which a JS number cannot hold, so a
 * bigint is written as a bare JSON integer from its digits and read back as a bigint.
 */

/**
 * The JSON writer of every API body, bundle file and stored JSON value: a bigint is written as a
 * bare JSON integer from its decimal digits, never through a number. Strings go through
 * JSON.stringify (correct escaping); no marker strings are used, so no text a seller writes into
 * the catalog can turn into a number. With `indent` > 0 the output is pretty-printed like
 * JSON.stringify(value, null, indent).
 *
 * Accepts plain data only (null, boolean, finite number, string, bigint, Date, arrays, plain
 * objects); `undefined` object members are left out as JSON.stringify does. Pure.
 */
export function writeJson(value: unknown, indent = 0, depth = 0): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('cannot write a non-finite number as JSON');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (value instanceof Date) return JSON.stringify(value.toISOString());
      const inner = indent > 0 ? `\n${' '.repeat(indent * (depth + 1))}` : '';
      const outer = indent > 0 ? `\n${' '.repeat(indent * depth)}` : '';
      const colon = indent > 0 ? ': ' : ':';
      const parts: string[] = [];
      if (Array.isArray(value)) {
        for (const v of value) parts.push(writeJson(v === undefined ? null : v, indent, depth + 1));
        return parts.length === 0 ? '[]' : `[${inner}${parts.join(`,${inner}`)}${outer}]`;
      }
      for (const [key, v] of Object.entries(value)) {
        if (v === undefined) continue;
        parts.push(`${JSON.stringify(key)}${colon}${writeJson(v, indent, depth + 1)}`);
      }
      return parts.length === 0 ? '{}' : `{${inner}${parts.join(`,${inner}`)}${outer}}`;
    }
    default:
      throw new TypeError(`cannot write a ${typeof value} as JSON`);
  }
}

/**
 * JSON.parse that returns every integer literal of more than 15 digits as a bigint (smaller ones
 * are exact as numbers). Only number tokens outside strings are touched.
 */
export function parseJsonLossless(text: string): unknown {
  let out = '';
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      continue;
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j]!)) j++;
      const token = text.slice(i, j);
      if (/^-?\d{16,}$/.test(token)) {
        out += `${text.slice(last, i)}"\\u0000big:${token}"`;
        last = j;
      }
      i = j - 1;
    }
  }
  out += text.slice(last);
  return JSON.parse(out, (_key, v) => (typeof v === 'string' && v.startsWith('\u0000big:') ? BigInt(v.slice(5)) : v));
}

/**
 * JSON with exact big integers. Money can exceed 2^53 - 1, which a JS number cannot hold, so
 * bigint values are written as bare JSON integers and read back as bigint.
 */

/** JSON.stringify that writes a bigint as a bare integer (never through a number). */
export function stringifyJson(value: unknown, space?: number): string {
  const marker = '\u0000big:';
  const text = JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? `${marker}${v}` : v), space);
  // A marked string is `"\u0000big:123"` in the output (the NUL is escaped as \u0000).
  return text.replace(/"\\u0000big:(-?\d+)"/g, '$1');
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
  return JSON.parse(out, (_key, v) =>
    typeof v === 'string' && v.startsWith('\u0000big:') ? BigInt(v.slice(5)) : v,
  );
}

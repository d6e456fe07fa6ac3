/**
 * The JSON writer of every API body. Money can exceed 2^53 - 1, which a JS number cannot hold,
 * so a bigint is written as a bare JSON integer from its decimal digits, never through a number.
 * Strings go through JSON.stringify (correct escaping); no marker strings are used, so no text a
 * seller writes into the catalog can turn into a number.
 *
 * Accepts plain data only (null, boolean, finite number, string, bigint, arrays, plain objects);
 * `undefined` object members are left out as JSON.stringify does. Pure; safe to call repeatedly.
 */
export function writeJson(value: unknown): string {
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
      if (Array.isArray(value)) return `[${value.map((v) => writeJson(v === undefined ? null : v)).join(',')}]`;
      if (value instanceof Date) return JSON.stringify(value.toISOString());
      const parts: string[] = [];
      for (const [key, v] of Object.entries(value)) {
        if (v === undefined) continue;
        parts.push(`${JSON.stringify(key)}:${writeJson(v)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new TypeError(`cannot write a ${typeof value} as JSON`);
  }
}

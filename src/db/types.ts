/**
 * How database values become JavaScript values, the same on both backends: integers that can
 * exceed 2^53 (int8, integral numeric) become bigint so money stays exact; `date` stays the
 * ISO text `YYYY-MM-DD` (no time zone shift through Date).
 */
export const OID = { int8: 20, numeric: 1700, date: 1082, numericArray: 1231 } as const;

export function parseInt8(text: string): bigint {
  return BigInt(text);
}

/** Integral numerics (all money) become bigint; a fractional numeric stays text. */
export function parseNumeric(text: string): bigint | string {
  return /^-?\d+$/.test(text) ? BigInt(text) : text;
}

export function parseDate(text: string): string {
  return text;
}

/** Start of the UTC day holding `ts` (unix seconds, >= 0). */
export function utcDayStart(ts: bigint): bigint {
  return ts - (((ts % 86_400n) + 86_400n) % 86_400n);
}

/** `items` cut into consecutive batches of at most `size`. */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

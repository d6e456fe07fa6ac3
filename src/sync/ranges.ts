/**
 * Inclusive block ranges [from, to] cut at multiples of `size`, so that batches starting at
 * different blocks still share chunk boundaries (and the end blocks' headers are fetched once).
 * Empty when from > to.
 */
export function alignedChunks(from: bigint, to: bigint, size: bigint): [bigint, bigint][] {
  if (size <= 0n) throw new RangeError('chunk size must be positive');
  const chunks: [bigint, bigint][] = [];
  for (let start = from; start <= to;) {
    const boundary = (start / size + 1n) * size - 1n;
    const end = boundary < to ? boundary : to;
    chunks.push([start, end]);
    start = end + 1n;
  }
  return chunks;
}

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

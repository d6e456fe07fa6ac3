/**
 * The block a generation is computed as of: number, hash and timestamp (unix seconds). One type
 * for every stage that passes it along (chain resolves it, sync reads up to it, the method and
 * the run record it).
 */
export interface AsOf {
  number: bigint;
  hash: `0x${string}`;
  /** Unix seconds. */
  timestamp: bigint;
}

const DAY_SECONDS = 86_400n;

/**
 * The window of a generation as of `asOfTs` (unix seconds): (windowStartTs, windowEndTs], where
 * windowEndTs is the as-of time, and the start of the first market day (the UTC day holding the
 * window's start). The one definition: the method computes with it and the API serves it.
 */
export function windowOf(
  asOfTs: bigint,
  windowSeconds: bigint,
): { windowStartTs: bigint; windowEndTs: bigint; marketFromTs: bigint } {
  const windowStartTs = asOfTs - windowSeconds;
  const marketFromTs = windowStartTs - (((windowStartTs % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS);
  return { windowStartTs, windowEndTs: asOfTs, marketFromTs };
}

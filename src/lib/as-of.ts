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

/**
 * The block span of a batch's next chunk, from the payment density seen so far (issue 11).
 *
 * A chunk is fetched whole and held in memory until it is stored, and a sync holds a few chunks per
 * batch (the one being stored and the ones fetched ahead). With a fixed span, what a chunk holds
 * grows with the chain's payments: 200,000 blocks of one 500-seller batch were ~1,500 transfers at
 * 200k payments a window and ~37,000 at 5M, and the process's peak memory grew with them. So the
 * span follows the density: after each fetched chunk, the next span is the largest of
 * `max`, `max / 2`, `max / 4`, ... (down to 1 block) whose expected transfers, at the density just
 * seen, stay within `target`; it at most doubles per chunk (one sparse stretch does not jump to the
 * largest span), and starts at `max / 16` before anything is seen. The spans stay power-of-two
 * fractions of `max`, so chunks cut at multiples of the span (chunkAt) of batches that move at the
 * same pace still end on the same blocks, whose headers are then fetched once.
 */
export class ChunkSizer {
  /** The span is max / 2^halvings. */
  #halvings: number;

  /**
   * `emptyJumps`: after a chunk that held nothing, the span may grow more than twofold, to the
   * largest whose logs stay within `target` if the empty chunk had held one (the most its density
   * could be below). Method 3.0.0's streams (src/sync/streams-read.ts), which are mostly empty: a
   * sellers' outgoing batch read its 1.3M blocks in ~11 chunks of 12,500, 25,000, ... blocks, each
   * rewriting the coverage of its 500 sellers, where 1 + 7 do.
   */
  constructor(
    readonly max: bigint,
    readonly target: number,
    private readonly options: { emptyJumps?: boolean } = {},
  ) {
    if (max <= 0n) throw new RangeError('chunk size must be positive');
    if (!(target > 0)) throw new RangeError('target transfers per chunk must be positive');
    this.#halvings = 0;
    while (this.#halvings < 4 && this.max >> BigInt(this.#halvings + 1) > 0n) this.#halvings++;
  }

  /** Blocks of the next chunk. */
  get size(): bigint {
    return this.max >> BigInt(this.#halvings);
  }

  /** A fetched chunk of `blocks` blocks held `transfers` transfers. */
  observe(blocks: bigint, transfers: number): void {
    let halvings = 0;
    if (transfers === 0 && this.options.emptyJumps) {
      while (this.max >> BigInt(halvings + 1) > 0n && this.max >> BigInt(halvings) > BigInt(this.target) * blocks)
        halvings++;
      this.#halvings = halvings;
      return;
    }
    // while (span * transfers / blocks > target) and the span is more than 1 block, in integers
    while (
      this.max >> BigInt(halvings + 1) > 0n &&
      (this.max >> BigInt(halvings)) * BigInt(transfers) > BigInt(this.target) * blocks
    )
      halvings++;
    this.#halvings = Math.max(halvings, this.#halvings - 1); // at most double
  }
}

/**
 * The chunk starting at `from`: up to the next multiple of `size` (exclusive), at most `last`.
 * [from, to] inclusive.
 */
export function chunkAt(from: bigint, size: bigint, last: bigint): [bigint, bigint] {
  const boundary = (from / size + 1n) * size - 1n;
  return [from, boundary < last ? boundary : last];
}

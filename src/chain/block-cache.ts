import { getBlockHeader } from './blocks.ts';
import type { ChainClient } from './client.ts';
import type { BlockHeader } from './types.ts';

/**
 * Block headers fetched during one sync, by number, so that batches sharing chunk boundaries
 * fetch each header once. A header that contradicts logs is forgotten and fetched again. The
 * cache keeps the `capacity` most recently used headers: chunks of a sync move forward through
 * the chain, so an old header is not asked for again, and a whole window's headers (one per
 * block with a payment, ~1M for 1M payments) would otherwise stay in memory to the end of the run.
 */
export class BlockCache {
  readonly #pending = new Map<bigint, Promise<BlockHeader>>();

  constructor(
    private readonly client: ChainClient,
    private readonly run: <T>(fn: () => Promise<T>) => Promise<T> = (fn) => fn(),
    private readonly capacity = 20_000,
  ) {}

  /** Seeds a header known from elsewhere (the as-of block). */
  put(header: BlockHeader): void {
    this.#pending.set(header.number, Promise.resolve(header));
  }

  forget(number: bigint): void {
    this.#pending.delete(number);
  }

  /** The header at `number` (validated by getBlockHeader), fetched once. */
  get(number: bigint, signal?: AbortSignal): Promise<BlockHeader> {
    let pending = this.#pending.get(number);
    if (pending) {
      // most recently used last: Map keeps insertion order
      this.#pending.delete(number);
      this.#pending.set(number, pending);
      return pending;
    }
    pending = this.run(() => getBlockHeader(this.client, number, { signal }));
    this.#pending.set(number, pending);
    pending.catch(() => this.#pending.delete(number));
    if (this.#pending.size > this.capacity) this.#pending.delete(this.#pending.keys().next().value!);
    return pending;
  }

  /** Headers held now (at most the capacity). */
  get size(): number {
    return this.#pending.size;
  }
}

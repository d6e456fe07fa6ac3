import { getBlockHeader } from './blocks.ts';
import type { ChainClient } from './client.ts';
import type { BlockHeader } from './types.ts';

/**
 * Block headers fetched during one sync, by number, so that batches sharing chunk boundaries
 * fetch each header once. A header that contradicts logs is forgotten and fetched again.
 */
export class BlockCache {
  readonly #pending = new Map<bigint, Promise<BlockHeader>>();

  constructor(
    private readonly client: ChainClient,
    private readonly run: <T>(fn: () => Promise<T>) => Promise<T> = (fn) => fn(),
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
    if (!pending) {
      pending = this.run(() => getBlockHeader(this.client, number, { signal }));
      this.#pending.set(number, pending);
      pending.catch(() => this.#pending.delete(number));
    }
    return pending;
  }
}

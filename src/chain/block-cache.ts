import { TemporaryError } from '../lib/errors.ts';
import { getBlockHeader } from './blocks.ts';
import type { ChainClient } from './client.ts';
import type { BlockHeader, Hex } from './types.ts';

/**
 * Block headers fetched during one sync, by number, so that batches sharing chunk boundaries
 * fetch each header once. `hashes` holds the hashes of the headers fetched so far: a log response
 * that disagrees with them is rejected (validateLogs' knownHashes).
 */
export class BlockCache {
  readonly hashes = new Map<bigint, Hex>();
  readonly #pending = new Map<bigint, Promise<BlockHeader>>();

  constructor(
    private readonly client: ChainClient,
    private readonly run: <T>(fn: () => Promise<T>) => Promise<T> = (fn) => fn(),
  ) {}

  /** Seeds a header known from elsewhere (the as-of block). */
  put(header: BlockHeader): void {
    this.hashes.set(header.number, header.hash);
    this.#pending.set(header.number, Promise.resolve(header));
  }

  /**
   * The header at `number`. With `expectHash` (the hash the logs of that block carry), a fresh
   * fetch that disagrees is retried by the client; a cached header that disagrees means the chain
   * changed under the run, which a later run resolves (its reorg check), so it is temporary.
   */
  async get(number: bigint, expectHash?: Hex, signal?: AbortSignal): Promise<BlockHeader> {
    let pending = this.#pending.get(number);
    if (!pending) {
      pending = this.run(() => getBlockHeader(this.client, number, { expectHash, signal }));
      this.#pending.set(number, pending);
      pending.then(
        (h) => this.hashes.set(h.number, h.hash),
        () => this.#pending.delete(number),
      );
    }
    const header = await pending;
    if (expectHash !== undefined && header.hash !== expectHash) {
      throw new TemporaryError('the chain reorganised during the run: a block hash changed', {
        details: { block: number.toString() },
      });
    }
    return header;
  }
}

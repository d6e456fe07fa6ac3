import type { ChainClient } from '../../src/chain/index.ts';
import type { AsOf } from '../../src/lib/as-of.ts';
import type { CycleDeps } from '../../src/run/cycle.ts';

/**
 * The chain stages of a run replaced by a fixed as-of point and no payments: for tests of the run
 * around the chain (locks, scheduling). The client is never called, so it is an empty object.
 */
export function fixedChain(asOf: AsOf): Pick<CycleDeps, 'createChainClient' | 'resolveAsOf' | 'syncChain'> {
  return {
    createChainClient: () => ({}) as ChainClient,
    resolveAsOf: async () => asOf,
    syncChain: async () => ({
      sellers: 0,
      newSellers: 0,
      ranges: 0,
      transfers: 0,
      authorizations: 0,
      reorgedBlocks: 0,
      indexedToBlock: asOf.number,
    }),
  };
}

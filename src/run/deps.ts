import { readCatalog, storeCatalogSnapshot } from '../catalog/index.ts';
import { createChainClient, resolveAsOf } from '../chain/index.ts';
import { computeGeneration } from '../method/index.ts';
import { publishGeneration, pruneGenerations } from '../publish/index.ts';
import { syncChain } from '../sync/index.ts';
import type { CycleDeps } from './cycle.ts';

/** The real stages of a run (catalog -> chain -> method -> publish), bound once here. */
export function defaultDeps(): CycleDeps {
  return {
    readCatalog,
    storeCatalogSnapshot,
    createChainClient,
    resolveAsOf,
    syncChain,
    computeGeneration,
    publishGeneration,
    pruneGenerations,
  };
}

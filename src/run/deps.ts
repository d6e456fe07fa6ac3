import { readCatalog, storeCatalogSnapshot } from '../catalog/index.ts';
import { createChainClient, resolveAsOf } from '../chain/index.ts';
import { computeGeneration } from '../method/index.ts';
import { publishGeneration, pruneGenerations } from '../publish/index.ts';
import { syncChain } from '../sync/index.ts';

/**
 * The stages of a run, as a port: tests replace any of them, and src/run/cycle.ts calls them only
 * through it (defaultDeps below binds the real ones). Each member is the type of the real function,
 * so a stage whose signature changes fails to compile here and in every fake of it.
 */
export interface CycleDeps {
  readCatalog: typeof readCatalog;
  storeCatalogSnapshot: typeof storeCatalogSnapshot;
  createChainClient: typeof createChainClient;
  resolveAsOf: typeof resolveAsOf;
  syncChain: typeof syncChain;
  computeGeneration: typeof computeGeneration;
  publishGeneration: typeof publishGeneration;
  pruneGenerations: typeof pruneGenerations;
}

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

import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Address } from 'viem';
import { silentLogger, type Logger } from '../lib/log.ts';
import { projectRoot } from '../lib/paths.ts';
import { startAnvil } from './anvil.ts';
import { HISTORY_SECONDS } from './economy-plan.ts';
import { seedDemoEconomy, type EconomySummary } from './economy.ts';
import { deployUsdc } from './usdc.ts';
import { installX402Contracts } from './x402-contracts.ts';

/** The real Bazaar crawl committed with the project (see fixtures/catalog/README.md). */
export const DEMO_CATALOG_PATH = path.join(projectRoot, 'fixtures', 'catalog', 'bazaar-catalog-2025-12-31.json');

/** The items of a catalog file: a discovery page `{items}`, a crawl `{resources}` or a bare array. */
export function readCatalogItems(file: string): unknown[] {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (Array.isArray(parsed)) return parsed;
  const body = parsed as { items?: unknown; resources?: unknown };
  if (Array.isArray(body.items)) return body.items;
  if (Array.isArray(body.resources)) return body.resources;
  throw new Error(`readCatalogItems: ${path.basename(file)} holds no items`);
}

export interface DemoChain {
  url: string;
  port: number;
  chainId: number;
  /** lowercase; the Base USDC address */
  usdcAddress: Address;
  summary: EconomySummary;
  /** Stops the node. Safe to call more than once. */
  stop(): Promise<void>;
}

/**
 * The whole local demo chain in one call: a fresh anvil node (chain id 8453, genesis 37 days
 * before `asOfTs`, `finalized` = latest - 2), Circle's USDC at the Base address, the x402
 * settlement contracts' stand-ins at their canonical addresses, and the seeded demo economy over
 * the catalog's sellers (default: the committed real crawl) ending at `asOfTs` (default now), with
 * x402-economy.ts's Permit2, channel and internal-payment scenarios among it. Offline. On failure the node is stopped before the error is thrown.
 */
export async function startDemoChain(
  options: {
    log?: Logger;
    catalogItems?: readonly unknown[];
    asOfTs?: bigint;
    onProgress?: (done: number, total: number) => void;
  } = {},
): Promise<DemoChain> {
  const log = options.log ?? silentLogger;
  const started = performance.now();
  const asOfTs = options.asOfTs ?? BigInt(Math.floor(Date.now() / 1000));
  const catalogItems = options.catalogItems ?? readCatalogItems(DEMO_CATALOG_PATH);
  const anvil = await startAnvil({ timestamp: asOfTs - HISTORY_SECONDS - 86_400n, slotsInAnEpoch: 1, log });
  try {
    const dep = await deployUsdc(anvil.url);
    await installX402Contracts(dep.clients);
    const summary = await seedDemoEconomy(dep, {
      catalogItems,
      asOfTs,
      x402: true,
      log,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    log.info(
      { blocks: summary.head.number, transactions: summary.transactions, ms: Math.round(performance.now() - started) },
      'demo chain ready',
    );
    return {
      url: anvil.url,
      port: anvil.port,
      chainId: dep.chainId,
      usdcAddress: dep.address,
      summary,
      stop: () => anvil.stop(),
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/index.ts';
import { demoCatalogItems, readCatalogItems, startDemoChain } from '../devchain/index.ts';
import { projectRoot } from '../lib/paths.ts';
import type { CommandContext } from './context.ts';
import { runOnce } from './run.ts';
import { startApi, untilAborted } from './serve.ts';
import { openDatabase } from '../db/index.ts';
import { acquireDataDirLock } from '../run/lock.ts';

const CATALOG_FILE = 'bazaar-catalog-2025-12-31.json';

/** The real crawl: from ../shared/data next to the project when present, else the committed copy. */
export function demoCatalogPath(): string {
  const shared = path.resolve(projectRoot, '..', 'shared', 'data', CATALOG_FILE);
  return existsSync(shared) ? shared : path.join(projectRoot, 'fixtures', 'catalog', CATALOG_FILE);
}

/**
 * `x402-tally demo` (what `npm start` runs): a local anvil chain running the real USDC contract,
 * seeded with x402 settlements to sellers of the real catalog crawl; an embedded database under
 * DATA_DIR/demo (rebuilt each time, since the chain is new each time); one run as of the latest
 * block; then the API until SIGINT/SIGTERM. Needs no network and no configuration.
 */
export async function demoCommand(ctx: CommandContext): Promise<number> {
  const started = performance.now();
  const dataDir = path.resolve(ctx.config.DATA_DIR, 'demo');
  // Lock before wiping: another demo on the same DATA_DIR keeps its data (this one exits 75).
  const dirLock = acquireDataDirLock(dataDir);
  try {
    rmSync(path.join(dataDir, 'pglite'), { recursive: true, force: true });
    return await demoIn(ctx, dataDir, started);
  } finally {
    await dirLock.release();
  }
}

async function demoIn(ctx: CommandContext, dataDir: string, started: number): Promise<number> {
  ctx.out('starting the local demo chain (anvil + USDC) and seeding payments…');
  // The real crawl plus a synthetic listing farm (see demoCatalogItems), written where the run
  // reads it; the chain pays sellers of this same catalog.
  const items = demoCatalogItems(readCatalogItems(demoCatalogPath()));
  mkdirSync(dataDir, { recursive: true });
  const catalog = path.join(dataDir, 'demo-catalog.json');
  writeFileSync(catalog, JSON.stringify({ resources: items }));
  const chain = await startDemoChain({ log: ctx.log.child({ stage: 'devchain' }), catalogItems: items });
  try {
    // The demo's own settings win over the environment: the chain and data are local.
    const env = { ...ctx.env, DATABASE_URL: undefined, AS_OF_BLOCK: undefined };
    const { DATABASE_URL: _url, AS_OF_BLOCK: _block, ...overrides } = ctx.args.overrides;
    const config = loadConfig(env, {
      ...overrides,
      DATA_DIR: dataDir,
      RPC_URL: chain.url,
      CATALOG_SOURCE: catalog,
      USDC_ADDRESS: chain.usdcAddress,
      CHAIN_ID: String(chain.chainId),
      CONFIRMATIONS: '0',
    });
    const demoCtx = { ...ctx, config };
    const database = await openDatabase({ dataDir });
    try {
      await runOnce(demoCtx, database);
      const api = await startApi(demoCtx, database, config.CADENCE_SECONDS);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      ctx.out(`\nx402-tally demo is serving (ready in ${seconds} s). Try:`);
      for (const route of ['/api/v1/meta', '/api/v1/rankings', '/api/v1/sellers?limit=5', '/api/v1/market/daily', '/api/v1/openapi.json']) {
        ctx.out(`  ${api.url}${route}`);
      }
      ctx.out('Stop with Ctrl-C.');
      await untilAborted(ctx.signal);
      await api.close();
      return 0;
    } finally {
      await database.close();
    }
  } finally {
    await chain.stop();
  }
}

import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { loadConfig } from '../config/index.ts';
import { demoCatalogItems, mine, readCatalogItems, startDemoChain } from '../devchain/index.ts';
import { projectRoot } from '../lib/paths.ts';
import type { CommandContext } from './context.ts';
import { runOnce } from './run.ts';
import { progressBar } from '../run/cycle.ts';
import { makeSchedule } from './schedule.ts';
import { holdPort, releasePort } from './port.ts';
import { startApi, untilAborted } from './serve.ts';
import { openDatabase, type Database } from '../db/index.ts';
import type { RunReport } from '../run/cycle.ts';
import { sql } from 'kysely';
import { acquireDataDirLock } from '../run/lock.ts';

const CATALOG_FILE = 'bazaar-catalog-2025-12-31.json';
/** The command line's entry, printed by absolute path so the demo's commands run from any folder. */
const BIN = path.join(projectRoot, 'bin', 'x402-tally.js');

/** A path as one shell word (quoted when it holds anything but safe characters). */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** How often the demo mines a block and publishes a new generation. */
const DEMO_CADENCE_SECONDS = 60;

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
    // The port before the seeding: a taken one exits 1 naming PORT at once, not after a minute.
    const held = await holdPort(ctx.config);
    try {
      rmSync(path.join(dataDir, 'pglite'), { recursive: true, force: true });
      return await demoIn(ctx, dataDir, started, held);
    } finally {
      await releasePort(held);
    }
  } finally {
    await dirLock.release();
  }
}

async function demoIn(ctx: CommandContext, dataDir: string, started: number, held: http.Server): Promise<number> {
  ctx.out('starting the local demo chain (anvil + USDC) and seeding payments…');
  // The real crawl plus a synthetic listing farm (see demoCatalogItems), written where the run
  // reads it; the chain pays sellers of this same catalog.
  const items = demoCatalogItems(readCatalogItems(demoCatalogPath()));
  mkdirSync(dataDir, { recursive: true });
  const catalog = path.join(dataDir, 'demo-catalog.json');
  writeFileSync(catalog, JSON.stringify({ resources: items }));
  // The seeding takes 10-20 s: on a terminal, a progress line every 10% of the history.
  let shown = -1;
  const seedStarted = performance.now();
  const onProgress = (done: number, total: number) => {
    const tenth = Math.floor((done / total) * 10);
    if (tenth === shown) return;
    shown = tenth;
    ctx.progress?.(
      `seeding the demo chain ${progressBar(done, total, performance.now() - seedStarted).replace(' ranges', ' blocks')}`,
    );
  };
  const chain = await startDemoChain({ log: ctx.log.child({ stage: 'devchain' }), catalogItems: items, onProgress });
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
      // The demo keeps running: a new block and a new generation every minute, so /meta's cadence
      // and `stale` tell the truth about it.
      CADENCE_SECONDS: String(DEMO_CADENCE_SECONDS),
      // A local chain: no public explorer knows its transactions (/meta chain.public false).
      PUBLIC_CHAIN: 'false',
      // (the method is the current default, as for `run`, unless METHOD_VERSION says otherwise)
    });
    const demoCtx = { ...ctx, config };
    // A new database each time: from the migrated template rather than initdb and every
    // migration (src/db/pglite/template.ts). The first demo on a machine makes the template, so
    // the audit it prints starts from it too.
    const database = await openDatabase({ dataDir, fromTemplate: true });
    try {
      const firstRunStartedAt = new Date();
      await runOnce(demoCtx, database);
      const api = await startApi(demoCtx, database, config.CADENCE_SECONDS, held);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      ctx.out(
        `\nx402-tally demo is serving (ready in ${seconds} s); a new generation every ${DEMO_CADENCE_SECONDS} s.`,
      );
      ctx.out(`  web page        ${api.url}/`);
      ctx.out(`  API docs        ${api.url}/api/v1/docs`);
      for (const route of [
        '/api/v1/meta',
        '/api/v1/rankings?limit=5',
        '/api/v1/sellers?limit=5',
        '/api/v1/market/daily',
        '/llms.txt',
      ]) {
        ctx.out(`  try             ${api.url}${route}`);
      }
      ctx.out(`  MCP             ${api.url}/mcp (Streamable HTTP)`);
      ctx.out(`  chain (RPC_URL) ${chain.url}  (chain id ${chain.chainId}, USDC at ${chain.usdcAddress})`);
      ctx.out(`  data folder     ${dataDir}`);
      ctx.out(
        'Audit what it serves, from another terminal (the demo holds its embedded database, so download the bundle from the API):',
      );
      ctx.out(`  mkdir g && cd g && curl -sO ${api.url}/api/v1/generations/1/bundle/manifest.json && \\`);
      ctx.out(
        `    for f in $(node -pe 'require("./manifest.json").files.map(f => f.name).join(" ")'); do curl -sO ${api.url}/api/v1/generations/1/bundle/$f; done && cd ..`,
      );
      // The bin by its absolute path: `npx x402-tally` works only inside the checkout.
      ctx.out(`  RPC_URL=${chain.url} node ${shellWord(BIN)} audit --bundle ./g`);
      ctx.out('Stop with Ctrl-C.');
      // The next runs, every DEMO_CADENCE_SECONDS from the first one's start.
      const job = makeSchedule(`${DEMO_CADENCE_SECONDS}s`, async () => {
        if (ctx.signal.aborted) return;
        try {
          await mine(chain.url, 1);
          // One line a generation (the first run's stage lines are not repeated every minute).
          const runStarted = performance.now();
          const report = await runOnce({ ...demoCtx, out: () => {}, progress: undefined }, database);
          ctx.out(await generationLine(database, report, performance.now() - runStarted));
        } catch (error) {
          ctx.log.warn({ error: (error as Error).message }, 'demo run failed; the next one is on schedule');
        }
      }).start(firstRunStartedAt);
      await untilAborted(ctx.signal);
      job.stop();
      await api.close();
      return 0;
    } finally {
      await database.close();
    }
  } finally {
    await chain.stop();
  }
}

/** `generation 7  as of 2026-…Z (block 123)  412 payments  1.9 s`: the demo's line per scheduled run. */
async function generationLine(database: Database, report: RunReport, ms: number): Promise<string> {
  const { rows } = await sql<{ payments: string }>`
    select coalesce(sum(payments_30d), 0)::text as payments from gen_sellers where generation = ${report.generation}`.execute(
    database.db,
  );
  const asOf = new Date(Number(report.asOf.timestamp) * 1000).toISOString();
  return `generation ${report.generation}  as of ${asOf} (block ${report.asOf.number})  ${rows[0]?.payments ?? 0} payments  ${(ms / 1000).toFixed(1)} s`;
}

/**
 * The demo generation an audit benchmark audits (bench/audit.ts, bench/audit-memory.ts), made as
 * `x402-tally demo` makes it but without its minute-by-minute runs (which would share the cores
 * with the audits being timed): the demo chain (anvil with the real USDC code, seeded with the
 * demo economy over the real crawl), one `run` at METHOD_VERSION into an embedded database, then
 * generation 1's bundle downloaded over HTTP from the API as the demo's printed commands do
 * (manifest.json, then every file it names) into `<work>/elsewhere/g`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildApi } from '../src/api/index.ts';
import { runCommand } from '../src/cli/command.ts';
import { demoCatalogPath } from '../src/cli/demo.ts';
import { openDatabase } from '../src/db/index.ts';
import { demoCatalogItems, readCatalogItems, startDemoChain } from '../src/devchain/index.ts';
import { silentLogger } from '../src/lib/log.ts';

export interface DemoBundle {
  /** The folder the audits run from; the bundle is `./g` in it. */
  elsewhere: string;
  bundle: string;
  rpcUrl: string;
  /** The demo seller with the most payments (the `--seller` case). */
  seller: string;
  sellers: number;
  payments: number;
  stop(): Promise<void>;
}

export async function demoBundle(work: string, methodVersion: string): Promise<DemoBundle> {
  const items = demoCatalogItems(readCatalogItems(demoCatalogPath()));
  const catalogFile = path.join(work, 'demo-catalog.json');
  writeFileSync(catalogFile, JSON.stringify({ resources: items }));
  const chain = await startDemoChain({ catalogItems: items });
  const dataDir = path.join(work, 'data');
  const elsewhere = path.join(work, 'elsewhere');
  const bundle = path.join(elsewhere, 'g');
  try {
    const env = {
      RPC_URL: chain.url,
      CATALOG_SOURCE: catalogFile,
      USDC_ADDRESS: chain.usdcAddress,
      CHAIN_ID: String(chain.chainId),
      CONFIRMATIONS: '0',
      METHOD_VERSION: methodVersion,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
    };
    const run = await runCommand(['run'], env, { out: () => {}, err: (l) => console.error(l), log: silentLogger });
    if (run !== 0) throw new Error(`run exited ${run}`);

    const database = await openDatabase({ dataDir });
    const app = await buildApi(database.db, { rateLimitPerMinute: 1_000_000, cadenceSeconds: 60 });
    try {
      const base = `${await app.listen({ port: 0, host: '127.0.0.1' })}/api/v1/generations/1/bundle`;
      mkdirSync(bundle, { recursive: true });
      const manifest = await (await fetch(`${base}/manifest.json`)).text();
      writeFileSync(path.join(bundle, 'manifest.json'), manifest);
      for (const { name } of (JSON.parse(manifest) as { files: { name: string }[] }).files) {
        const res = await fetch(`${base}/${name}`);
        if (!res.ok) throw new Error(`${name}: HTTP ${res.status}`);
        writeFileSync(path.join(bundle, name), Buffer.from(await res.arrayBuffer()));
      }
    } finally {
      await app.close();
      await database.close();
    }
  } catch (error) {
    await chain.stop();
    throw error;
  }
  const sellers = readFileSync(path.join(bundle, 'sellers.ndjson'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { seller_address: string; payments_30d: number | string });
  const seller = [...sellers].sort((a, b) => Number(b.payments_30d) - Number(a.payments_30d))[0]!.seller_address;
  const payments = sellers.reduce((n, s) => n + Number(s.payments_30d), 0);
  return {
    elsewhere,
    bundle,
    rpcUrl: chain.url,
    seller,
    sellers: sellers.length,
    payments,
    stop: () => chain.stop(),
  };
}

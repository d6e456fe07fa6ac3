/**
 * Benchmark: ingest the real 1,400-item Bazaar crawl, i.e. read + validate + normalise the file
 * (readCatalog), then store the snapshot (storeCatalogSnapshot), into an in-memory PGlite or, when
 * DATABASE_URL is set, a scratch schema of that Postgres database (dropped at the end). Runs RUNS
 * times (default 5) on one migrated database and prints each run and the median as JSON on stdout.
 *
 *   npx tsx bench/catalog-ingest.ts [catalog.json]
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BASE_CHAIN_ID, BASE_USDC } from '../src/config/index.ts';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';
import { projectRoot } from '../src/lib/paths.ts';
import { readCatalog, storeCatalogSnapshot } from '../src/catalog/index.ts';

const file = process.argv[2] ?? path.join(projectRoot, 'fixtures/catalog/bazaar-catalog-2025-12-31.json');
const runs = Number(process.env.RUNS ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (ms: number) => Math.round(ms * 10) / 10;

// On Postgres, a schema of its own so that the bench never writes into tables others use.
const baseUrl = process.env.DATABASE_URL;
const scratch = baseUrl ? await createScratchSchema(baseUrl, 'bench_catalog') : undefined;
const url = scratch?.url;
const tOpen = performance.now();
const database = await openDatabase({ databaseUrl: url, dataDir: null });
try {
  await migrate(database.db);
  // Opening the database and applying the migrations: paid once per process, not per ingest.
  const openMs = round(performance.now() - tOpen);
  const results: { readMs: number; storeMs: number; totalMs: number }[] = [];
  let summary = {};
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const catalog = await readCatalog(file, { chainId: BASE_CHAIN_ID, usdcAddress: BASE_USDC });
    const t1 = performance.now();
    await storeCatalogSnapshot(database.db, catalog);
    const t2 = performance.now();
    results.push({ readMs: round(t1 - t0), storeMs: round(t2 - t1), totalMs: round(t2 - t0) });
    summary = { items: catalog.items.length, listings: catalog.listings.length, rejects: catalog.rejects.length };
  }
  console.log(
    JSON.stringify(
      {
        bench: 'catalog-ingest',
        backend: database.backend,
        file: path.basename(file),
        ...summary,
        openMs,
        runs: results,
        median: {
          readMs: median(results.map((r) => r.readMs)),
          storeMs: median(results.map((r) => r.storeMs)),
          totalMs: median(results.map((r) => r.totalMs)),
        },
      },
      null,
      1,
    ),
  );
} finally {
  await database.close();
  await scratch?.drop();
}

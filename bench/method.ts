/**
 * Benchmark: compute + publish of one generation with 1,000,000 verified payments, 10,000
 * sellers and 50,000 listings, next to a bare `select to, sum(value) ... group by to` over the
 * same rows in the same run.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/method.ts   # real Postgres
 *   npx tsx bench/method.ts                                                       # embedded PGlite
 *   PAYMENTS=200000 npx tsx bench/method.ts                                       # smaller run
 *
 * Then a steady-state generation (method 2.0.0 reuses the closed-hour partials of the first):
 * the window slid by 15 minutes, with 15 minutes of new payments at the window's average rate.
 * Writes bench/out/method.json.
 *
 * On Postgres it works in a schema of its own (bench_method_<hex>), dropped at the end.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';
import { createLogger } from '../src/lib/log.ts';
import { computeGeneration, loadMethodSteps, type MethodStep } from '../src/method/index.ts';
import { publishGeneration } from '../src/publish/index.ts';

const PAYMENTS = Number(process.env.PAYMENTS ?? 1_000_000);
const SELLERS = Number(process.env.SELLERS ?? 10_000);
const LISTINGS = Number(process.env.LISTINGS ?? 50_000);
const AS_OF_TS = 1_767_268_800n; // 2026-01-01T12:00:00Z
const AS_OF_BLOCK = 40_000_000n;
const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);

async function main() {
  const url = process.env.DATABASE_URL;
  // On Postgres, a schema of its own (dropped at the end unless KEEP is set).
  const scratch = url ? await createScratchSchema(url, 'bench_method') : undefined;
  if (scratch) console.error(`schema ${scratch.name}`);
  const connection = scratch?.url;
  // DATA_DIR: the embedded database on disk (as `run` uses it) instead of in memory.
  const database = await openDatabase({ databaseUrl: connection, dataDir: process.env.DATA_DIR ?? null });
  const { db } = database;
  await migrate(db);

  const t0 = performance.now();
  const snapshot = await db
    .insertInto('catalog_snapshots')
    .values({
      source: 'bench',
      fetched_at: new Date(),
      sha256: '0'.repeat(64),
      items_count: LISTINGS,
      listings_count: LISTINGS,
      rejected_count: 0,
    })
    .returning('snapshot_id')
    .executeTakeFirstOrThrow();
  // Hashes and addresses look like real ones (uniformly random hex, from sha256 of a counter), not
  // zero-padded counters: sorts and hash tables behave on them as on chain data (a shared
  // '0x000000..' prefix would defeat Postgres' abbreviated sort keys).
  const hex = (tag: string, expr: string, chars: number) =>
    `'0x' || left(encode(sha256(convert_to('${tag}' || (${expr}), 'UTF8')), 'hex'), ${chars})`;
  const seller = (expr: string) => hex('seller', expr, 40);
  await sql
    .raw(
      `
    insert into catalog_listings
    select ${snapshot.snapshot_id}, encode(sha256(convert_to('listing' || i, 'UTF8')), 'hex'), i, 0, 'https://s' || i || '.example.com/api', 'base', 'eip155:8453',
           ${seller(`i % ${SELLERS} + 1`)}, '${USDC}', 'base_usdc', ${seller(`i % ${SELLERS} + 1`)}, 'Listing ' || i, null,
           (array['inference','data-access','other','search-retrieval','media-generation'])[i % 5 + 1], 'auto'
      from generate_series(1, ${LISTINGS}) i;
    -- payments spread over the 30-day window; a block every 2 s ending at the as-of block
    insert into usdc_transfers
    select ${hex('tx', 'i', 64)}, 1, ${hex('block', 'b', 64)}, b, ${AS_OF_TS} - (${AS_OF_BLOCK} - b) * 2,
           ${hex('payer', 'i % 50000', 40)}, ${seller(`i % ${SELLERS} + 1`)}, 1000 + i % 99991, 1, null, true
      from (select i, ${AS_OF_BLOCK} - (i::bigint * 1296000 / ${PAYMENTS}) as b from generate_series(1, ${PAYMENTS}) i) s;
    insert into usdc_authorizations
    select tx_hash, 0, block_hash, block_number, from_address, tx_hash, 1, null from usdc_transfers;
    insert into seller_coverage
    select ${seller('s')}, 0, 0, ${AS_OF_BLOCK} from generate_series(1, ${SELLERS}) s;
  `,
    )
    .execute(db);
  // The facts of a real window were written over 30 days and long since vacuumed (hint bits set,
  // statistics current); without this the first scan of the method pays for writing hint bits.
  await sql`vacuum analyze`.execute(db);
  const loadMs = performance.now() - t0;

  const t1 = performance.now();
  const bare = await sql`select to_address, sum(value) from usdc_transfers group by to_address`.execute(db);
  const bareMs = performance.now() - t1;

  // SPLIT_STEPS: one logged step per SQL statement (to see where a step's time goes).
  const split = (steps: MethodStep[]) =>
    steps.flatMap((st) =>
      st.sql
        .split(/;\s*\n/)
        .filter((q) => /\S/.test(q.replace(/--.*$/gm, '')))
        .map((q, i) => ({
          ...st,
          name: `${st.name}#${i + 1} ${q.replace(/--.*$/gm, '').trim().split('\n')[0]!.slice(0, 60)}`,
          sql: q,
        })),
    );
  const t2 = performance.now();
  const generation = await computeGeneration(db, {
    runSeq: 1n,
    asOf: { number: AS_OF_BLOCK, hash: `0x${'ab'.repeat(32)}`, timestamp: AS_OF_TS },
    catalogSnapshotId: snapshot.snapshot_id,
    sources: [],
    // METHOD_DIR: try a variant of sql/method (e.g. other planner settings) on the same data.
    ...(process.env.METHOD_DIR ? { steps: loadMethodSteps(undefined, process.env.METHOD_DIR) } : {}),
    ...(process.env.SPLIT_STEPS ? { steps: split(loadMethodSteps(undefined, process.env.METHOD_DIR)) } : {}),
    log: createLogger(process.env.LOG_LEVEL ?? 'info'),
  });
  const computeMs = performance.now() - t2;
  const t3 = performance.now();
  await publishGeneration(db, generation);
  const publishMs = performance.now() - t3;

  // Steady state: 15 minutes later, 15 minutes of new payments (a block every 2 s: 450 blocks).
  const newPayments = Math.round(PAYMENTS / 2880);
  await sql
    .raw(
      `
    insert into usdc_transfers
    select ${hex('tx2', 'i', 64)}, 1, ${hex('block', 'b', 64)}, b, ${AS_OF_TS} - (${AS_OF_BLOCK} - b) * 2,
           ${hex('payer', 'i % 50000', 40)}, ${seller(`i % ${SELLERS} + 1`)}, 1000 + i % 99991, 2, null, true
      from (select i, ${AS_OF_BLOCK} + 1 + (i::bigint * 449 / ${Math.max(newPayments, 1)}) as b from generate_series(1, ${newPayments}) i) s;
    insert into usdc_authorizations
    select tx_hash, 0, block_hash, block_number, from_address, tx_hash, 2, null from usdc_transfers where added_seq = 2;
    update seller_coverage set to_block = ${AS_OF_BLOCK + 450n};
  `,
    )
    .execute(db);
  await sql`analyze usdc_transfers`.execute(db);
  const t4 = performance.now();
  const steady = await computeGeneration(db, {
    ...(process.env.SPLIT_STEPS ? { steps: split(loadMethodSteps()) } : {}),
    runSeq: 2n,
    asOf: { number: AS_OF_BLOCK + 450n, hash: `0x${'cd'.repeat(32)}`, timestamp: AS_OF_TS + 900n },
    catalogSnapshotId: snapshot.snapshot_id,
    sources: [],
    log: createLogger(process.env.LOG_LEVEL ?? 'info'),
  });
  const steadyMs = performance.now() - t4;
  await publishGeneration(db, steady);

  const check = await db
    .selectFrom('gen_sellers')
    .select((eb) => [eb.fn.sum<bigint>('payments_30d').as('payments'), eb.fn.countAll<bigint>().as('sellers')])
    .where('generation', '=', generation)
    .executeTakeFirstOrThrow();
  clearInterval(sampler);
  const total = computeMs + publishMs;
  const result = {
    backend: database.backend,
    payments: PAYMENTS,
    sellers: SELLERS,
    listings: LISTINGS,
    counted_payments: Number(check.payments),
    counted_sellers: Number(check.sellers),
    bare_groups: bare.rows.length,
    load_s: +(loadMs / 1000).toFixed(2),
    bare_aggregate_s: +(bareMs / 1000).toFixed(3),
    compute_s: +(computeMs / 1000).toFixed(3),
    publish_s: +(publishMs / 1000).toFixed(3),
    compute_plus_publish_s: +(total / 1000).toFixed(3),
    ratio_to_bare: +(total / bareMs).toFixed(1),
    cold_s: +(computeMs / 1000).toFixed(3),
    steady_s: +(steadyMs / 1000).toFixed(3),
    steady_new_payments: newPayments,
    node_peak_rss_mb: Math.round(peakRss / 2 ** 20),
    peak_rss_mb: Math.round(peakRss / 2 ** 20),
  };
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./out/method.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
  await database.close();
  if (!process.env.KEEP) await scratch?.drop();
}

await main();

/**
 * Benchmark: the method at the scale of real Base. A cold generation over PAYMENTS verified
 * payments (default 1,000,000) paid to SELLERS sellers (default 50,000; one holds 40% of the
 * payments, the rest a Zipf-like long tail) with post-Denim blocks (five per second), next to a
 * bare `select to, sum(value) ... group by to` over the same rows in the same run. Then
 * STEADY_RUNS steady-state generations (default 3), each 15 minutes later with 15 minutes of new
 * payments at the window's average rate: the cron's run.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/method.ts   # real Postgres
 *   npx tsx bench/method.ts                                                             # embedded PGlite
 *   PAYMENTS=10000000 BENCH_DATABASE_URL=... npx tsx bench/method.ts                    # 10M payments
 *   VERIFY=1 ...   # also computes the last steady generation from scratch and compares every row
 *   KEEP=1 ...     # keeps the schema (its name is printed) ...
 *   REUSE=bench_method_1a2b3c4d ...   # ... and runs STEADY_RUNS more steady generations on it, with
 *                                     # the same PAYMENTS: no load, no cold run (the 10M figures)
 *   DATA_DIR=/copy/of/a/run REUSE=1 ...   # the same on PGlite: a DATA_DIR an earlier run left (copy
 *                                         # it first with `cp -a`, the runs change it)
 *   COLD_RUNS=4 ...   # the cold generation 4 times (each from empty derived tables, no generation
 *                     # before it, the bare aggregate timed just before it); with REUSE: cold runs
 *                     # only, on the kept facts (no steady runs: they would add the same payments)
 *   SPLIT_STEPS=1 ... # one timed step per statement of the method; with EXPLAIN=1 also each one's
 *                     # plan (EXPLAIN ANALYZE, BUFFERS) in bench/out/method-plans.txt
 *   COLD_AB_SQL=/path/to/other/sql/method ...   # with COLD_RUNS: every other cold run uses that
 *                     # tree's method SQL (e.g. main's), an A/B paired on the same data and moment
 *   STEADY_AB_SQL=/path/to/other/sql/method ... # every other steady run (the even ones) uses that
 *                     # tree's method SQL: a paired A/B of steady runs (both trees must keep the
 *                     # same derived state, e.g. one method version before and after a change)
 *   STEADY_PAYMENTS=17361 ...   # new payments per steady run (default PAYMENTS / 2880, 15 minutes
 *                     # of the window's rate): one delta at two window sizes. 0: no new payments,
 *                     # only those the window's start leaves behind (a steady run's fixed cost)
 *   STEADY_DAY=1 ...  # before each steady run the latest cached market day is dropped, so that the
 *                     # run computes it again as the first run after midnight does. A real
 *                     # midnight: steady run 48 (as-of 00:00 UTC) is the first after one (then every
 *                     # 96th), logged `(crosses UTC midnight)`; with REUSE the runs are numbered on
 *                     # from the schema's, so STEADY_RUNS reaching run 48 crosses it
 *   RETAIN=48 ...     # after each steady run's publish, prune to the newest 48 generations as
 *                     # `run` does (RETAIN_GENERATIONS, SPEC's default 48), timed on its own
 *                     # (`steady_prune_runs_s`): without it generations pile up, and the published
 *                     # tables' bytes and index depth are those of however many runs were made
 *   STEADY_FROM=48 ...   # with REUSE: number the steady runs from 48 (a kept schema whose earlier
 *                     # steady runs' payments are loaded, but whose generations were reset by COLD_RUNS)
 *   METHOD=3.0.0 ...  # the method version to compute (default METHOD_VERSION)
 *   MIX=3 ...         # method 3.0.0's traffic (issue 22): 5% Permit2 proxy settlements, 2% batch
 *                     # claims, 10% internal payments of both reasons, with the streams' rows as the
 *                     # sync stores them; or PERMIT2_SHARE, CLAIM_SHARE, INTERNAL_SHARE one by one
 *                     # (bench/method-mix.ts). The steady runs add the same mix; at the end the last
 *                     # generation's payments per class and reason are counted again from the
 *                     # generator and must equal the published ones (`mix.check`, else exit 1)
 *
 *   BLOCKS_PER_PAYMENT=0.7 ...   # distinct blocks per payment (default 1: every payment in a block
 *                     # of its own). 0.7 is real Base's density at 10M payments a window: 10M
 *                     # payments at random over the window's 12.96M post-Denim blocks fall in
 *                     # 12.96M * (1 - e^(-10/12.96)) = 6.98M distinct blocks. The payments of a
 *                     # block are consecutive (evenly spread blocks, one or two payments each at 0.7)
 *
 * Prices look like x402's: each seller charges one of three fixed prices per payment (a few
 * dollars down to a tenth of a cent), and 1% of payments carry an arbitrary amount. Payers are
 * drawn from 100,000 addresses. The load is one `insert ... select from generate_series` per
 * table with the secondary indexes dropped and rebuilt after (a bulk load's usual shape).
 * The 3.0.0 streams' coverage (stream_coverage, seller_outgoing_coverage) is written whenever 3.0.0
 * is computed or the mix generated, as a sync through each as-of block leaves it.
 * Writes bench/out/method.json. On Postgres it works in a schema of its own (bench_method_<hex>),
 * dropped at the end unless KEEP is set. (DATABASE_URL is read too, for older notes.)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { pino } from 'pino';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import type { Schema } from '../src/db/schema.ts';
import { relationSizes, vacuumSchema } from '../src/db/relation-sizes.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';
import { createStagingTables, kyselyRunner, loadFacts, summarizeFactIndexes } from '../src/db/load-facts.ts';
import {
  computeGeneration,
  DERIVED_TABLES,
  forgetDerivedState,
  loadMethodSteps,
  METHOD_VERSION,
  type MethodStep,
} from '../src/method/index.ts';
import {
  compareGenerationRows,
  formatDifference,
  publishGeneration,
  pruneGenerations,
  readGenerationRows,
} from '../src/publish/index.ts';
import {
  AS_OF_BLOCK,
  AS_OF_TS,
  BLOCKS_PER_PAYMENT,
  LISTINGS,
  SELLERS,
  USDC,
  WINDOW_BLOCKS,
  blockOf,
  blockTs,
  hex,
  payerIndex,
  seller,
  sellerIndex,
  value,
} from './method-gen.ts';
import {
  coverStreams,
  expectedMix,
  extendStreams,
  listingUrl,
  loadMixPayments,
  MIX,
  MIX_ACTIVE,
  publishedMix,
  streamRows,
  type MixLoad,
} from './method-mix.ts';
import { firstLine, statements } from './sql-statements.ts';

const PAYMENTS = Number(process.env.PAYMENTS ?? 1_000_000);
const STEADY_RUNS = Number(process.env.STEADY_RUNS ?? 3);
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 1);
const RETAIN = process.env.RETAIN ? Number(process.env.RETAIN) : undefined;
if (RETAIN !== undefined && !(Number.isInteger(RETAIN) && RETAIN >= 1))
  throw new Error('RETAIN must be a positive integer');
const COLD_AB_SQL = process.env.COLD_AB_SQL;
const STEADY_AB_SQL = process.env.STEADY_AB_SQL;
const METHOD = process.env.METHOD ?? METHOD_VERSION;
// The 3.0.0 streams' coverage is written when they are computed or generated (bench/method-mix.ts)
const STREAMS = MIX_ACTIVE || !/^[12]\./.test(METHOD);

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
sampler.unref(); // bench/bundle.ts imports the builder below; the sampler must not keep it alive

/** The loads of this process with the mix, for counting the generated payments again at the end. */
const mixLoads: MixLoad[] = [];

/**
 * Loads `count` payments, the i-th at block `blockExpr(i)`, with added_seq `seq`, each paired
 * with an AuthorizationUsed of its payer (class 1), through the facts' one writer
 * (src/db/load-facts.ts), in one transaction. With the mix (bench/method-mix.ts), payments of
 * every class and both internal reasons instead, with the streams' rows; `floor` is the first
 * block the load covers (a funding lies at or above it).
 */
async function loadPayments(
  db: Kysely<Schema>,
  from: number,
  count: number,
  blockExpr: string,
  seq: number,
  floor: bigint,
) {
  await db.transaction().execute(async (trx) => {
    const run = kyselyRunner(trx);
    await createStagingTables(run);
    if (MIX_ACTIVE) {
      const load = { from, count, blockExpr, seq, floor, initial: seq === 1 };
      await loadMixPayments(trx, load);
      mixLoads.push(load);
      return;
    }
    await sql
      .raw(
        `
    insert into x402_load_transfers (tx, li, h, n, ts, f, t, v, added, removed, class, pair_li, nonce)
    select ${hex('tx', 'i', 64)}, i, ${hex('block', 'b', 64)}, b, ${blockTs('b')},
           ${hex('payer', payerIndex('i'), 40)}, ${seller('s')}, ${value('i', 's')}, ${seq}, null,
           1, 0, ${hex('tx', 'i', 64)}
      from (select i, ${sellerIndex('i')} as s, ${blockExpr} as b
              from generate_series(${from}, ${from + count - 1}) i) x;
  `,
      )
      .execute(trx);
    await loadFacts(run);
  });
}

/** Drops the secondary indexes of the fact tables and returns their definitions, to rebuild after a bulk load. */
async function dropIndexes(db: Kysely<Schema>): Promise<string[]> {
  // (the primary keys stay: the load finds block versions by them)
  const { rows } = await sql<{ name: string; def: string }>`
    select indexname as name, indexdef as def from pg_indexes
     where schemaname = current_schema() and tablename in ('transfers', 'blocks') and indexname not like '%_pkey'`.execute(
    db,
  );
  for (const r of rows) await sql`drop index ${sql.id(r.name)}`.execute(db);
  // The tables are partitioned (migration 0027): an index of the parent prints `ON ONLY`, which
  // would build it on no partition; without ONLY it is built on every partition, as the migration does.
  return rows.map((r) => r.def.replace(' ON ONLY ', ' ON '));
}

/**
 * A logger that keeps the method's per-step times, and an `afterStep` that keeps the CPU time this
 * process spent in each step (user + system, ms). On PGlite the database runs in this process, so
 * the CPU time is the database's work too, and does not grow with the machine's load as the wall
 * time does; on Postgres it is only the client's share.
 */
function stepLogger() {
  const steps: Record<string, number> = {};
  const cpuSteps: Record<string, number> = {};
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const o = JSON.parse(line) as { step?: string; ms?: number };
        if (o.step && o.ms !== undefined) steps[o.step] = (steps[o.step] ?? 0) + o.ms; // two steps are named digests
      }
      done();
    },
  });
  let last = process.cpuUsage();
  const afterStep = (step: string) => {
    const used = process.cpuUsage(last);
    last = process.cpuUsage();
    cpuSteps[step] = (cpuSteps[step] ?? 0) + Math.round((used.user + used.system) / 1000);
  };
  return { log: pino({ level: 'info' }, stream), steps, cpuSteps, afterStep };
}

/** CPU ms (user + system) of this process since `since`. */
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

const s = (ms: number) => +(ms / 1000).toFixed(3);
const seconds = (ms: number | undefined) => (ms === undefined ? null : s(ms));

/**
 * EXPLAIN=1 (with SPLIT_STEPS): a statement EXPLAIN ANALYZE can run is run under it, its plan
 * kept in the table bench_plans (bench/out/method-plans.txt at the end). The statement still does
 * its work, so the generation is the same; the times include the instrumentation.
 */
const explained = (name: string, q: string) => {
  const body = q.replace(/--.*$/gm, '').trim();
  if (
    !process.env.EXPLAIN ||
    !/^(select|insert|update|delete|with|create temp table \S+ on commit drop as)\b/i.test(body)
  )
    return q;
  return `do $xp$ declare r text; begin
    for r in execute $q$ explain (analyze, buffers) ${body} $q$ loop
      insert into bench_plans (step, line) values (${`'${name.replace(/'/g, "''")}'`}, r);
    end loop; end $xp$`;
};

/**
 * SPLIT_STEPS=1: one logged step per SQL statement of the method (to see where a step's time goes).
 * `dir`: another tree's sql/method (COLD_AB_SQL).
 */
const steps = (dir?: string): { steps?: MethodStep[]; methodVersion: string } => ({
  methodVersion: METHOD,
  ...stepsOf(dir),
});
const stepsOf = (dir?: string): { steps?: MethodStep[] } =>
  process.env.SPLIT_STEPS
    ? {
        steps: loadMethodSteps(METHOD, dir).flatMap((st) =>
          statements(st.sql).map((q, i) => {
            const name = `${st.name}#${i + 1} ${firstLine(q, 60)}`;
            return { ...st, name, sql: explained(name, q) };
          }),
        ),
      }
    : dir
      ? { steps: loadMethodSteps(METHOD, dir) }
      : {};

/** The bare aggregate over every fact: what a cold generation is measured against. */
async function bareAggregate(db: Kysely<Schema>) {
  const t = performance.now();
  const bare = await sql`select to_id, sum(value) from transfers group by to_id`.execute(db);
  return { bareMs: performance.now() - t, bareGroups: bare.rows.length };
}

/** The cold generation (generation 1 when no other exists) over the loaded facts, as of AS_OF. */
async function coldGeneration(db: Kysely<Schema>, snapshotId: bigint, dir?: string) {
  const cold = stepLogger();
  const t = performance.now();
  const cpu = process.cpuUsage();
  const generation = await computeGeneration(db, {
    runSeq: 1n,
    asOf: { number: AS_OF_BLOCK, hash: `0x${'ab'.repeat(32)}`, timestamp: AS_OF_TS },
    catalogSnapshotId: snapshotId,
    sources: [],
    log: cold.log,
    afterStep: cold.afterStep,
    ...steps(dir),
  });
  return {
    generation,
    coldMs: performance.now() - t,
    coldCpuMs: cpuMs(cpu),
    coldSteps: cold.steps,
    coldCpuSteps: cold.cpuSteps,
  };
}

/**
 * COLD_RUNS: back to the state right after the load, no generation and empty derived tables
 * (truncated: what a first run on loaded facts finds), for another cold run.
 */
async function emptyDerived(db: Kysely<Schema>) {
  await sql`delete from published_pointer`.execute(db);
  await sql`delete from generations`.execute(db);
  await sql.raw(`truncate ${DERIVED_TABLES.join(', ')}`).execute(db);
  await sql`vacuum analyze generations`.execute(db);
}

/**
 * Whether steady run `run` (as-of AS_OF_TS + run * 15 min) is the first after a UTC midnight: the
 * run that computes the day that just ended. The bench's window ends at noon, so run 48 is the
 * first (then every 96th).
 */
function crossesMidnight(run: number): boolean {
  const day = (ts: bigint) => ts / 86400n;
  return day(AS_OF_TS + BigInt(run) * 900n) > day(AS_OF_TS + BigInt(run - 1) * 900n);
}

/** COLD_RUNS more cold generations (after the first, unless REUSE); every other one on COLD_AB_SQL. */
async function moreColdRuns(db: Kysely<Schema>, snapshotId: bigint, from: number) {
  const runs: { sql: string; bare_aggregate_s: number; cold_s: number; cold_cpu_s: number; ratio: number }[] = [];
  let generation = 0;
  for (let run = from; run <= COLD_RUNS; run++) {
    await emptyDerived(db);
    const dir = COLD_AB_SQL && run % 2 === 0 ? COLD_AB_SQL : undefined;
    const { bareMs } = await bareAggregate(db);
    const cold = await coldGeneration(db, snapshotId, dir);
    generation = cold.generation;
    runs.push({
      sql: dir ?? 'branch',
      bare_aggregate_s: s(bareMs),
      cold_s: s(cold.coldMs),
      cold_cpu_s: s(cold.coldCpuMs),
      ratio: +(cold.coldMs / bareMs).toFixed(1),
    });
    console.error(
      `cold run ${run} (${dir ?? 'branch'}): bare ${s(bareMs)} s, cold ${s(cold.coldMs)} s (CPU ${s(cold.coldCpuMs)} s)`,
      cold.coldSteps,
      'CPU ms',
      cold.coldCpuSteps,
    );
  }
  if (generation) await publishGeneration(db, generation);
  return { runs, generation };
}

/**
 * The load and the cold generation, published; returns the generation and the catalog snapshot.
 * Also the builder of bench/bundle.ts's large generation (PAYMENTS, SELLERS, LISTINGS from the env).
 */
export async function loadAndCompute(db: Kysely<Schema>, backend: string) {
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
  await sql
    .raw(
      `
    insert into catalog_listings
    select ${snapshot.snapshot_id}, encode(sha256(convert_to('listing' || i, 'UTF8')), 'hex'), i, 0, ${listingUrl('i')}, 'base', 'eip155:8453',
           ${seller(`(i - 1) % ${SELLERS} + 1`)}, '${USDC}', 'base_usdc', ${seller(`(i - 1) % ${SELLERS} + 1`)}, 'Listing ' || i, null,
           (array['inference','data-access','other','search-retrieval','media-generation'])[i % 5 + 1], 'auto'
      from generate_series(1, ${LISTINGS}) i;
    insert into seller_coverage
    select ${seller('s')}, 0, 0, ${AS_OF_BLOCK} from generate_series(1, ${SELLERS}) s;
  `,
    )
    .execute(db);
  const indexes = backend === 'pg' ? await dropIndexes(db) : [];
  // payments spread evenly over the 30-day window ending at the as-of block
  const CHUNK = 1_000_000;
  for (let from = 1; from <= PAYMENTS; from += CHUNK) {
    const count = Math.min(CHUNK, PAYMENTS - from + 1);
    const blocks = blockOf('i', 1, PAYMENTS, WINDOW_BLOCKS, AS_OF_BLOCK, true);
    // (fundings as far back as the sellers' outgoing coverage reaches: the lookback before the window)
    await loadPayments(db, from, count, blocks, 1, AS_OF_BLOCK - 2n * WINDOW_BLOCKS);
    console.error(`loaded ${from + count - 1} payments, ${s(performance.now() - t0)} s`);
  }
  for (const def of indexes) await sql.raw(def).execute(db);
  if (STREAMS) await coverStreams(db, AS_OF_BLOCK);
  // The facts of a real window were written over 30 days and long since vacuumed (hint bits set,
  // statistics current); without this the first scan of the method pays for writing hint bits.
  await sql`vacuum analyze`.execute(db);
  const loadMs = performance.now() - t0;
  console.error(`load ${s(loadMs)} s`);

  const { bareMs, bareGroups } = await bareAggregate(db);
  const { generation, coldMs, coldCpuMs, coldSteps, coldCpuSteps } = await coldGeneration(db, snapshot.snapshot_id);
  const t3 = performance.now();
  await publishGeneration(db, generation);
  const publishMs = performance.now() - t3;
  console.error(`cold ${s(coldMs)} s (CPU ${s(coldCpuMs)} s)`, coldSteps, 'CPU ms', coldCpuSteps);
  return {
    generation,
    snapshotId: snapshot.snapshot_id,
    loadMs,
    bareMs,
    bareGroups,
    coldMs,
    coldCpuMs,
    publishMs,
    coldSteps,
    coldCpuSteps,
  };
}

/** REUSE: the schema a KEEP run left, with its last generation; nothing loaded or computed cold. */
async function reuse(db: Kysely<Schema>) {
  // (a KEEP run stopped after its load has no generation yet: then its newest catalog snapshot,
  // for COLD_RUNS to compute the first generation on the loaded facts)
  const last =
    (await db
      .selectFrom('generations')
      .select(['generation', 'catalog_snapshot_id'])
      .orderBy('generation', 'desc')
      .executeTakeFirst()) ??
    (await db
      .selectFrom('catalog_snapshots')
      .select([sql<number>`0`.as('generation'), 'snapshot_id as catalog_snapshot_id'])
      .orderBy('snapshot_id', 'desc')
      .executeTakeFirstOrThrow());
  console.error(`reusing generation ${last.generation}`);
  const none = undefined as number | undefined;
  return {
    generation: last.generation,
    snapshotId: last.catalog_snapshot_id,
    loadMs: none,
    bareMs: none,
    bareGroups: none,
    coldMs: none,
    coldCpuMs: none,
    publishMs: none,
    coldSteps: {},
    coldCpuSteps: {},
  };
}

async function main() {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
  const reused = process.env.REUSE;
  if (reused && !url && !process.env.DATA_DIR) throw new Error('REUSE needs BENCH_DATABASE_URL or DATA_DIR');
  const scratch = url && !reused ? await createScratchSchema(url, 'bench_method') : undefined;
  if (scratch) console.error(`schema ${scratch.name}`);
  let databaseUrl = scratch?.url;
  if (reused && url) {
    const u = new URL(url);
    // (PGOPTIONS adds server settings, e.g. auto_explain's, for a look at the plans)
    u.searchParams.set('options', `-c search_path=${reused} ${process.env.PGOPTIONS ?? ''}`.trim());
    databaseUrl = u.toString();
  }
  const database = await openDatabase({ databaseUrl, dataDir: process.env.DATA_DIR ?? null });
  const { db } = database;
  // with REUSE, the migrations a kept schema lacks run here, in place: their time is the migration's at this size
  const migrateStart = performance.now();
  await migrate(db);
  console.log(`migrate ${((performance.now() - migrateStart) / 1000).toFixed(3)} s`);

  if (process.env.EXPLAIN)
    await sql`create table if not exists bench_plans (n serial primary key, step text, line text)`.execute(db);
  const first = reused ? await reuse(db) : await loadAndCompute(db, database.backend);
  const { coldSteps } = first;
  const snapshot = { snapshot_id: first.snapshotId };
  const coldOnly = Boolean(reused && process.env.COLD_RUNS);
  const more = COLD_RUNS > 1 || coldOnly ? await moreColdRuns(db, first.snapshotId, coldOnly ? 1 : 2) : undefined;
  const generation = more?.generation ?? first.generation;
  // the steady runs a reused schema already had (generation 1 is the cold one)
  // (STEADY_FROM=N: the first steady run is run N, for a kept schema whose generations no longer
  // count the runs it had, e.g. after REUSE with COLD_RUNS: its runs' payments are loaded already)
  const before = process.env.STEADY_FROM ? Number(process.env.STEADY_FROM) - 1 : reused ? generation - 1 : 0;

  // Steady state: every 15 minutes, 15 minutes of new payments (4,500 blocks); STEADY_PAYMENTS
  // sets that count (e.g. 50M's 17,361 at 1M and 4M: two window sizes, one delta)
  const perRun = Number(process.env.STEADY_PAYMENTS ?? Math.max(1, Math.round(PAYMENTS / 2880)));
  const steadyMs: number[] = [];
  const steadyArms: string[] = [];
  const steadyCpuMs: number[] = [];
  const steadySteps: Record<string, number>[] = [];
  const steadyCpuSteps: Record<string, number>[] = [];
  const pruneMs: number[] = [];
  let last = generation;
  for (let run = before + 1; run <= before + (coldOnly ? 0 : STEADY_RUNS); run++) {
    const base = AS_OF_BLOCK + BigInt(run - 1) * 4500n;
    await loadPayments(
      db,
      PAYMENTS + (run - 1) * perRun + 1,
      perRun,
      blockOf('i', PAYMENTS + (run - 1) * perRun + 1, perRun, 4500n, base + 4500n, false),
      run + 1,
      base + 1n,
    );
    await sql`update seller_coverage set to_block = ${base + 4500n}`.execute(db);
    if (STREAMS) await extendStreams(db, base + 4500n);
    await summarizeFactIndexes(db); // as the sync does after storing (migration 0030)
    await sql`analyze transfers`.execute(db);
    await sql`analyze blocks`.execute(db);
    await sql`analyze addresses`.execute(db);
    // STEADY_DAY=1: the run after midnight, which computes the day that ended from the facts (a
    // steady run from noon never crosses one): the latest cached market day is dropped first
    if (process.env.STEADY_DAY)
      await sql`delete from acc_market_days where day_start = (select max(day_start) from acc_market_days)`.execute(db);
    const steady = stepLogger();
    // STEADY_AB_SQL: the even runs use the other tree's SQL (arm B), the odd ones this tree's (A)
    const arm = STEADY_AB_SQL && run % 2 === 0 ? 'B' : 'A';
    const t4 = performance.now();
    const cpu4 = process.cpuUsage();
    last = await computeGeneration(db, {
      runSeq: BigInt(run + 1),
      asOf: {
        number: base + 4500n,
        hash: `0x${run.toString(16).padStart(64, 'c')}`,
        timestamp: AS_OF_TS + BigInt(run) * 900n,
      },
      catalogSnapshotId: snapshot.snapshot_id,
      sources: [],
      log: steady.log,
      afterStep: steady.afterStep,
      ...steps(arm === 'B' ? STEADY_AB_SQL : undefined),
    });
    steadyMs.push(performance.now() - t4);
    steadyArms.push(arm);
    steadyCpuMs.push(cpuMs(cpu4));
    steadySteps.push(steady.steps);
    steadyCpuSteps.push(steady.cpuSteps);
    await publishGeneration(db, last);
    // RETAIN: the prune `run` does after each publish (src/run/cycle.ts), timed apart from the method
    if (RETAIN) {
      const t5 = performance.now();
      await pruneGenerations(db, RETAIN);
      pruneMs.push(performance.now() - t5);
    }
    console.error(
      `steady ${run}${STEADY_AB_SQL ? ` [${arm}]` : ''}${crossesMidnight(run) ? ' (crosses UTC midnight)' : ''}: ${s(steadyMs.at(-1)!)} s (CPU ${s(steadyCpuMs.at(-1)!)} s)` +
        (RETAIN ? `, prune ${s(pruneMs.at(-1)!)} s` : ''),
      steady.steps,
    );
  }

  const rssBeforeVerify = peakRss;
  let verified: string | undefined;
  if (process.env.VERIFY) {
    // The same generation from scratch: without the accumulators and partials, all from the facts.
    const asOf = await db
      .selectFrom('generations')
      .selectAll()
      .where('generation', '=', last)
      .executeTakeFirstOrThrow();
    await forgetDerivedState(db);
    const again = await computeGeneration(db, {
      runSeq: asOf.run_seq,
      asOf: { number: asOf.as_of_block, hash: asOf.as_of_block_hash as `0x${string}`, timestamp: asOf.as_of_ts },
      catalogSnapshotId: snapshot.snapshot_id,
      sources: [],
      methodVersion: METHOD,
    });
    const differences = compareGenerationRows(await readGenerationRows(db, last), await readGenerationRows(db, again));
    verified = differences.length === 0 ? 'identical' : differences.slice(0, 5).map(formatDifference).join('; ');
    console.error(`verify: steady generation ${last} vs from scratch ${again}: ${verified}`);
  }

  const check = await db
    .selectFrom('gen_sellers')
    .select((eb) => [
      eb.fn.sum<bigint>('payments_30d').as('payments'),
      eb.fn.max<number>('payments_30d').as('top'),
      eb.fn.countAll<bigint>().as('sellers'),
    ])
    // (RETAIN may have pruned the first generation: then the last one's window)
    .where('generation', '=', RETAIN ? last : generation)
    .executeTakeFirstOrThrow();
  const mix = MIX_ACTIVE ? await mixCheck(db, last, Boolean(reused)) : null;
  clearInterval(sampler);
  const sorted = [...steadyMs].sort((a, b) => a - b);
  // Issue 21's storage figure: every table of the schema (facts, catalog, work state, published
  // rows) after the steady runs and a VACUUM, per payment of the last generation's window.
  await vacuumSchema(db);
  const sizes = await relationSizes(db);
  const storedBytes = sizes.reduce((sum, r) => sum + r.totalBytes, 0n);
  const perPayment = (bytes: bigint) =>
    Number(check.payments) ? +(Number(bytes) / Number(check.payments)).toFixed(1) : null;
  const result = {
    backend: database.backend,
    payments: PAYMENTS,
    blocks_per_payment: BLOCKS_PER_PAYMENT,
    sellers: SELLERS,
    listings: LISTINGS,
    counted_payments: Number(check.payments),
    top_seller_payments: Number(check.top),
    counted_sellers: Number(check.sellers),
    reused: reused ?? null,
    bare_groups: first.bareGroups ?? null,
    load_s: seconds(first.loadMs),
    bare_aggregate_s: seconds(first.bareMs),
    cold_s: seconds(first.coldMs),
    // CPU time of this process: on PGlite the database's own work, independent of the machine's load
    cold_cpu_s: seconds(first.coldCpuMs),
    publish_s: seconds(first.publishMs),
    cold_ratio_to_bare: first.coldMs && first.bareMs ? +(first.coldMs / first.bareMs).toFixed(1) : null,
    // COLD_RUNS: the cold runs after the first (or all of them, with REUSE), each with its bare aggregate
    cold_runs: more?.runs ?? null,
    steady_new_payments: perRun,
    steady_runs_s: steadyMs.map(s),
    ...(STEADY_AB_SQL ? { steady_arms: steadyArms } : {}),
    method_version: METHOD,
    steady_cpu_runs_s: steadyCpuMs.map(s),
    // RETAIN: each steady run's prune after its publish, apart from steady_runs_s
    ...(RETAIN ? { retain: RETAIN, steady_prune_runs_s: pruneMs.map(s) } : {}),
    steady_s: s(sorted[Math.floor((sorted.length - 1) / 2)]!),
    steady_median_s: steadyMs.length ? s(sorted[Math.floor((sorted.length - 1) / 2)]!) : null,
    steady_max_s: steadyMs.length ? s(sorted.at(-1)!) : null,
    bytes_per_payment: Number(check.payments) ? Math.round(Number(storedBytes) / Number(check.payments)) : null,
    disk_gb: +(Number(storedBytes) / 1e9).toFixed(3),
    // where those bytes are: each relation above 0.5 bytes a payment, largest first (rows exact,
    // bytes with indexes and TOAST; the same figures as scripts/relation-sizes.ts)
    bytes_per_payment_by_relation: Object.fromEntries(
      sizes
        .filter((r) => (perPayment(r.totalBytes) ?? 0) >= 0.5)
        .map((r) => [
          r.name,
          { rows: Number(r.rows), bytes_per_row: r.bytesPerRow, bytes_per_payment: perPayment(r.totalBytes) },
        ]),
    ),
    steady_ratio_to_cold: first.coldMs
      ? +(sorted[Math.floor((sorted.length - 1) / 2)]! / first.coldMs).toFixed(4)
      : null,
    cold_steps_ms: coldSteps,
    cold_cpu_steps_ms: first.coldCpuSteps,
    steady_steps_ms: steadySteps.at(-1),
    // every steady run's steps, in run order (with STEADY_AB_SQL, `steady_arms` says each one's tree)
    steady_steps_runs_ms: steadySteps,
    steady_cpu_steps_ms: steadyCpuSteps.at(-1),
    verify: verified ?? null,
    // the 3.0.0 traffic (bench/method-mix.ts): the shares asked for, the stream tables' rows, and the
    // last generation's payments per class and reason as generated and as published
    mix,
    // this process's peak RSS through cold and steady runs (the database is another process),
    // and through VERIFY's comparison, which holds both generations' rows in memory
    peak_rss_mb: Math.round(rssBeforeVerify / 2 ** 20),
    peak_rss_with_verify_mb: Math.round(peakRss / 2 ** 20),
  };
  console.log(JSON.stringify(result, null, 2));
  if (process.env.EXPLAIN) {
    const plans = await sql<{ step: string; line: string }>`select step, line from bench_plans order by n`.execute(db);
    let text = '';
    plans.rows.forEach(
      (r, i) => (text += `${i === 0 || plans.rows[i - 1]!.step !== r.step ? `\n== ${r.step}\n` : ''}${r.line}\n`),
    );
    mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
    writeFileSync(new URL('./out/method-plans.txt', import.meta.url), text);
  }
  mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./out/method.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
  await database.close();
  if (!process.env.KEEP) await scratch?.drop();
  if (verified !== undefined && verified !== 'identical') throw new Error(`VERIFY: ${verified}`);
  if (mix?.check && mix.check !== 'identical')
    throw new Error(`the published payments are not the generated ones: ${mix.check}`);
}

/**
 * With the mix: the rows of the streams' tables, and (unless REUSE, whose earlier loads this
 * process did not make) the last generation's payments per class and per reason as the generator
 * made them (counted again from its expressions) against the published ones, and their shares.
 */
async function mixCheck(db: Kysely<Schema>, generation: number, reused: boolean) {
  const rows = await streamRows(db);
  if (reused) return { shares: MIX, rows, check: null };
  const generated = await expectedMix(db, generation, mixLoads);
  const all = generated.classPayments.reduce((a, n) => a + n, 0);
  const shares = {
    permit2: +((generated.classPayments[1]! + generated.classPayments[2]!) / all).toFixed(4),
    claims: +(generated.classPayments[3]! / all).toFixed(4),
    internal: +((generated.sellerFunded[0] + generated.sameOperator[0]) / all).toFixed(4),
  };
  let published: unknown;
  let check: string;
  if (/^[12]\./.test(METHOD)) {
    // 1.x and 2.x count the EIP-3009 payments only
    const r = await db
      .selectFrom('gen_sellers')
      .select((eb) => eb.fn.sum<string>('payments_30d').as('n'))
      .where('generation', '=', generation)
      .executeTakeFirstOrThrow();
    published = { eip3009: Number(r.n) };
    check =
      Number(r.n) === generated.classPayments[0] ? 'identical' : `eip3009 ${r.n} != ${generated.classPayments[0]}`;
  } else {
    published = await publishedMix(db, generation);
    check = JSON.stringify(published) === JSON.stringify(generated) ? 'identical' : JSON.stringify(published);
  }
  console.error(`mix: generated ${JSON.stringify(generated)}, shares ${JSON.stringify(shares)}; published ${check}`);
  return { shares: MIX, rows, generated, generated_shares: shares, published, check };
}

// Run as a script; imported (bench/bundle.ts), only the builder is used.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();

/**
 * Indexer benchmark: a local JSON-RPC server (node:http, in a child process so it has its own
 * core) serves generated USDC logs — by default 200,000 x402 settlements to 10,000 sellers over
 * 30 days of 2-second blocks, plus plain transfers — and syncChain stores them into real Postgres.
 * Then the same eth_getLogs calls the indexer made are sent again alone (no validation, decoding
 * or storage), at the same concurrency, for the bare RPC time.
 *
 * With --whole, the timed part is a whole run instead of the sync alone: runCycle (src/run/cycle.ts)
 * with the real stages, reading a catalog file that lists one Base USDC listing per seller of the
 * fake chain, then sync, the method's (cold) generation, publish and prune; the per-stage times
 * and the published payments are reported with it.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/indexer.ts
 *   (options: --payments N --sellers N --days N --concurrency N --latency-ms N --block-time 2|0.2
 *    --skip-bare --rpc-timeout-ms N --whole --log-level info --profile-statements
 *    --parallel-batches N --fetch-ahead N --heap-snapshot-mb N)
 */
import { fork, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pLimit from 'p-limit';
import { createChainClient, resolveAsOf } from '../src/chain/index.ts';
import { loadConfig } from '../src/config/index.ts';
import { createLogger, silentLogger } from '../src/lib/log.ts';
import { runCycle, type RunReport } from '../src/run/cycle.ts';
import { defaultDeps } from '../src/run/deps.ts';
import { syncChain, type SyncStats } from '../src/sync/index.ts';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';
import { FakeChain, serveJsonRpc, type Hex } from '../test/chain/fake-rpc.ts';
import { other, payer, seller } from './fake-addresses.ts';
import { benchCatalogItems } from './fake-catalog.ts';
import { mulberry32 } from './mulberry32.ts';
import { backendCpuMeter } from './backend-cpu.ts';
import { COMMAND_PROCESS } from '../bin/node-flags.js';
import { profileStatements, resetStatementProfile, statementProfile } from './statement-profile.ts';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    payments: { type: 'string', default: '200000' },
    sellers: { type: 'string', default: '10000' },
    days: { type: 'string', default: '30' },
    concurrency: { type: 'string', default: '4' },
    // A remote provider: every answer (sync and bare replay alike) waits this long.
    'latency-ms': { type: 'string', default: '0' },
    // 2 (Base before 2026-11-05) or 0.2 (since Denim: five blocks share each second's timestamp).
    'block-time': { type: 'string', default: '2' },
    // Memory runs: no bare replay (at 5M payments it takes as long as the sync).
    'skip-bare': { type: 'boolean', default: false },
    // The client's per-request timeout. The fake node of a 5M-payment chain (an ~8 GB heap) can
    // pause longer than the default 15 s for its own garbage collection on a busy machine.
    'rpc-timeout-ms': { type: 'string', default: '15000' },
    // A whole run (catalog, sync, method, publish, prune through runCycle) instead of the sync alone.
    whole: { type: 'boolean', default: false },
    // The whole run's log level (info: the method's per-step times, on stderr).
    'log-level': { type: 'string', default: 'warn' },
    // Each SQL statement this process sends, timed and summed (bench/statement-profile.ts).
    'profile-statements': { type: 'boolean', default: false },
    // Trials of the sync's own settings (SyncOptions), for the whole run and the sync alone.
    'parallel-batches': { type: 'string' },
    'fetch-ahead': { type: 'string' },
    // A heap snapshot (v8.writeHeapSnapshot, into the OS temp folder) the first time RSS passes
    // this many MB: what the heap holds near the peak. It pauses the process and adds the
    // snapshot's own memory: for finding, not for timing.
    'heap-snapshot-mb': { type: 'string' },
    // The node flags of the measured process of a whole run, instead of `run`'s own
    // (bin/node-flags.js), space-separated: '' for none (a trial or an A/B of the flags).
    'node-flags': { type: 'string' },
  },
});
const PAYMENTS = Number(args.payments);
const SELLERS = Number(args.sellers);
const DAYS = Number(args.days);
const BLOCK_TIME = Number(args['block-time']);
const LATENCY_MS = Number(args['latency-ms']);
const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const GENESIS = 1_760_000_400; // 00:20 UTC
const WINDOW = 30 * 86_400;
const HEAD = Math.round(((DAYS + 1) * 86_400) / BLOCK_TIME);

const FIRST_BLOCK = Math.ceil((86_400 - (GENESIS % 86_400)) / BLOCK_TIME); // the first full day

/** The blocks of the PAYMENTS settlements, in block order: the first draws of the chain's generator. */
function settlementBlocks(random: () => number): number[] {
  const span = HEAD - FIRST_BLOCK;
  return Array.from({ length: PAYMENTS }, () => FIRST_BLOCK + Math.floor(random() * span)).sort((a, b) => a - b);
}

function buildChain(): FakeChain {
  const chain = new FakeChain({
    usdc: USDC,
    head: HEAD,
    genesisTimestamp: GENESIS,
    blockTime: BLOCK_TIME,
    blockTimestampInLogs: true,
  });
  const random = mulberry32(402); // the server and the checks agree without sharing state
  const blocks = settlementBlocks(random);
  const firstBlock = FIRST_BLOCK;
  const span = HEAD - firstBlock;
  let tx = 1;
  blocks.forEach((block, i) => {
    const txHash = `0x${(tx++).toString(16).padStart(64, '0')}` as Hex;
    chain.settle(
      block,
      txHash,
      payer(Math.floor(random() * 20_000)),
      seller(i % SELLERS),
      BigInt(1_000 + Math.floor(random() * 1e6)),
      BigInt(i + 1),
    );
  });
  // Noise the indexer must not count: plain transfers to sellers and settlements to others.
  for (let i = 0; i < PAYMENTS / 10; i++) {
    const block = firstBlock + Math.floor(random() * span);
    const txHash = `0x${(tx++).toString(16).padStart(64, '0')}` as Hex;
    if (i % 2 === 0) chain.transfer(block, txHash, other(i), seller(i % SELLERS), 5_000n);
    else chain.settle(block, txHash, payer(i % 20_000), other(i), 5_000n, BigInt(PAYMENTS + i + 1));
  }
  return chain;
}

/**
 * Set in the process a whole run is measured in (to the node flags it was started with), so that
 * it runs the benchmark instead of starting another process.
 */
const MEASURED = 'X402_BENCH_MEASURED_FLAGS';

if (positionals[0] === 'serve') {
  const chain = buildChain();
  // The server records the eth_getLogs calls it answers (outside the indexer's memory) and hands
  // them over after the sync, for the bare replay.
  // Kept as the parsed objects while the sync runs and serialized only at the hand-over, so that
  // recording costs the server no CPU during the timed sync that the bare replay does not pay.
  const recorded: unknown[][] = [];
  const server = await serveJsonRpc(
    (m, p) => {
      if (m === 'eth_getLogs' && recording) recorded.push(p);
      return chain.call(m, p);
    },
    { latencyMs: LATENCY_MS },
  );
  let recording = !args['skip-bare']; // nothing to replay: no recorded calls held in the server
  process.on('message', (msg) => {
    if (msg === 'cpu') process.send!({ cpu: process.cpuUsage() });
    if (msg === 'calls') {
      recording = false;
      const file = path.join(os.tmpdir(), `x402-bench-calls-${process.pid}.ndjson`);
      // Line by line: a post-Denim window's calls do not fit in one string.
      const fd = openSync(file, 'w');
      recorded.forEach((p, i) => writeSync(fd, `${i > 0 ? '\n' : ''}${JSON.stringify(p)}`));
      closeSync(fd);
      process.send!({ file });
    }
  });
  process.send!({ url: server.url, logs: chain.logs.length });
} else if (args.whole && process.env[MEASURED] === undefined) {
  // A whole run is measured in a process started as bin/x402-tally.js starts `run`: with its node
  // flags and environment (bin/node-flags.js), which take effect only when a process starts.
  const flags =
    args['node-flags'] === undefined ? COMMAND_PROCESS.run.node : args['node-flags'].split(/\s+/).filter(Boolean);
  const env = args['node-flags'] === undefined ? COMMAND_PROCESS.run.env : {};
  console.log(`measured process: node ${flags.join(' ') || '(no flags)'} ${JSON.stringify(env)}`);
  const measured = spawn(process.execPath, [...process.execArgv, ...flags, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, ...env, [MEASURED]: flags.join(' ') },
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => measured.kill(signal));
  measured.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  await main();
}

async function main() {
  if (!process.env.TEST_DATABASE_URL) throw new Error('set TEST_DATABASE_URL to a Postgres database');
  if (args['profile-statements']) profileStatements();
  const t0 = performance.now();
  // The fake node holds the whole generated chain: 5M payments (10.75M logs) take more than Node's
  // default heap limit. Its memory is its own process's, not the measured indexer's.
  const child = fork(fileURLToPath(import.meta.url), ['serve', ...process.argv.slice(2)], {
    stdio: 'inherit',
    // Without the measured process's own flags (`--optimize-for-size` would slow the server).
    execArgv: [
      ...process.execArgv.filter((flag) => !(process.env[MEASURED] ?? '').split(' ').includes(flag)),
      '--max-old-space-size=12288',
      '--max-semi-space-size=64',
    ],
  });
  process.on('exit', () => child.kill()); // also when the sync fails
  const { url, logs } = await new Promise<{ url: string; logs: number }>((resolve) =>
    child.once('message', resolve as never),
  );
  console.log(`server ready in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${logs} logs, ${HEAD + 1} blocks`);

  // A scratch schema of its own; its connections carry an application_name, so that the CPU of
  // this benchmark's Postgres backends can be told from other sessions' on a shared machine.
  const appName = `x402-bench-${process.pid}`;
  const scratch = await createScratchSchema(process.env.TEST_DATABASE_URL, 'bench_idx');
  const dbUrl = new URL(scratch.url);
  dbUrl.searchParams.set('application_name', appName);
  const db = await openDatabase({ databaseUrl: dbUrl.toString(), dataDir: null });
  await migrate(db.db);
  const postgresCpu = backendCpuMeter(process.env.TEST_DATABASE_URL, appName);
  const concurrency = Number(args.concurrency);
  const syncTrials = {
    ...(args['parallel-batches'] ? { parallelBatches: Number(args['parallel-batches']) } : {}),
    ...(args['fetch-ahead'] ? { fetchAhead: Number(args['fetch-ahead']) } : {}),
  };
  const timeoutMs = Number(args['rpc-timeout-ms']);
  const client = createChainClient({ rpcUrls: [url], chainId: 8453, timeoutMs });
  // The whole run reads its sellers from a catalog file, as `run` with CATALOG_SOURCE=<file> does.
  const catalogDir = mkdtempSync(path.join(os.tmpdir(), 'x402-bench-catalog-'));
  const catalogFile = path.join(catalogDir, 'catalog.json');
  if (args.whole) writeFileSync(catalogFile, JSON.stringify(benchCatalogItems(SELLERS, USDC)));

  let peakRss = 0;
  let peakHeap = 0;
  // Where the memory was when RSS peaked: V8's heap (used and reserved), memory outside it that
  // JavaScript objects hold (Buffers: responses, COPY text), and the rest (code, the runtime).
  let atPeak: NodeJS.MemoryUsage | undefined;
  let stagePeakRss = 0; // since the current stage of a whole run started
  let snapshotAtMB = args['heap-snapshot-mb'] === undefined ? undefined : Number(args['heap-snapshot-mb']);
  const sampler = setInterval(() => {
    const rss = process.memoryUsage.rss();
    if (rss > peakRss) {
      peakRss = rss;
      atPeak = process.memoryUsage();
    }
    stagePeakRss = Math.max(stagePeakRss, process.memoryUsage.rss());
    if (snapshotAtMB !== undefined && rss > snapshotAtMB * 2 ** 20) {
      snapshotAtMB = undefined;
      const file = v8.writeHeapSnapshot(path.join(os.tmpdir(), `x402-bench-${process.pid}.heapsnapshot`));
      console.log(`heap snapshot at ${Math.round(rss / 2 ** 20)} MB RSS: ${file}`);
    }
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 50);
  // The server's CPU time (its own process) over the sync and over the bare replay.
  const serverCpu = async () => {
    child.send('cpu');
    const { cpu } = await new Promise<{ cpu: NodeJS.CpuUsage }>((resolve) => child.once('message', resolve as never));
    return (cpu.user + cpu.system) / 1e6;
  };
  const serverCpu0 = await serverCpu();
  await postgresCpu.start();
  resetStatementProfile();
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  let stats: SyncStats;
  let run: RunReport | undefined;
  const cpuSeconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
  let stageStart: { indexer: number; postgres: number | null } = { indexer: 0, postgres: 0 };
  const stageCpu: Record<string, { indexer: number; postgres: number | null; peakRssMB: number }> = {};
  if (args.whole) {
    // The configuration `run` would load from its environment (the RPC timeout is the bench's option).
    const config = loadConfig({
      DATABASE_URL: dbUrl.toString(),
      RPC_URL: url,
      CATALOG_SOURCE: catalogFile,
      USDC_ADDRESS: USDC,
      RPC_CONCURRENCY: String(concurrency),
      // the method `run` computes: its default unless the environment says (METHOD_VERSION=2.0.0 ...)
      ...(process.env.METHOD_VERSION ? { METHOD_VERSION: process.env.METHOD_VERSION } : {}),
    });
    const log = args['log-level'] === 'silent' ? silentLogger : createLogger(args['log-level'], 'json');
    const deps = defaultDeps();
    run = await runCycle(
      db,
      config,
      {
        ...deps,
        createChainClient: (o) => deps.createChainClient({ ...o, timeoutMs }),
        syncChain: (d, c, o) => deps.syncChain(d, c, { ...o, ...syncTrials }),
      },
      {
        log,
        // Per stage: this process's CPU and its Postgres backends' (the run's progress lines
        // `<stage>…` and `<stage> done in N ms` mark each stage's start and end).
        progress: (line) => {
          const m = /^(\w+)(…| done in)/.exec(line);
          if (!m) return;
          const now = { indexer: cpuSeconds(process.cpuUsage()), postgres: postgresCpu.now() };
          if (m[2] === '…') {
            stageStart = now;
            stagePeakRss = process.memoryUsage.rss();
          } else
            stageCpu[m[1]!] = {
              indexer: +(now.indexer - stageStart.indexer).toFixed(2),
              postgres: now.postgres === null ? null : +(now.postgres - stageStart.postgres!).toFixed(2),
              peakRssMB: Math.round(Math.max(stagePeakRss, process.memoryUsage.rss()) / 2 ** 20),
            };
        },
      },
    );
    stats = run.sync;
  } else {
    const asOf = await resolveAsOf(client, {});
    const { rows } = await sql<{ seq: bigint }>`select nextval('ingest_seq') as seq`.execute(db.db);
    const sellers = Array.from({ length: SELLERS }, (_, i) => seller(i));
    stats = await syncChain(db.db, client, {
      usdcAddress: USDC,
      sellers,
      asOf,
      windowSeconds: WINDOW,
      runSeq: BigInt(rows[0]!.seq),
      concurrency,
      ...syncTrials,
    });
  }
  const indexMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage.rss());

  const serverCpu1 = await serverCpu();
  const postgresCpuSync = await postgresCpu.stop();
  // The same eth_getLogs calls alone: no validation, no decoding, no storage.
  const bare = args['skip-bare'] ? undefined : await bareReplay(concurrency);
  const serverCpu2 = await serverCpu();

  // Payments as the method's view counts them (rules 2-3, rule 3 from the stored class), and the
  // EIP-3009 transfers that name their pairing log (pair_log_index): the two must agree.
  const check = await sql<{ payments: bigint; distinct_payments: bigint; by_join: bigint }>`
    select count(*) filter (where t.authorized) as payments,
           count(distinct (t.tx_hash, t.log_index)) filter (where t.authorized) as distinct_payments,
           count(*) filter (where x.pair_log_index is not null and x.class = 1) as by_join
      from transfer_facts t
      join transfers x using (block_id, log_index)
     where t.from_id <> t.to_id and t.value > 0`.execute(db.db);
  const payments = Number(check.rows[0]!.payments);
  if (Number(check.rows[0]!.by_join) !== payments)
    throw new Error(`authorized class (${payments}) and pairing logs (${check.rows[0]!.by_join}) disagree`);
  // What the whole run published: the payments of every seller's 30 days, summed.
  // and how many payments its window holds, from the chain's generator alone (METHOD.md 2.2:
  // as_of_ts - window_seconds < block time <= as_of_ts; the fake node's finalized block is its head).
  const asOfTs = GENESIS + Math.floor(HEAD * BLOCK_TIME);
  const expectedPublished = settlementBlocks(mulberry32(402)).filter(
    (b) => GENESIS + Math.floor(b * BLOCK_TIME) > asOfTs - WINDOW,
  ).length;
  const published = run
    ? await sql<{ payments: string; sellers: string }>`
        select coalesce(sum(s.payments_30d), 0)::text as payments, count(*)::text as sellers
          from gen_sellers s where s.generation = ${run.generation}`.execute(db.db)
    : undefined;
  const result = {
    payments,
    storedOnce: payments === Number(check.rows[0]!.distinct_payments),
    expectedPayments: PAYMENTS,
    sellers: SELLERS,
    blockTimeSeconds: BLOCK_TIME,
    latencyMs: LATENCY_MS,
    concurrency: Number(args.concurrency),
    blocks: HEAD + 1,
    ranges: stats.ranges,
    getLogsCalls: bare?.calls,
    logsReturnedBare: bare?.logs,
    indexerSeconds: +(indexMs / 1000).toFixed(2),
    bareRpcSeconds: bare && +(bare.ms / 1000).toFixed(2),
    ratio: bare && +(indexMs / bare.ms).toFixed(2),
    ...(run && {
      whole: true,
      generation: run.generation,
      publishedPayments: Number(published!.rows[0]!.payments),
      expectedPublishedPayments: expectedPublished,
      publishedSellers: Number(published!.rows[0]!.sellers),
      stageMs: run.ms,
      stageCpuSecondsAndRss: stageCpu,
    }),
    paymentsPerSecond: Math.round(payments / (indexMs / 1000)),
    peakRssMB: Math.round(peakRss / 2 ** 20),
    peakHeapUsedMB: Math.round(peakHeap / 2 ** 20),
    ...(atPeak && {
      atPeakRssMB: {
        heapUsed: Math.round(atPeak.heapUsed / 2 ** 20),
        heapTotal: Math.round(atPeak.heapTotal / 2 ** 20),
        external: Math.round(atPeak.external / 2 ** 20),
        arrayBuffers: Math.round(atPeak.arrayBuffers / 2 ** 20),
        outsideHeap: Math.round((atPeak.rss - atPeak.heapTotal - atPeak.external) / 2 ** 20),
      },
    }),
    indexerCpuSeconds: +((cpu.user + cpu.system) / 1e6).toFixed(2),
    serverCpuSecondsDuringSync: +(serverCpu1 - serverCpu0).toFixed(2),
    postgresCpuSecondsDuringSync: postgresCpuSync === null ? null : +postgresCpuSync.toFixed(2),
    // Polls (every 200 ms) that found one of the benchmark's backends running a statement.
    postgresActiveSamples: postgresCpu.samples(),
    postgresWaitSamples: postgresCpu.waits(),
    ...(args['profile-statements'] && { statementMs: statementProfile() }),
    bareClientCpuSeconds: bare && +(bare.cpuSeconds / 1e6).toFixed(2),
    serverCpuSecondsDuringBare: bare && +(serverCpu2 - serverCpu1).toFixed(2),
  };
  console.log(JSON.stringify(result, null, 2));
  await db.close();
  await scratch.drop();
  child.kill();
  rmSync(catalogDir, { recursive: true, force: true });
  if (payments !== PAYMENTS || !result.storedOnce) process.exitCode = 1;
  if (run && result.publishedPayments !== expectedPublished) process.exitCode = 1;

  /** Sends the server's recorded eth_getLogs calls again, `concurrency` at a time, and times them. */
  async function bareReplay(concurrency: number) {
    child.send('calls');
    const { file } = await new Promise<{ file: string }>((resolve) => child.once('message', resolve as never));
    const calls = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as unknown[]);
    rmSync(file);
    const limit = pLimit(concurrency);
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    let logs = 0;
    await Promise.all(
      calls.map((params) =>
        limit(async () => {
          // Awaited first: `logs += await …` would read `logs` before the wait and lose updates.
          const answer = (await client.request('eth_getLogs', params)) as unknown[];
          logs += answer.length;
        }),
      ),
    );
    const ms = performance.now() - start;
    const cpu = process.cpuUsage(cpuStart);
    return { calls: calls.length, logs, ms, cpuSeconds: cpu.user + cpu.system };
  }
}

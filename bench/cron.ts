/**
 * Benchmark: whole `x402-tally run` processes as a 15-minute cron runs them (issue 10). A fake
 * JSON-RPC node (test/chain/fake-rpc.ts, served from this process) holds 31 days of post-Denim
 * blocks (0.2 s) with PAYMENTS x402 settlements (default 1,000,000) to SELLERS sellers (default
 * 10,000) plus 10% noise the method must not count; a catalog file lists one Base USDC listing per
 * seller. Run 1 backfills the window and computes a cold generation; then the node grows by 15
 * minutes of blocks (4,500) with 15 minutes of payments at the window's rate (PAYMENTS / 2880),
 * and run 2, the steady cron run, is timed the same way: wall time of the whole process.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/cron.ts [--payments N] [--sellers N] [--runs N]
 *
 * Works in a scratch schema of its own (dropped at the end). Writes bench/out/cron.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';
import { createRng } from '../src/devchain/prng.ts';
import { projectRoot } from '../src/lib/paths.ts';
import { FakeChain, serveJsonRpc, type Hex } from '../test/chain/fake-rpc.ts';
import { other, payer, seller } from './fake-addresses.ts';
import { benchCatalogItems } from './fake-catalog.ts';

const { values: args } = parseArgs({
  options: {
    payments: { type: 'string', default: '1000000' },
    sellers: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '3' }, // steady runs after the first
  },
});
const PAYMENTS = Number(args.payments);
const SELLERS = Number(args.sellers);
const STEADY_RUNS = Number(args.runs);
const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const BLOCK_TIME = 0.2;
const GENESIS = 1_760_000_400;
const HEAD = Math.round((31 * 86_400) / BLOCK_TIME);
const STEP_BLOCKS = 900 / BLOCK_TIME; // 15 minutes

const random = createRng('bench/cron').next;
let tx = 1;
let nonce = 1n;
const nextTx = () => `0x${(tx++).toString(16).padStart(64, '0')}` as Hex;

/** `count` settlements at random blocks of (from, to], plus a tenth as many that must not count. */
function pay(chain: FakeChain, from: number, to: number, count: number) {
  const blocks = Array.from({ length: count }, () => from + 1 + Math.floor(random() * (to - from))).sort(
    (a, b) => a - b,
  );
  blocks.forEach((block, i) => {
    const value = BigInt(1_000 * (1 + Math.floor(random() * 50)));
    chain.settle(block, nextTx(), payer(Math.floor(random() * 20_000)), seller(i % SELLERS), value, nonce++);
  });
  for (let i = 0; i < count / 10; i++) {
    const block = from + 1 + Math.floor(random() * (to - from));
    if (i % 2 === 0) chain.transfer(block, nextTx(), other(i), seller(i % SELLERS), 5_000n);
    else chain.settle(block, nextTx(), payer(i % 20_000), other(i), 5_000n, nonce++);
  }
}

/** One `x402-tally run` process; its wall time and peak RSS (from /usr/bin/time when present). */
function runOnce(env: NodeJS.ProcessEnv): Promise<{ wall_s: number; code: number | null; tail: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(projectRoot, 'bin/x402-tally.js'), 'run'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    child.stderr.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    child.on('exit', (code) =>
      resolve({ wall_s: +((performance.now() - started) / 1000).toFixed(2), code, tail: out.slice(-1500) }),
    );
  });
}

const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!base)
  throw new Error('BENCH_DATABASE_URL: set it to a Postgres URL (e.g. postgres://postgres@127.0.0.1:5432/test)');
const scratch = await createScratchSchema(base, 'bench_cron');
const dir = mkdtempSync(path.join(os.tmpdir(), 'x402-cron-'));
const chain = new FakeChain({
  usdc: USDC,
  head: HEAD,
  genesisTimestamp: GENESIS,
  blockTime: BLOCK_TIME,
  blockTimestampInLogs: true,
});
pay(chain, Math.round(86_400 / BLOCK_TIME), HEAD, PAYMENTS);
const server = await serveJsonRpc((m, p) => chain.call(m, p));
try {
  const catalog = path.join(dir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify(benchCatalogItems(SELLERS, USDC)));
  const env = {
    DATABASE_URL: scratch.url,
    RPC_URL: server.url,
    CATALOG_SOURCE: catalog,
    CONFIRMATIONS: '0',
    LOG_LEVEL: 'warn',
  };
  console.error(`chain: ${chain.logs.length} logs, head ${HEAD}; schema ${scratch.name}`);
  const first = await runOnce(env);
  console.error(`run 1 (backfill + cold): ${first.wall_s} s, exit ${first.code}`);
  if (first.code !== 0) throw new Error(`run 1 failed:\n${first.tail}`);
  const steady: number[] = [];
  for (let r = 1; r <= STEADY_RUNS; r++) {
    const from = chain.options.head;
    chain.options.head = from + STEP_BLOCKS;
    pay(chain, from, chain.options.head, Math.round(PAYMENTS / 2880));
    const next = await runOnce(env);
    if (next.code !== 0) throw new Error(`run ${r + 1} failed:\n${next.tail}`);
    steady.push(next.wall_s);
    console.error(`run ${r + 1} (15 minutes later): ${next.wall_s} s`);
  }
  // What the last run published: every payment of its window counted (none of the noise).
  const database = await openDatabase({ databaseUrl: scratch.url, maxConnections: 1 });
  const published = await sql<{ generation: number; payments: string; sellers: string }>`
    select g.generation, sum(s.payments_30d)::text as payments, count(*)::text as sellers
      from published_pointer p join generations g using (generation) join gen_sellers s using (generation)
     group by g.generation`.execute(database.db);
  await database.close();
  const sorted = [...steady].sort((a, b) => a - b);
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  const result = {
    payments: PAYMENTS,
    sellers: SELLERS,
    block_time_s: BLOCK_TIME,
    first_run_s: first.wall_s,
    steady_runs_s: steady,
    steady_median_s: median,
    steady_ratio_to_first: +(median / first.wall_s).toFixed(4),
    published: published.rows[0] ?? null,
  };
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./out/cron.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
  if (!process.env.KEEP) await scratch.drop();
}

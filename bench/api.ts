/**
 * API benchmark (docs/benchmarks.md, "## API"): a 50,000-listing generation on real Postgres,
 * the API in its own process, and nginx serving the same response bodies as static files, measured
 * side by side in one run on loopback:
 * - throughput and latency with wrk (closed loop, 1 thread, BENCH_CONNECTIONS connections);
 * - latency at just above 1,000 requests/s (wrk paced by its Lua delay());
 * - directory pages at random cursors (mostly cache misses: each one a Postgres query).
 *
 *   BENCH_DATABASE_URL=postgres://... npx tsx bench/api.ts      (falls back to TEST_DATABASE_URL)
 *
 * Needs `nginx` and `wrk` on PATH (it prints the apt-get line when one is missing). Creates and drops its own schema. Results: stdout (markdown)
 * and bench/out/api.json.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { openDatabase } from '../src/db/index.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';
import { migrate } from '../src/db/migrate.ts';
import { projectRoot } from '../src/lib/paths.ts';
import { getOnce, missingTools, runPaced, runWrk, type WrkResult } from './api/load.ts';
import { startNginx } from './api/nginx.ts';
import { seedBenchGeneration } from './api/seed.ts';

const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!base) {
  console.error(
    'set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a Postgres database the benchmark may create a schema in',
  );
  process.exit(1);
}
const install = missingTools(['nginx', 'wrk']);
if (install) {
  console.error(`the API benchmark needs nginx and wrk on PATH; install them with:\n  ${install}`);
  process.exit(1);
}
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const RATE = 1000;
const LISTINGS = 50_000;

const scratch = await createScratchSchema(base, 'bench_api');
const work = mkdtempSync(path.join(os.tmpdir(), 'x402-tally-bench-api-'));
// nginx workers may run as an unprivileged user: the served files must be world-readable.
chmodSync(work, 0o755);
const stops: (() => Promise<void>)[] = [];

try {
  const database = await openDatabase({ databaseUrl: scratch.url, maxConnections: 2 });
  stops.push(() => database.close());
  await migrate(database.db);
  const seedStart = performance.now();
  await seedBenchGeneration(database.db, { listings: LISTINGS, sellers: 20_000, ranked: 5_000 });
  console.error(`seeded ${LISTINGS} listings in ${Math.round(performance.now() - seedStart)} ms`);
  const deep = await database.db
    .selectFrom('gen_listings')
    .select('listing_id')
    .where('generation', '=', 1)
    .orderBy('listing_id')
    .offset(45_000)
    .limit(1)
    .executeTakeFirstOrThrow();
  const cursors = await database.db
    .selectFrom('gen_listings')
    .select('listing_id')
    .where('generation', '=', 1)
    .execute();

  // The API in its own process, as `serve` runs it.
  const server = spawn(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'bench/api/server.ts')], {
    env: { ...process.env, BENCH_API_DATABASE_URL: scratch.url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  stops.push(() => new Promise((resolve) => (server.once('exit', () => resolve()), server.kill('SIGTERM'))));
  const line = await new Promise<string>((resolve) =>
    readline.createInterface({ input: server.stdout! }).once('line', resolve),
  );
  const apiPort = (JSON.parse(line) as { port: number }).port;
  const api = `http://127.0.0.1:${apiPort}`;

  const cases = [
    { name: 'directory, first page', path: '/api/v1/sellers', file: 'directory.json' },
    {
      name: 'directory, deep cursor (row 45,001)',
      path: `/api/v1/sellers?cursor=${deep.listing_id}`,
      file: 'deep.json',
    },
    { name: 'seller profile', path: `/api/v1/sellers/0x${(2).toString(16).padStart(40, '0')}`, file: 'profile.json' },
    { name: 'rankings (100 rows)', path: '/api/v1/rankings', file: 'rankings.json' },
    { name: 'meta', path: '/api/v1/meta', file: 'meta.json' },
  ];
  // nginx serves exactly the bodies the API serves.
  const root = path.join(work, 'root');
  mkdirSync(root, { mode: 0o755 });
  for (const c of cases) {
    const res = await getOnce(api + c.path);
    if (res.status !== 200) throw new Error(`${c.path}: ${res.status}`);
    writeFileSync(path.join(root, c.file), res.body);
  }
  const nginx = await startNginx(path.join(work, 'nginx'), root);
  stops.push(nginx.stop);
  const static_ = `http://127.0.0.1:${nginx.port}`;
  // The 304 case: the first page asked again with the ETag each server gave it.
  const apiTag = (await getOnce(`${api}/api/v1/sellers`)).etag;
  const nginxTag = (await getOnce(`${static_}/directory.json`)).etag;
  if (!apiTag || !nginxTag) throw new Error('no ETag from the API or nginx: cannot measure the 304 case');
  const measured: {
    name: string;
    path: string;
    file: string;
    apiHeaders?: Record<string, string>;
    nginxHeaders?: Record<string, string>;
  }[] = [
    ...cases,
    {
      name: 'directory, first page: 304 (If-None-Match)',
      path: '/api/v1/sellers',
      file: 'directory.json',
      apiHeaders: { 'if-none-match': apiTag },
      nginxHeaders: { 'if-none-match': nginxTag },
    },
  ];

  const rows: {
    name: string;
    bytes: number;
    api: WrkResult;
    nginx: WrkResult;
    apiRate: WrkResult;
    nginxRate: WrkResult;
  }[] = [];
  for (const c of measured) {
    const bytes = c.apiHeaders ? 0 : Buffer.byteLength((await getOnce(api + c.path)).body);
    const apiUrl = api + c.path;
    const nginxUrl = `${static_}/${c.file}`;
    const onApi = { connections: CONNECTIONS, headers: c.apiHeaders };
    const onNginx = { connections: CONNECTIONS, headers: c.nginxHeaders };
    // Warm-up (JIT, caches) before each measured pair.
    runWrk(apiUrl, { ...onApi, seconds: 2 });
    runWrk(nginxUrl, { ...onNginx, seconds: 2 });
    const a = runWrk(apiUrl, { ...onApi, seconds: SECONDS });
    const n = runWrk(nginxUrl, { ...onNginx, seconds: SECONDS });
    const ar = runPaced(apiUrl, { rate: RATE, seconds: SECONDS, dir: work, headers: c.apiHeaders });
    const nr = runPaced(nginxUrl, { rate: RATE, seconds: SECONDS, dir: work, headers: c.nginxHeaders });
    rows.push({ name: c.name, bytes, api: a, nginx: n, apiRate: ar, nginxRate: nr });
    console.error(
      `${c.name}: api ${a.rps.toFixed(0)} rps, nginx ${n.rps.toFixed(0)} rps; p99 at ${RATE}/s: api ${ar.p99Ms.toFixed(2)} ms`,
    );
  }

  // Random cursors: almost every request is a new URL, so a Postgres query per request.
  const list = path.join(work, 'cursors.txt');
  writeFileSync(list, cursors.map((r) => r.listing_id).join('\n'));
  const lua = path.join(work, 'random-cursor.lua');
  writeFileSync(
    lua,
    `local c = {}\nfor l in io.lines("${list}") do c[#c + 1] = l end\nmath.randomseed(7)\nrequest = function()\n  return wrk.format("GET", "/api/v1/sellers?cursor=" .. c[math.random(#c)])\nend\n`,
  );
  const cold = runWrk(`${api}/api/v1/sellers`, { connections: CONNECTIONS, seconds: SECONDS, script: lua });
  // The same at a paced 500 requests/s (20 connections, each every 37 ms): latency below saturation.
  const coldLua = path.join(work, 'random-cursor-paced.lua');
  writeFileSync(coldLua, `${readFileSync(lua, 'utf8')}delay = function() return 37 end\n`);
  const coldPaced = runWrk(`${api}/api/v1/sellers`, { connections: 20, seconds: SECONDS, script: coldLua });

  const f = (n: number, d = 0) => n.toFixed(d);
  const out = [
    `wrk -t1 -c${CONNECTIONS} -d${SECONDS}s --latency (closed loop); paced: wrk -t1 -c20 with delay() for just above ${RATE} req/s; ${os.cpus().length} cores, Node ${process.version}`,
    '',
    '| request | body bytes | API req/s | nginx req/s | API / nginx | API p99 | nginx p99 | paced: API req/s, p50 / p99 | paced: nginx p99 | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.bytes} | ${f(r.api.rps)} | ${f(r.nginx.rps)} | ${f(r.api.rps / r.nginx.rps, 2)} | ${f(r.api.p99Ms, 2)} ms | ${f(r.nginx.p99Ms, 2)} ms | ${f(r.apiRate.rps)}, ${f(r.apiRate.p50Ms, 2)} / ${f(r.apiRate.p99Ms, 2)} ms | ${f(r.nginxRate.p99Ms, 2)} ms | ${r.api.errors + r.nginx.errors + r.apiRate.errors + r.nginxRate.errors} |`,
    ),
    `| directory, random cursors (cache misses) | ~31000 | ${f(cold.rps)} | n/a | | ${f(cold.p99Ms, 2)} ms | | ${f(coldPaced.rps)}, ${f(coldPaced.p50Ms, 2)} / ${f(coldPaced.p99Ms, 2)} ms | | ${cold.errors + coldPaced.errors} |`,
  ].join('\n');
  console.log(out);
  mkdirSync(path.join(projectRoot, 'bench/out'), { recursive: true });
  writeFileSync(
    path.join(projectRoot, 'bench/out/api.json'),
    JSON.stringify({ seconds: SECONDS, connections: CONNECTIONS, rows, cold, coldPaced }, null, 2),
  );
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await scratch.drop();
  rmSync(work, { recursive: true, force: true });
}

/**
 * Benchmark (docs/benchmarks.md, "Audit for people"): how long a person waits for `audit` on the
 * demo, as whole processes of the real bin started from another folder.
 *
 * Set-up, as `x402-tally demo` does it but without its minute-by-minute runs (which would share
 * the cores with the audits being timed): the demo chain (anvil with the real USDC code, seeded
 * with the demo economy over the real crawl), one `run` at the demo's method into an embedded
 * database, then generation 1's bundle downloaded over HTTP from the API as the demo's printed
 * commands do (manifest.json, then every file it names). Then, RUNS times each after one warm-up:
 *
 *   node bin/x402-tally.js audit --bundle DIR                  (full)
 *   node bin/x402-tally.js audit --bundle DIR --seller 0x...   (seller: the demo seller with the most payments)
 *
 * each under /usr/bin/time (peak RSS), with the time to its first line and its last line. Then,
 * once each, under a pseudo-terminal (`script`): the time to the first progress line on stderr.
 * PROFILE=1 also runs each once under `node --cpu-prof` and prints the self time by module.
 *
 *   npx tsx bench/audit.ts
 *   RUNS=3 PROFILE=1 npx tsx bench/audit.ts
 *
 * Linux only (/usr/bin/time, script). Writes bench/out/audit.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApi } from '../src/api/index.ts';
import { runCommand } from '../src/cli/command.ts';
import { demoCatalogPath } from '../src/cli/demo.ts';
import { openDatabase } from '../src/db/index.ts';
import { demoCatalogItems, readCatalogItems, startDemoChain } from '../src/devchain/index.ts';
import { silentLogger } from '../src/lib/log.ts';
import { projectRoot } from '../src/lib/paths.ts';

const RUNS = Number(process.env.RUNS ?? 5);
const PROFILE = process.env.PROFILE === '1';
const METHOD_VERSION = process.env.METHOD_VERSION ?? '3.0.0';
const BIN = path.join(projectRoot, 'bin', 'x402-tally.js');

const work = mkdtempSync(path.join(os.tmpdir(), 'bench-audit-'));
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor((s.length - 1) / 2)]!, max: s.at(-1)! };
};
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

interface Timed {
  code: number;
  wallS: number;
  firstLineS: number | null;
  peakMb: number;
  last: string;
}

/** One whole process of the bin, from `cwd`, timed by us (wall, first line) and by /usr/bin/time (peak RSS). */
async function timed(args: string[], env: Record<string, string>, cwd: string): Promise<Timed> {
  const timeFile = path.join(work, 'time.txt');
  const started = performance.now();
  let firstLine: number | null = null;
  const lines: string[] = [];
  const child = spawn('/usr/bin/time', ['-f', '%M', '-o', timeFile, process.execPath, BIN, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      firstLine ??= performance.now();
      lines.push(...chunk.split('\n').filter(Boolean));
    });
  }
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  const wallS = (performance.now() - started) / 1000;
  const peakKb = Number(readFileSync(timeFile, 'utf8').trim().split('\n').at(-1));
  return {
    code,
    wallS,
    firstLineS: firstLine === null ? null : (firstLine - started) / 1000,
    peakMb: peakKb / 1024,
    last: lines.at(-1) ?? '',
  };
}

/** The seconds to the first progress line (`» ...`) of one audit under a pseudo-terminal. */
async function firstProgress(args: string[], env: Record<string, string>, cwd: string): Promise<number | null> {
  const command = [process.execPath, BIN, ...args].map((w) => `'${w}'`).join(' ');
  const started = performance.now();
  let first: number | null = null;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    if (first === null && chunk.includes('»')) first = (performance.now() - started) / 1000;
  });
  await new Promise((resolve) => child.on('close', resolve));
  return first;
}

/** Self time by module of one run under --cpu-prof: where the time goes. */
async function profile(args: string[], env: Record<string, string>, cwd: string): Promise<[string, number][]> {
  const dir = mkdtempSync(path.join(work, 'prof-'));
  const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, BIN, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  await new Promise((resolve) => child.on('close', resolve));
  const bySource = new Map<string, number>();
  for (const file of readdirSync(dir)) {
    const prof = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as {
      nodes: { id: number; callFrame: { url: string; functionName: string } }[];
      samples: number[];
      timeDeltas: number[];
    };
    const nodes = new Map(prof.nodes.map((n) => [n.id, n.callFrame]));
    prof.samples.forEach((id, i) => {
      const frame = nodes.get(id)!;
      const url = frame.url.replace(/^file:\/\//, '');
      // A package by its name, our sources by file, the rest (GC, idle, native) by function.
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
      const key = pkg ?? (url ? path.relative(projectRoot, url) : `(${frame.functionName || 'native'})`);
      bySource.set(key, (bySource.get(key) ?? 0) + (prof.timeDeltas[i] ?? 0) / 1e6);
    });
  }
  return [...bySource].sort((a, b) => b[1] - a[1]).slice(0, 15);
}

console.error(`load ${load()}: starting the demo chain and one run at method ${METHOD_VERSION}…`);
const items = demoCatalogItems(readCatalogItems(demoCatalogPath()));
const catalogFile = path.join(work, 'demo-catalog.json');
writeFileSync(catalogFile, JSON.stringify({ resources: items }));
const chain = await startDemoChain({ catalogItems: items });
const dataDir = path.join(work, 'data');
const bundle = path.join(work, 'elsewhere', 'g');
try {
  const env = {
    RPC_URL: chain.url,
    CATALOG_SOURCE: catalogFile,
    USDC_ADDRESS: chain.usdcAddress,
    CHAIN_ID: String(chain.chainId),
    CONFIRMATIONS: '0',
    METHOD_VERSION,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
  };
  const run = await runCommand(['run'], env, { out: () => {}, err: (l) => console.error(l), log: silentLogger });
  if (run !== 0) throw new Error(`run exited ${run}`);

  // The bundle over HTTP, as the demo prints it: manifest.json, then every file it names.
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
  const sellers = readFileSync(path.join(bundle, 'sellers.ndjson'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { seller_address: string; payments_30d: number | string });
  const seller = sellers.sort((a, b) => Number(b.payments_30d) - Number(a.payments_30d))[0]!.seller_address;
  const payments = sellers.reduce((n, s) => n + Number(s.payments_30d), 0);
  console.error(`bundle: ${sellers.length} sellers, ${payments} payments; --seller ${seller}`);

  // From another folder, as a person runs the printed command; the bin by its absolute path.
  const cwd = path.join(work, 'elsewhere');
  const auditEnv = { RPC_URL: chain.url };
  const cases = { full: ['audit', '--bundle', './g'], seller: ['audit', '--bundle', './g', '--seller', seller] };
  const results: Record<string, unknown> = {};
  for (const [name, args] of Object.entries(cases)) {
    const loads = [load()];
    await timed(args, auditEnv, cwd); // warm-up: the page cache, not counted
    const runs: Timed[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await timed(args, auditEnv, cwd));
    loads.push(load());
    const tty = await firstProgress(args, auditEnv, cwd);
    const prof = PROFILE ? await profile(args, auditEnv, cwd) : undefined;
    const summary = {
      exits: runs.map((r) => r.code),
      wallS: stats(runs.map((r) => r.wallS)),
      firstLineS: stats(runs.map((r) => r.firstLineS ?? Number.NaN)),
      peakMb: stats(runs.map((r) => r.peakMb)),
      firstProgressOnTerminalS: tty,
      lastLine: runs.at(-1)!.last,
      loadBeforeAfter: loads,
      ...(prof ? { selfSecondsByModule: prof } : {}),
    };
    results[name] = summary;
    const f = (s: { min: number; median: number; max: number }, d = 1) =>
      `${s.min.toFixed(d)} / ${s.median.toFixed(d)} / ${s.max.toFixed(d)}`;
    console.log(
      `${name.padEnd(6)} exits ${summary.exits.join(',')}  wall s ${f(summary.wallS)}  first line s ${f(summary.firstLineS)}` +
        `  peak MB ${f(summary.peakMb, 0)}  progress on a terminal ${tty?.toFixed(1) ?? '-'} s  (load ${loads.join(' -> ')})`,
    );
    console.log(`       last line: ${summary.lastLine}`);
    if (prof) for (const [key, s] of prof) console.log(`       ${s.toFixed(2).padStart(6)} s  ${key}`);
  }
  mkdirSync(path.join(projectRoot, 'bench', 'out'), { recursive: true });
  writeFileSync(
    path.join(projectRoot, 'bench', 'out', 'audit.json'),
    JSON.stringify(
      { date: new Date().toISOString(), runs: RUNS, seller, sellers: sellers.length, payments, results },
      null,
      2,
    ),
  );
} finally {
  await chain.stop();
  rmSync(work, { recursive: true, force: true });
}

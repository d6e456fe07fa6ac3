/**
 * Benchmark (docs/benchmarks.md, "Audit for people"): how long a person waits for `audit` on the
 * demo, as whole processes of the real bin started from another folder.
 *
 * Set-up: the demo generation and its bundle, downloaded as the demo prints it (bench/audit-demo.ts).
 * Then, RUNS times each after one warm-up:
 *
 *   node bin/x402-tally.js audit --bundle DIR                  (full)
 *   node bin/x402-tally.js audit --bundle DIR --seller 0x...   (seller: the demo seller with the most payments)
 *
 * each with its peak memory (bench/tree-memory.ts: every process's own peak RSS added up, since
 * `audit` runs as a launcher and a child; `/usr/bin/time -f %M` would report the child alone), the
 * time to its first line and its last line. Then,
 * once each, under a pseudo-terminal (`script`): the time to the first progress line on stderr.
 * PROFILE=1 also runs each once under `node --cpu-prof` and prints the self time by module.
 *
 *   npx tsx bench/audit.ts
 *   RUNS=3 PROFILE=1 npx tsx bench/audit.ts
 *
 * Linux only (/proc, script). Writes bench/out/audit.json.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../src/lib/paths.ts';
import { demoBundle } from './audit-demo.ts';
import { runTree } from './tree-memory.ts';

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
  /** Every process's own peak RSS added up (the launcher and the audit's child). */
  peakMb: number;
  /** The largest single process's peak RSS (what /usr/bin/time -f %M reports). */
  largestMb: number;
  last: string;
}

/** One whole process tree of the bin, from `cwd`: wall, first line, peak memory (bench/tree-memory.ts). */
async function timed(args: string[], env: Record<string, string>, cwd: string): Promise<Timed> {
  const run = await runTree(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, ...env } });
  return {
    code: run.code,
    wallS: run.wallS,
    firstLineS: run.firstLineS,
    peakMb: run.sumOfPeaksMb,
    largestMb: run.largestPeakMb,
    last: run.lines.at(-1) ?? '',
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
  // Through NODE_OPTIONS, so the audit's child process (bin/x402-tally.js) is profiled too.
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, ...env, NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` },
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
const demo = await demoBundle(work, METHOD_VERSION);
try {
  const { seller, sellers, payments } = demo;
  console.error(`bundle: ${sellers} sellers, ${payments} payments; --seller ${seller}`);

  // From another folder, as a person runs the printed command; the bin by its absolute path.
  const cwd = demo.elsewhere;
  const auditEnv = { RPC_URL: demo.rpcUrl };
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
      largestProcessPeakMb: stats(runs.map((r) => r.largestMb)),
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
    JSON.stringify({ date: new Date().toISOString(), runs: RUNS, seller, sellers, payments, results }, null, 2),
  );
} finally {
  await demo.stop();
  rmSync(work, { recursive: true, force: true });
}

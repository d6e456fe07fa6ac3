/**
 * Benchmark (docs/benchmarks.md, "Audit memory"): the peak memory of `audit` on the demo under
 * variants of how its process is started (V8 flags, glibc's malloc arenas, the TypeScript loader),
 * paired: one demo generation (bench/audit-demo.ts), then RUNS rounds, each running every variant
 * once in a rotated order after one warm-up each, so load drifts hit every variant alike.
 *
 *   VARIANTS=tsx,tsx+arena1,compiled+notier+arena1,launcher RUNS=3 npx tsx bench/audit-memory.ts
 *   CASE=seller VARIANTS=... npx tsx bench/audit-memory.ts
 *   BEFORE_BIN=<a checkout of an earlier commit>/bin/x402-tally.js VARIANTS=before,launcher ...
 *
 * Each run is a whole process tree started from another folder (bench/tree-memory.ts: the sum of
 * every process's own peak RSS, the largest one, the largest sampled sums of RSS and PSS, and the
 * tree's CPU seconds). After the summaries, each variant against the first, paired by round
 * (min / median / max of the ratios). STAGES=1 runs the audit at LOG_LEVEL=info and reports its
 * child's RSS at the end of each stage (`audit stage done`). Writes bench/out/audit-memory.json,
 * with every run's figures.
 *
 * To compare code changes against one demo generation (seeding it takes a minute or more):
 * `SERVE=<file> npx tsx bench/audit-memory.ts` makes it, writes where it is to that file
 * and waits for Ctrl-C; `DEMO=<file> VARIANTS=... npx tsx bench/audit-memory.ts` uses it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../src/lib/paths.ts';
import { demoBundle, type DemoBundle } from './audit-demo.ts';
import { runTree, type TreeRun } from './tree-memory.ts';

const RUNS = Number(process.env.RUNS ?? 3);
const CASE = process.env.CASE ?? 'full';
const METHOD_VERSION = process.env.METHOD_VERSION ?? '3.0.0';
/** STAGES=1: the audit logs at info, and each stage's resident memory (`audit stage done`) is reported. */
const STAGES = process.env.STAGES === '1';
const BIN = path.join(projectRoot, 'bin', 'x402-tally.js');

/**
 * A variant is a base and modifiers joined by `+`, e.g. `compiled+notier+arena1`. Bases:
 * - `launcher`: `node bin/x402-tally.js` as a person runs it (a launcher and the audit's child);
 * - `tsx`: the same bin with the launcher skipped (X402_TALLY_AUDIT_CHILD=1): one process, the
 *   sources through tsx, as every command ran before the launcher;
 * - `compiled`: the compiled command line the launcher starts (bin/compiled.js), one process;
 * - `before`: BEFORE_BIN, the bin of a checkout of an earlier commit, one process.
 * Modifiers go on that one process's command line (`launcher` takes none: it sets its own).
 */
const MODIFIERS: Record<string, { node?: string[]; env?: Record<string, string> }> = {
  arena1: { env: { MALLOC_ARENA_MAX: '1' } },
  arena2: { env: { MALLOC_ARENA_MAX: '2' } },
  liftoff: { node: ['--liftoff-only'] },
  notier: { node: ['--no-wasm-dynamic-tiering', '--no-wasm-tier-up'] },
  tasks1: { node: ['--wasm-num-compilation-tasks=1'] },
  semi1: { node: ['--max-semi-space-size=1'] },
  size: { node: ['--optimize-for-size'] },
  single: { node: ['--single-threaded'] },
};

let compiledEntry: string | undefined;
/** The compiled command line's entry, made by bin/compiled.js (plain JavaScript, run as a process). */
function compiled(): string {
  compiledEntry ??= execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { compiledCli } from ${JSON.stringify(path.join(projectRoot, 'bin', 'compiled.js'))}; console.log(compiledCli())`,
    ],
    { encoding: 'utf8' },
  ).trim();
  if (compiledEntry === 'null') throw new Error('bin/compiled.js could not build the command line');
  return compiledEntry;
}

function variant(name: string): { argv: string[]; env: Record<string, string> } {
  const [base, ...mods] = name.split('+');
  const node: string[] = [];
  const env: Record<string, string> = {};
  for (const mod of mods) {
    const m = MODIFIERS[mod];
    if (!m) throw new Error(`unknown modifier ${mod}: ${Object.keys(MODIFIERS).join(', ')}`);
    node.push(...(m.node ?? []));
    Object.assign(env, m.env);
  }
  if (base === 'launcher' && mods.length === 0) return { argv: [BIN], env };
  if (base === 'tsx') return { argv: [...node, BIN], env: { ...env, X402_TALLY_AUDIT_CHILD: '1' } };
  if (base === 'compiled') return { argv: [...node, compiled()], env };
  if (base === 'before' && process.env.BEFORE_BIN) return { argv: [...node, process.env.BEFORE_BIN], env };
  throw new Error(`variant ${name}: launcher (alone), tsx+..., compiled+..., before+... (with BEFORE_BIN)`);
}

const chosen = (process.env.VARIANTS ?? 'tsx,launcher').split(',');
const variants = new Map(chosen.map((name) => [name, variant(name)]));

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor((s.length - 1) / 2)]!, max: s.at(-1)! };
};

/** The audit's verdict (its last stdout line, among the log lines of STAGES=1), else the last line. */
const verdictOf = (lines: string[]) =>
  lines.findLast((l) => l.startsWith('audit: ') || l.startsWith('temporary failure')) ?? lines.at(-1) ?? '';

/** Per stage of the audit's child (its `audit stage done` log lines): resident memory at its end and the peak so far. */
function stagesOf(rs: TreeRun[]) {
  const by = new Map<string, { rssMb: number[]; peakRssMb: number[] }>();
  for (const r of rs)
    for (const line of r.lines) {
      if (!line.includes('"audit stage done"')) continue;
      let parsed: { stage: string; rssMb: number; peakRssMb: number };
      try {
        parsed = JSON.parse(line) as typeof parsed;
      } catch {
        continue; // a line cut in two by the pipe's chunks (runTree splits chunks, not lines)
      }
      const { stage, rssMb, peakRssMb } = parsed;
      const s = by.get(stage) ?? { rssMb: [], peakRssMb: [] };
      s.rssMb.push(rssMb);
      s.peakRssMb.push(peakRssMb);
      by.set(stage, s);
    }
  return Object.fromEntries([...by].map(([k, v]) => [k, { rssMb: stats(v.rssMb), peakRssMb: stats(v.peakRssMb) }]));
}

const work = mkdtempSync(path.join(os.tmpdir(), 'bench-audit-memory-'));
let demo: DemoBundle;
if (process.env.DEMO) {
  demo = { ...(JSON.parse(readFileSync(process.env.DEMO, 'utf8')) as DemoBundle), stop: async () => {} };
} else {
  console.error(`load ${load()}: the demo generation at method ${METHOD_VERSION}…`);
  demo = await demoBundle(work, METHOD_VERSION);
}
if (process.env.SERVE) {
  writeFileSync(process.env.SERVE, JSON.stringify(demo));
  console.error(`demo written to ${process.env.SERVE}; Ctrl-C to stop`);
  // A timer keeps the process (and so the demo chain, which does not hold the event loop) alive:
  // a pending promise alone does not, and the process would exit at once, taking anvil with it.
  const alive = setInterval(() => {}, 60_000);
  await new Promise((resolve) => process.once('SIGINT', resolve));
  clearInterval(alive);
  await demo.stop();
  rmSync(work, { recursive: true, force: true });
  process.exit(0);
}
try {
  console.error(`bundle: ${demo.sellers} sellers, ${demo.payments} payments; case ${CASE}`);
  const args = ['audit', '--bundle', './g', ...(CASE === 'seller' ? ['--seller', demo.seller] : [])];
  const runOne = (name: string) => {
    const v = variants.get(name)!;
    return runTree(process.execPath, [...v.argv, ...args], {
      cwd: demo.elsewhere,
      env: { ...process.env, RPC_URL: demo.rpcUrl, LOG_LEVEL: STAGES ? 'info' : 'silent', ...v.env },
    });
  };
  const loads = [load()];
  for (const name of chosen) await runOne(name); // warm-up: the page cache, the template
  const runs = new Map<string, TreeRun[]>(chosen.map((n) => [n, []]));
  for (let r = 0; r < RUNS; r++) {
    // Rotated: round r starts at variant r, so no variant always runs first or last.
    const order = chosen.map((_, i) => chosen[(i + r) % chosen.length]!);
    for (const name of order) runs.get(name)!.push(await runOne(name));
  }
  loads.push(load());
  const f = (s: { min: number; median: number; max: number }, d = 0) =>
    `${s.min.toFixed(d)} / ${s.median.toFixed(d)} / ${s.max.toFixed(d)}`;
  const results: Record<string, unknown> = {};
  console.log(`case ${CASE}, ${RUNS} runs each, load ${loads.join(' -> ')}; min / median / max`);
  for (const [name, rs] of runs) {
    const v = variants.get(name)!;
    const summary = {
      command: ['node', ...v.argv, ...args].join(' '),
      env: v.env,
      exits: rs.map((r) => r.code),
      processes: rs.map((r) => r.processes),
      sumOfPeaksMb: stats(rs.map((r) => r.sumOfPeaksMb)),
      largestPeakMb: stats(rs.map((r) => r.largestPeakMb)),
      sampledRssMb: stats(rs.map((r) => r.sampledRssMb)),
      sampledPssMb: stats(rs.map((r) => r.sampledPssMb)),
      wallS: stats(rs.map((r) => r.wallS)),
      cpuS: stats(rs.map((r) => r.cpuS)),
      lastLine: verdictOf(rs.at(-1)!.lines),
      // Each run in the order of the rounds, for paired ratios (round r of one variant against round r of another).
      perRun: rs.map((r) => ({
        sumOfPeaksMb: r.sumOfPeaksMb,
        sampledPssMb: r.sampledPssMb,
        wallS: r.wallS,
        cpuS: r.cpuS,
      })),
      ...(STAGES ? { stages: stagesOf(rs) } : {}),
    };
    results[name] = summary;
    console.log(
      `${name.padEnd(28)} exits ${summary.exits.join(',')}  peak MB ${f(summary.sumOfPeaksMb)}  ` +
        `sampled RSS MB ${f(summary.sampledRssMb)}  sampled PSS MB ${f(summary.sampledPssMb)}  wall s ${f(summary.wallS, 1)}  cpu s ${f(summary.cpuS, 2)}`,
    );
    for (const [stage, m] of Object.entries(summary.stages ?? {}))
      console.log(`   ${stage.padEnd(26)} rss MB ${f(m.rssMb)}  peak so far MB ${f(m.peakRssMb)}`);
    if (!summary.lastLine.startsWith('audit: identical')) console.log(`   last line: ${summary.lastLine}`);
  }
  // Paired against the first variant: round r of each variant over round r of the first, which ran beside it.
  const [first, ...others] = chosen;
  for (const name of others) {
    const ratio = (key: 'sumOfPeaksMb' | 'cpuS' | 'wallS') =>
      stats(runs.get(name)!.map((r, i) => r[key] / runs.get(first!)![i]![key]));
    console.log(
      `${name} / ${first}, paired by round: peak ${f(ratio('sumOfPeaksMb'), 2)}  cpu ${f(ratio('cpuS'), 2)}  wall ${f(ratio('wallS'), 2)}`,
    );
  }
  mkdirSync(path.join(projectRoot, 'bench', 'out'), { recursive: true });
  writeFileSync(
    path.join(projectRoot, 'bench', 'out', 'audit-memory.json'),
    JSON.stringify({ date: new Date().toISOString(), case: CASE, runs: RUNS, loads, results }, null, 2),
  );
} finally {
  await demo.stop();
  rmSync(work, { recursive: true, force: true });
}

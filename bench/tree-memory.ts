/**
 * Peak memory of a command and every process it starts (Linux /proc), for the audit benchmarks.
 *
 * `/usr/bin/time -f %M` reports the largest single process's peak RSS (wait4's ru_maxrss is a
 * maximum over the waited-for tree, not a sum), so an audit that runs as a small launcher plus a
 * child would be reported as the child alone. This samples the tree every INTERVAL_MS instead:
 *
 * - `sumOfPeaksMb`: every process's own peak RSS (VmHWM, the kernel's high-water mark, read until
 *   the process ends) added up. An upper bound of the tree's peak; it counts the pages processes
 *   share (the node binary's code, ~34 MB of a bare node's 40 MB) once per process.
 * - `largestPeakMb`: the largest single process's VmHWM, what `/usr/bin/time -f %M` would say.
 * - `sampledRssMb` / `sampledPssMb`: the largest sum over the tree at one sample of RSS, and of PSS
 *   (shared pages divided among the processes sharing them: the memory the tree takes from the
 *   machine). Lower bounds of the true peaks (a peak between two samples is missed).
 * - `cpuS`: every process's user + system CPU seconds (/proc/PID/stat) at its last sample, added
 *   up: short by at most one interval's CPU per process.
 *
 * As a command (bench/newcomer.sh): `node --import tsx bench/tree-memory.ts OUT -- COMMAND ARGS...`
 * runs COMMAND with this process's stdio and writes `<wall seconds> <sumOfPeaks kB>` to OUT, as
 * `/usr/bin/time -f '%e %M' -o OUT` would with the largest process; exits with COMMAND's status.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const INTERVAL_MS = 20;
/** USER_HZ, the unit of /proc/PID/stat's CPU times: 100 on Linux for x86 and arm. */
const CLOCK_TICKS = 100;

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined; // the process ended between two reads
  }
}

/** The pid and its descendants, through /proc/PID/task/TID/children. */
function tree(pid: number): number[] {
  const all = [pid];
  for (let i = 0; i < all.length; i++) {
    const tasks = read(`/proc/${all[i]}/task/${all[i]}/children`);
    if (tasks) all.push(...tasks.trim().split(/\s+/).filter(Boolean).map(Number));
  }
  return all;
}

const kb = (text: string | undefined, key: string) =>
  Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text ?? '')?.[1] ?? 0);

export interface TreeRun {
  code: number;
  wallS: number;
  firstLineS: number | null;
  lines: string[];
  processes: number;
  sumOfPeaksMb: number;
  largestPeakMb: number;
  sampledRssMb: number;
  sampledPssMb: number;
  cpuS: number;
}

/** Runs `command args` in `cwd` and measures its tree's memory as described above. */
export async function runTree(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; inherit?: boolean },
): Promise<TreeRun> {
  const started = performance.now();
  let firstLine: number | null = null;
  const lines: string[] = [];
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: options.inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of options.inherit ? [] : [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      firstLine ??= performance.now();
      lines.push(...chunk.split('\n').filter(Boolean));
    });
  }
  const peaks = new Map<number, number>();
  const cpuTicks = new Map<number, number>();
  let sampledRss = 0;
  let sampledPss = 0;
  const sample = () => {
    let rss = 0;
    let pss = 0;
    for (const pid of tree(child.pid!)) {
      const status = read(`/proc/${pid}/status`);
      if (!status || /^State:\s+Z/m.test(status)) continue;
      peaks.set(pid, Math.max(peaks.get(pid) ?? 0, kb(status, 'VmHWM')));
      // utime and stime: fields 14 and 15 of /proc/PID/stat, counted after the command's `)`.
      const stat = read(`/proc/${pid}/stat`)?.split(') ')[1]?.split(' ');
      if (stat) cpuTicks.set(pid, Number(stat[11]) + Number(stat[12]));
      rss += kb(status, 'VmRSS');
      pss += kb(read(`/proc/${pid}/smaps_rollup`), 'Pss');
    }
    sampledRss = Math.max(sampledRss, rss);
    sampledPss = Math.max(sampledPss, pss);
  };
  const timer = setInterval(sample, INTERVAL_MS);
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  clearInterval(timer);
  const mb = (k: number) => k / 1024;
  return {
    code,
    wallS: (performance.now() - started) / 1000,
    firstLineS: firstLine === null ? null : (firstLine - started) / 1000,
    lines,
    processes: peaks.size,
    sumOfPeaksMb: mb([...peaks.values()].reduce((a, b) => a + b, 0)),
    largestPeakMb: mb(Math.max(0, ...peaks.values())),
    sampledRssMb: mb(sampledRss),
    sampledPssMb: mb(sampledPss),
    cpuS: [...cpuTicks.values()].reduce((a, b) => a + b, 0) / CLOCK_TICKS,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [out, dashes, command, ...args] = process.argv.slice(2);
  if (!out || dashes !== '--' || !command) throw new Error('usage: tree-memory.ts OUT -- COMMAND ARGS...');
  const run = await runTree(command, args, { cwd: process.cwd(), env: process.env, inherit: true });
  writeFileSync(out, `${run.wallS.toFixed(2)} ${Math.round(run.sumOfPeaksMb * 1024)}\n`);
  process.exit(run.code);
}

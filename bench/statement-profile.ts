/**
 * A client-side profile of the SQL a benchmark's process sends (bench/indexer.ts
 * --profile-statements): every query of every pg client, timed from the call to its answer and
 * summed by statement (its first code line), COPYs included (to the end of the stream). On a
 * machine whose cores the database shares, a statement's time is its backend's work plus its
 * wait for a core, so compare statements within one run, not across machines.
 *
 * Why not pg_stat_activity's text alone: it keeps the first 1 kB of a statement
 * (track_activity_query_size), and a statement whose first kilobyte is comments shows none of its
 * SQL there. Why not pg_stat_statements: it has to be preloaded when the server starts.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';

const totals = new Map<string, { ms: number; calls: number; cpuMs: number }>();

/**
 * The CPU time (ns) the backend `pid` has run so far, from /proc/<pid>/schedstat (Linux, the
 * database on this machine; else undefined). Its first field counts nanoseconds on a CPU, where
 * /proc/<pid>/stat counts 10 ms ticks: a chunk's statements take 1-30 ms each.
 */
function backendCpuNs(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

/**
 * The first two lines of a statement that are not comments, whitespace collapsed, cut to 100
 * characters; an inlined array of numbers (the sync's chunk opening, src/sync/store.ts) as `'{…}'`.
 */
export function statementKey(text: string): string {
  const code = text
    .replace(/'\{[0-9,]*\}'/g, "'{…}'")
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trim().startsWith('--'));
  return code.slice(0, 2).join(' ').trim().replace(/\s+/g, ' ').slice(0, 100);
}

function add(key: string, ms: number, pid: number | undefined, cpu0: number | undefined) {
  const t = totals.get(key) ?? { ms: 0, calls: 0, cpuMs: 0 };
  t.ms += ms;
  t.calls++;
  const cpu1 = backendCpuNs(pid);
  if (cpu0 !== undefined && cpu1 !== undefined) t.cpuMs += (cpu1 - cpu0) / 1e6;
  totals.set(key, t);
}

/** Wraps pg.Client's query (once per process); then every query is timed. */
export function profileStatements(): void {
  type Query = (this: pg.Client, ...args: unknown[]) => unknown;
  const proto = pg.Client.prototype as unknown as { query: Query };
  const original = proto.query;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string; on?: unknown } | undefined;
    // The backend's CPU over the statement: the query is this client's only one in flight when the
    // caller awaits each (the sync does), else the figure also holds the queued ones' CPU.
    const pid = (this as unknown as { processID?: number }).processID;
    const cpu0 = backendCpuNs(pid);
    const started = performance.now();
    const result = original.apply(this, args);
    if (result instanceof Promise) {
      const text = typeof config === 'string' ? config : (config?.text ?? '');
      void result.then(
        () => add(statementKey(text), performance.now() - started, pid, cpu0),
        () => {},
      );
    } else if (config && typeof config === 'object' && typeof config.on === 'function') {
      // a pg-copy-streams stream: done when it finishes
      const stream = config as unknown as NodeJS.EventEmitter & { text?: string };
      stream.on('finish', () => add(`COPY ${statementKey(stream.text ?? '')}`, performance.now() - started, pid, cpu0));
    }
    return result;
  };
}

/** Forgets what was timed so far (the timed part starts). */
export function resetStatementProfile(): void {
  totals.clear();
}

/**
 * The statements by total time, most first: ms (call to answer), calls, and the CPU ms their
 * backends spent on them (cpuMs; 0 where /proc/<pid>/schedstat is not readable).
 */
export function statementProfile(top = 25): Record<string, { ms: number; calls: number; cpuMs: number }> {
  return Object.fromEntries(
    [...totals]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, top)
      .map(([k, v]) => [k, { ms: Math.round(v.ms), calls: v.calls, cpuMs: Math.round(v.cpuMs) }]),
  );
}

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
import pg from 'pg';

const totals = new Map<string, { ms: number; calls: number }>();

/** The first two lines of a statement that are not comments, whitespace collapsed, cut to 100 characters. */
export function statementKey(text: string): string {
  const code = text.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('--'));
  return code.slice(0, 2).join(' ').trim().replace(/\s+/g, ' ').slice(0, 100);
}

function add(key: string, ms: number) {
  const t = totals.get(key) ?? { ms: 0, calls: 0 };
  t.ms += ms;
  t.calls++;
  totals.set(key, t);
}

/** Wraps pg.Client's query (once per process); then every query is timed. */
export function profileStatements(): void {
  type Query = (this: pg.Client, ...args: unknown[]) => unknown;
  const proto = pg.Client.prototype as unknown as { query: Query };
  const original = proto.query;
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string; on?: unknown } | undefined;
    const started = performance.now();
    const result = original.apply(this, args);
    if (result instanceof Promise) {
      const text = typeof config === 'string' ? config : (config?.text ?? '');
      void result.then(
        () => add(statementKey(text), performance.now() - started),
        () => {},
      );
    } else if (config && typeof config === 'object' && typeof config.on === 'function') {
      // a pg-copy-streams stream: done when it finishes
      const stream = config as unknown as NodeJS.EventEmitter & { text?: string };
      stream.on('finish', () => add(`COPY ${statementKey(stream.text ?? '')}`, performance.now() - started));
    }
    return result;
  };
}

/** Forgets what was timed so far (the timed part starts). */
export function resetStatementProfile(): void {
  totals.clear();
}

/** The statements by total time, most first: ms and calls. */
export function statementProfile(top = 25): Record<string, { ms: number; calls: number }> {
  return Object.fromEntries(
    [...totals]
      .sort((a, b) => b[1].ms - a[1].ms)
      .slice(0, top)
      .map(([k, v]) => [k, { ms: Math.round(v.ms), calls: v.calls }]),
  );
}

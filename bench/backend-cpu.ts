import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { statementKey } from './statement-profile.ts';

/**
 * CPU seconds of this benchmark's own Postgres backends (those whose application_name is
 * `appName`) between start() and stop(): pg_stat_activity is polled every 200 ms from a separate
 * connection for their pids, and each pid's CPU is read from /proc (Linux; null elsewhere). A
 * backend that starts and ends between two polls is missed, so it is a lower bound.
 */
export function backendCpuMeter(baseUrl: string, appName: string) {
  const first = new Map<number, number>(); // pid -> CPU ticks when first seen
  const last = new Map<number, number>();
  const ticks = (pid: number): number | undefined => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(fields[11]) + Number(fields[12]); // utime, stime (USER_HZ = 100 on Linux)
    } catch {
      return undefined; // ended meanwhile, or not Linux
    }
  };
  let admin: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let linux = true;
  const activeSamples = new Map<string, number>();
  const waitSamples = new Map<string, number>();
  const poll = async (baseline: boolean) => {
    const { rows } = await sql<{ pid: number; active: string | null; waiting: string | null }>`
      select pid, case when state = 'active' then query end as active,
             case when state = 'active' and wait_event_type in ('Lock', 'LWLock', 'IO', 'IPC')
                  then wait_event_type || ':' || wait_event end as waiting
        from pg_stat_activity where application_name = ${appName}`.execute(admin!.db);
    for (const { pid, active, waiting } of rows) {
      // A sampling profile of the backends: which statement was running at each poll, and what it
      // waited for when it was not on a CPU (a lock of another chunk's transaction, I/O).
      if (active !== null && !baseline) {
        // (a statement whose first kilobyte is comments shows none of its SQL: the server keeps
        // track_activity_query_size, 1 kB by default, of each statement's text)
        const key = statementKey(active) || '(comments only in its first 1 kB)';
        activeSamples.set(key, (activeSamples.get(key) ?? 0) + 1);
        if (waiting !== null) {
          const wait = `[${waiting}] ${key}`;
          waitSamples.set(wait, (waitSamples.get(wait) ?? 0) + 1);
        }
      }
      const t = ticks(pid);
      if (t === undefined) continue;
      // A backend first seen after start() did all its work within the measured span.
      if (!first.has(pid)) first.set(pid, baseline ? t : 0);
      last.set(pid, t);
    }
  };
  const total = () => {
    let sum = 0;
    for (const [pid, t] of last) sum += t - first.get(pid)!;
    return sum / 100;
  };
  return {
    /** Polls that found a backend running each statement (its first words), most first. */
    samples: () => Object.fromEntries([...activeSamples].sort((a, b) => b[1] - a[1]).slice(0, 12)),
    /** Of those, the polls that found the backend waiting (lock, I/O), by wait event and statement. */
    waits: () => Object.fromEntries([...waitSamples].sort((a, b) => b[1] - a[1]).slice(0, 12)),
    /** The CPU seconds so far, as of the last poll (at most 200 ms old). */
    now: (): number | null => (linux ? total() : null),
    async start() {
      linux = ticks(process.pid) !== undefined;
      admin = await openDatabase({ databaseUrl: baseUrl, maxConnections: 1 });
      await poll(true);
      timer = setInterval(() => void poll(false).catch(() => {}), 200);
    },
    async stop(): Promise<number | null> {
      clearInterval(timer);
      await poll(false);
      await admin!.close();
      return linux ? total() : null;
    },
  };
}

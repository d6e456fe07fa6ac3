import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Database } from '../db/index.ts';
import { redactText } from '../config/redact.ts';
import { TemporaryError } from '../lib/errors.ts';

/** A lock held until released; `assertHeld` fails (temporarily) when it was lost meanwhile. */
export interface HeldLock {
  assertHeld(): Promise<void>;
  release(): Promise<void>;
}

// Two-key advisory lock: a constant of this project and the hash of the current schema, so two
// deployments (or test schemas) in one database do not block each other.
const RUN_LOCK_KEY = 402_000_002;

/**
 * Takes the run lock on Postgres: `pg_try_advisory_lock` on a dedicated session held until
 * release, so a second `run` on the same database and schema fails at once with a TemporaryError
 * (exit 75). Losing the session (a database restart) releases the lock; `assertHeld` notices.
 */
export async function acquirePgRunLock(databaseUrl: string): Promise<HeldLock> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    throw new TemporaryError('cannot connect to the database to take the run lock', {
      cause: new Error(redactText(String((error as Error).message), [databaseUrl])),
    });
  }
  const { rows } = await client.query<{ locked: boolean; schema: string }>(
    'select pg_try_advisory_lock($1, hashtext(current_schema())) as locked, current_schema() as schema',
    [RUN_LOCK_KEY],
  );
  if (!rows[0]?.locked) {
    await client.end().catch(() => {});
    throw new TemporaryError('another run holds the lock on this database; run again later', {
      details: { schema: rows[0]?.schema },
    });
  }
  let released = false;
  return {
    async assertHeld() {
      try {
        await client.query('select 1');
      } catch (error) {
        throw new TemporaryError('the run lock was lost (database connection dropped); run again later', {
          cause: error,
        });
      }
    },
    async release() {
      if (released) return;
      released = true;
      await client.query('select pg_advisory_unlock($1, hashtext(current_schema()))', [RUN_LOCK_KEY]).catch(() => {});
      await client.end().catch(() => {});
    },
  };
}

// The embedded database is one session in one process, so an advisory lock would always be
// granted to it; overlapping runs within the process are refused here instead.
const heldInProcess = new WeakSet<object>();

/** The run lock of an embedded database (one process; see acquireDataDirLock across processes). */
export function acquireInProcessRunLock(database: Database): HeldLock {
  if (heldInProcess.has(database.db)) {
    throw new TemporaryError('another run is in progress in this process; run again later');
  }
  heldInProcess.add(database.db);
  return {
    async assertHeld() {},
    async release() {
      heldInProcess.delete(database.db);
    },
  };
}

/** The run lock for either backend. */
export async function acquireRunLock(database: Database, databaseUrl: string | undefined): Promise<HeldLock> {
  return database.backend === 'pg' && databaseUrl ? acquirePgRunLock(databaseUrl) : acquireInProcessRunLock(database);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * An embedded database directory can be opened by one process only: this takes
 * `<dataDir>/tally.lock` (holding the pid) before the database is opened. A lock left by a process
 * that is gone is taken over. A live holder gives a TemporaryError (exit 75).
 */
export function acquireDataDirLock(dataDir: string): HeldLock {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'tally.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        async assertHeld() {},
        async release() {
          if (released) return;
          released = true;
          rmSync(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) {
        throw new TemporaryError(`the embedded database is in use by process ${pid}`, {
          details: { lockFile: file },
        });
      }
      rmSync(file, { force: true });
    }
  }
  throw new TemporaryError('could not take the embedded database lock; run again later');
}

import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { pgPoolOf, type Database } from '../db/index.ts';
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
 * The session is opened with the pool's own settings (the database handle's: the same server,
 * role and schema), beside the pool rather than from it, so a run never waits for its own lock's
 * connection however small the pool is.
 */
export async function acquirePgRunLock(pool: pg.Pool): Promise<HeldLock> {
  const client = new pg.Client(pool.options);
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    throw new TemporaryError('cannot connect to the database to take the run lock', { cause: error });
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

/** The run lock for either backend, from the database handle. */
export async function acquireRunLock(database: Database): Promise<HeldLock> {
  const pool = pgPoolOf(database.db);
  return pool ? acquirePgRunLock(pool) : acquireInProcessRunLock(database);
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

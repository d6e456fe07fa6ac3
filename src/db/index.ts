import { Kysely, PostgresDialect, sql } from 'kysely';
import { mkdirSync } from 'node:fs';
import type pg from 'pg';
import { redactUrl } from '../lib/redact.ts';
import { isTemporary, TallyError, TemporaryError } from '../lib/errors.ts';
import { PGliteDialect } from './pglite/dialect.ts';
import { openPGlite } from './pglite/open.ts';
import { kyselyPool, openPgPool } from './pg/open.ts';
import type { Schema } from './schema.ts';

export type { Schema } from './schema.ts';

/** One database, on either backend; the rest of the code only sees `db` (Kysely). */
export interface Database {
  readonly db: Kysely<Schema>;
  readonly backend: 'pg' | 'pglite';
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Postgres connection string; when unset, the embedded PGlite is used. */
  databaseUrl?: string | undefined;
  /** Where the embedded database lives; null keeps it in memory (tests, audit scratch). */
  dataDir?: string | null;
  /** Pool size for pg. */
  maxConnections?: number;
  /**
   * Embedded only, for a database that is new (its folder empty or absent): start it from the
   * migrated template instead of initdb (src/db/pglite/template.ts). The caller still migrates.
   */
  fromTemplate?: boolean;
  /** Embedded only: server settings added to PGLITE_SETTINGS for this open (e.g. a smaller shared_buffers). */
  settings?: Record<string, string>;
}

const pgPools = new WeakMap<Kysely<Schema>, pg.Pool>();

/**
 * The pg pool under a Postgres `db` opened by openDatabase, for what Kysely cannot send (COPY);
 * undefined for PGlite or any other Kysely. Queries through it bypass Kysely's plugins.
 */
export function pgPoolOf(db: Kysely<Schema>): pg.Pool | undefined {
  return pgPools.get(db);
}

/** Opens the database chosen by the options: pg when `databaseUrl` is set, PGlite otherwise. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const pool = openPgPool(options.databaseUrl, options.maxConnections);
    await assertReachable(pool, options.databaseUrl);
    const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: kyselyPool(pool) }) });
    pgPools.set(db, pool);
    return { db, backend: 'pg', close: () => db.destroy() };
  }
  const dataDir = options.dataDir === undefined ? './.data' : options.dataDir;
  if (dataDir !== null) mkdirSync(dataDir, { recursive: true });
  const folder = dataDir === null ? null : `${dataDir}/pglite`;
  const settings = options.settings ?? {};
  const pglite = options.fromTemplate
    ? (await (await import('./pglite/template.ts')).openMigratedPGlite(folder, settings)).pglite
    : await openPGlite(folder, { settings });
  const db = new Kysely<Schema>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    backend: 'pglite',
    close: async () => {
      await db.destroy();
      await pglite.close();
    },
  };
}

/**
 * Ends a cycle's writes on the embedded database with a CHECKPOINT; nothing on Postgres. PGlite runs
 * Postgres in single-user mode, which has no checkpointer: neither `max_wal_size` nor
 * `checkpoint_timeout` ever starts a checkpoint, so without this the WAL of a `schedule` process
 * would grow run after run until it closes the database, and a kill would leave all of it to replay
 * on the next open (docs/operations.md, "Embedded database").
 */
export async function checkpointEmbedded(database: Database): Promise<void> {
  if (database.backend === 'pglite') await sql`checkpoint`.execute(database.db);
}

/**
 * Connects once, so that a database that cannot be used is reported as the database, by its
 * redacted URL, before any work: not reachable or not accepting connections right now is a
 * TemporaryError (exit 75); refused credentials or an unknown database are a TallyError that
 * names DATABASE_URL (exit 1).
 */
async function assertReachable(pool: pg.Pool, url: string): Promise<void> {
  try {
    (await pool.connect()).release();
  } catch (error) {
    await pool.end().catch(() => {});
    const message = `${(error as Error).message}`.split('\n')[0];
    const shown = redactUrl(url);
    if (isTemporary(error))
      throw new TemporaryError(`the database ${shown} is not reachable right now: ${message}`, { cause: error });
    throw new TallyError(`the database ${shown} refused the connection: ${message}; check DATABASE_URL`, {
      cause: error,
    });
  }
}

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { TemporaryError } from '../lib/errors.ts';
import { sqlDir } from '../lib/paths.ts';
import { COPY_BEFORE_MIGRATION, compactCopyPending, copyFactsToCompact, type CopyOptions } from './compact-copy.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Every `sql/migrations/NNNN_name.sql`, in version order. */
export function loadMigrations(dir = path.join(sqlDir, 'migrations')): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.slice(5, -4),
      sql: readFileSync(path.join(dir, file), 'utf8'),
    }));
}

// Any constant unique to this project; all runners take the same transaction-scoped lock.
const MIGRATION_LOCK_KEY = 402_000_001;

const BOOKKEEPING = sql`
  create table if not exists schema_migrations (
    version    integer     primary key,
    name       text        not null,
    applied_at timestamptz not null default now()
  )`;

export interface MigrateOptions {
  /**
   * Whether to copy the old chain facts into the compact layout before migration
   * `compact_switch` (src/db/compact-copy.ts), when there are any: `migrate` does (true, the
   * default; an object sets the copy's options), `run` does not (false): it stops with a
   * TemporaryError (exit 75) naming `x402-tally migrate` instead of copying for minutes.
   */
  copyFacts?: boolean | CopyOptions;
}

/**
 * Applies the pending migrations, each in its own transaction, bookkeeping row first. Runners
 * serialize on an advisory lock, so two at once never apply one twice: the second finds the row
 * and skips. Safe to re-run. Returns the versions it applied. When every one is applied already
 * (every run but the first after an upgrade) it answers from schema_migrations alone, without the lock.
 */
export async function migrate(
  db: Kysely<any>,
  migrations = loadMigrations(),
  options: MigrateOptions = {},
): Promise<number[]> {
  if (await nothingPending(db, migrations)) return [];
  const applied: number[] = [];
  for (const migration of migrations) {
    if (migration.name === COPY_BEFORE_MIGRATION && (await compactCopyPending(db))) {
      const copy = options.copyFacts ?? true;
      if (copy === false)
        throw new TemporaryError(
          'the chain facts must be copied into the compact layout first: run `x402-tally migrate` (it resumes where it stopped), then run again',
        );
      await copyFactsToCompact(db, copy === true ? {} : copy);
    }
    const done = await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
      await BOOKKEEPING.execute(trx);
      const inserted = await sql<{ version: number }>`
        insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})
        on conflict (version) do nothing
        returning version`.execute(trx);
      if (inserted.rows.length === 0) return false;
      await sql.raw(migration.sql).execute(trx);
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}

/**
 * Whether every migration is applied and no fact copy is pending (what every run finds but the
 * first after an upgrade): two statements instead of a transaction per migration (53 of them, 0.2-0.8 s
 * on a loaded machine, on every run's path before the sync). A row of schema_migrations is
 * committed with its migration, so a row seen means the migration is in; any row missing (one
 * being applied by another runner, whose row is not yet visible) or a copy still pending takes
 * the full path, which waits on the runners' lock as before.
 */
async function nothingPending(db: Kysely<any>, migrations: Migration[]): Promise<boolean> {
  if (migrations.length === 0) return false;
  const { rows } = await sql<{ present: boolean; copy: boolean }>`
    select to_regclass('schema_migrations') is not null as present,
           to_regclass('compact_copy') is not null as copy`.execute(db);
  if (!rows[0]?.present) return false;
  const applied = await sql<{ version: number }>`select version from schema_migrations`.execute(db);
  const have = new Set(applied.rows.map((r) => r.version));
  if (!migrations.every((m) => have.has(m.version))) return false;
  // (a pending copy makes the full path stop, or copy, before COPY_BEFORE_MIGRATION, as it did)
  return !(rows[0]?.copy && migrations.some((m) => m.name === COPY_BEFORE_MIGRATION) && (await compactCopyPending(db)));
}

export interface SchemaStatus {
  current: number;
  latest: number;
  pending: Migration[];
}

/** What `serve` checks before it starts: it only reads and never migrates. */
export async function schemaStatus(db: Kysely<any>, migrations = loadMigrations()): Promise<SchemaStatus> {
  const exists = await sql<{ present: boolean }>`
    select to_regclass('schema_migrations') is not null as present`.execute(db);
  const versions = exists.rows[0]?.present
    ? (await sql<{ version: number }>`select version from schema_migrations`.execute(db)).rows.map((r) => r.version)
    : [];
  const have = new Set(versions);
  const pending = migrations.filter((m) => !have.has(m.version));
  return {
    current: versions.length === 0 ? 0 : Math.max(...versions),
    latest: migrations.length === 0 ? 0 : Math.max(...migrations.map((m) => m.version)),
    pending,
  };
}

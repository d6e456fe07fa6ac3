import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase } from '../../src/db/index.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';

/**
 * Test databases on real Postgres, cloned from a migrated template instead of migrated one by one.
 *
 * Running every migration into a new schema took 4-6 s per test database on the loaded 2-core
 * machine (docs/development.md, "The test suite: where the time goes"); `create database ...
 * template` copies a migrated database in a fraction of that. The template is made once per
 * cluster and set of migrations: it is named by a digest of every migration's text, so a changed
 * or added migration is a new template, and it is made under a temporary name, then renamed, so a
 * half-migrated template is never cloned. Nothing connects to it once made (Postgres refuses to
 * copy a database others are connected to).
 */

const PREFIX = 'tally_tmpl_';

/** The template database's name for the migrations in sql/migrations. */
export function pgTemplateName(): string {
  const hash = createHash('sha256');
  for (const m of loadMigrations()) hash.update(`${m.version} ${m.name}\n${m.sql}\n`);
  return `${PREFIX}${hash.digest('hex').slice(0, 16)}`;
}

/** `baseUrl` pointing at another database of the same cluster. */
export function databaseUrl(baseUrl: string, database: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs statements on the database of `baseUrl` through one short-lived connection. */
async function admin<T>(baseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: baseUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

const exists = async (client: pg.Client, name: string) =>
  (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;

const made = new Map<string, Promise<string>>();

/**
 * The migrated template database of the cluster of `baseUrl`, made when missing (once per
 * process; across processes the rename decides, and the loser drops its copy). Returns its name.
 */
export function ensurePgTemplate(baseUrl: string): Promise<string> {
  let pending = made.get(baseUrl);
  if (!pending) {
    pending = makeTemplate(baseUrl);
    pending.catch(() => made.delete(baseUrl));
    made.set(baseUrl, pending);
  }
  return pending;
}

async function makeTemplate(baseUrl: string): Promise<string> {
  const name = pgTemplateName();
  if (await admin(baseUrl, (c) => exists(c, name))) return name;
  const building = `${name}_${randomBytes(4).toString('hex')}`;
  await admin(baseUrl, (c) => c.query(`create database ${building} template template0`));
  try {
    const database = await openDatabase({ databaseUrl: databaseUrl(baseUrl, building), maxConnections: 1 });
    try {
      await migrate(database.db);
    } finally {
      await database.close();
    }
    await admin(baseUrl, async (c) => {
      try {
        await c.query(`alter database ${building} rename to ${name}`);
      } catch (error) {
        // Another process made it first (42P04 duplicate_database): use theirs.
        if ((error as { code?: string }).code !== '42P04') throw error;
        await c.query(`drop database if exists ${building} with (force)`);
        return;
      }
      await c.query(`alter database ${name} is_template true`);
    });
  } catch (error) {
    await admin(baseUrl, (c) => c.query(`drop database if exists ${building} with (force)`)).catch(() => {});
    throw error;
  }
  return name;
}

/** Whether the cluster of `baseUrl` has a database named `name`. */
export function databaseExists(baseUrl: string, name: string): Promise<boolean> {
  return admin(baseUrl, (c) => exists(c, name));
}

/**
 * Renames the database `from` (nothing connected to it) to `to` and marks it a template; false,
 * with `from` left as it was, when a database `to` exists already (another process made it first).
 */
export async function renameDatabase(baseUrl: string, from: string, to: string): Promise<boolean> {
  return admin(baseUrl, async (c) => {
    try {
      await c.query(`alter database ${from} rename to ${to}`);
    } catch (error) {
      if ((error as { code?: string }).code === '42P04') return false; // duplicate_database
      throw error;
    }
    await c.query(`alter database ${to} is_template true`);
    return true;
  });
}

export interface ClonedDatabase {
  /** The new database's name. */
  name: string;
  /** A connection string to the new database. */
  url: string;
  /** Drops the database, ending any connection still open to it. Safe to call twice. */
  drop(): Promise<void>;
}

/**
 * A new database of its own in the cluster of `baseUrl`: a copy of the migrated template, or
 * empty (from template0) when `migrated` is false.
 */
export async function cloneDatabase(baseUrl: string, migrated: boolean): Promise<ClonedDatabase> {
  return copyDatabase(baseUrl, migrated ? await ensurePgTemplate(baseUrl) : 'template0');
}

/**
 * A new database of its own in the cluster of `baseUrl`, a copy of the database `template` (which
 * nothing may be connected to while it is copied).
 */
export async function copyDatabase(baseUrl: string, template: string): Promise<ClonedDatabase> {
  const name = `tally_t_${randomBytes(5).toString('hex')}`;
  await admin(baseUrl, async (c) => {
    await c.query(`create database ${name} template ${template}`);
    // A commit of a test database need not wait for its WAL to reach the disk: the database is
    // thrown away, and no test stops the server (a backend terminated, as tests do, loses nothing
    // committed). What a statement sees is the same either way; the flush waits on a disk that
    // other work on the machine shares.
    await c.query(`alter database ${name} set synchronous_commit = off`);
  });
  let dropped = false;
  return {
    name,
    url: databaseUrl(baseUrl, name),
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await admin(baseUrl, (c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

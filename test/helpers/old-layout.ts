import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kysely, sql } from 'kysely';
import { buildApi } from '../../src/api/index.ts';
import { openDatabase } from '../../src/db/index.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { PGliteDialect } from '../../src/db/pglite/dialect.ts';
import { openPGlite } from '../../src/db/pglite/open.ts';
import { templateDir } from '../../src/db/pglite/template.ts';
import type { Schema } from '../../src/db/schema.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import type { TestDatabase } from './db.ts';
import { cloneDatabase, copyDatabase, databaseExists, renameDatabase } from './pg-template.ts';
import { withoutMethod3Nulls } from './method3-fields.ts';

// A database of the text fact layout as the old code left it, and what its API served
// (test/e2e/compact-migration.test.ts, test/e2e/versioned-ids-migration.test.ts). The fixture was
// written by the code of the old layout (fixtures/compact-migration/generate.ts): every row of a
// database holding two published generations (a reorg, a backfill into a stored block and a log
// orphaned and stored again between them), and the sha256 of every body its API served for them.

export interface Fixture {
  ingestSeq: string;
  rows: Record<string, unknown[]>;
  served: { url: string; status: number; sha256: string }[];
  generations: Record<string, unknown>[];
}
const FIXTURE_PATH = path.join(projectRoot, 'fixtures', 'compact-migration', 'old-layout.json');
export const FIXTURE = JSON.parse(readFileSync(FIXTURE_PATH, 'utf8')) as Fixture;
/**
 * A database in the old layout (migrations up to 0022) holding the fixture's rows, of the caller
 * alone: a copy of an original made once per machine and kept, as the migrated templates are
 * (test/helpers/pg-template.ts, src/db/pglite/template.ts). PGlite's is a tarball of its data
 * folder in templateDir(), loaded into a new in-memory database; Postgres' a template database
 * of the TEST_DATABASE_URL cluster, copied by `create database ... template`. Building one
 * (initdb or an empty database, migrations 0001-0022, the fixture's rows) took most of a test's
 * time when each made its own, and then once per file and backend. Both are named by a digest of
 * the PGlite version, the migrations they apply, the fixture and this file, so a change to any is
 * a new original; each is made under a temporary name and then renamed, so a half-made one is
 * never copied (two processes making one at once: the rename decides, the loser's is dropped).
 */
export async function oldLayoutDatabase(backend: 'pglite' | 'pg'): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const pglite = await openPGlite(null, { loadDataDir: new Blob([readFileSync(await pgliteOriginal())]) });
    const db = new Kysely<Schema>({ dialect: new PGliteDialect(pglite) });
    return {
      db,
      backend,
      url: undefined,
      close: async () => {
        await db.destroy();
        await pglite.close();
      },
    };
  }
  const base = process.env.TEST_DATABASE_URL;
  if (!base) throw new Error('TEST_DATABASE_URL is not set');
  const copy = await copyDatabase(base, await pgOriginal(base));
  const database = await openDatabase({ databaseUrl: copy.url });
  return {
    ...database,
    url: copy.url,
    close: async () => {
      await database.close();
      await copy.drop();
    },
  };
}

/** The migrations of the old layout: every one before compact_facts (0023). */
function oldMigrations() {
  const all = loadMigrations();
  return all.slice(
    0,
    all.findIndex((m) => m.name === 'compact_facts'),
  );
}

/** A digest of what an original is made of: the migrations, the fixture, this code, PGlite's version. */
function originalDigest(): string {
  const hash = createHash('sha256');
  const pglite = path.join(projectRoot, 'node_modules', '@electric-sql', 'pglite', 'package.json');
  hash.update(`pglite ${(JSON.parse(readFileSync(pglite, 'utf8')) as { version: string }).version}\n`);
  for (const m of oldMigrations()) hash.update(`${m.version} ${m.name}\n${m.sql}\n`);
  hash.update(readFileSync(FIXTURE_PATH));
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  return hash.digest('hex').slice(0, 16);
}

const made: { pglite?: Promise<string>; pg?: Promise<string> } = {};

/** The PGlite original's tarball, made when missing (once per process). */
function pgliteOriginal(): Promise<string> {
  return (made.pglite ??= (async () => {
    const file = path.join(templateDir(), `old-layout-${originalDigest()}.tar`);
    if (existsSync(file)) return file;
    const pglite = await openPGlite(null);
    const db = new Kysely<Schema>({ dialect: new PGliteDialect(pglite) });
    try {
      await loadOldLayout(db);
      await pglite.query('checkpoint'); // the data folder whole on disk before the dump
      const bytes = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer());
      mkdirSync(path.dirname(file), { recursive: true });
      const partial = `${file}.${process.pid}.partial`;
      writeFileSync(partial, bytes);
      renameSync(partial, file);
      return file;
    } finally {
      await db.destroy();
      await pglite.close();
    }
  })());
}

/** The Postgres original's database name, made when missing (once per process). */
function pgOriginal(base: string): Promise<string> {
  return (made.pg ??= (async () => {
    const name = `tally_old_${originalDigest()}`;
    if (await databaseExists(base, name)) return name;
    const building = await cloneDatabase(base, false);
    try {
      const database = await openDatabase({ databaseUrl: building.url, maxConnections: 1 });
      try {
        await loadOldLayout(database.db);
      } finally {
        await database.close(); // nothing may stay connected to a database copied from
      }
      if (!(await renameDatabase(base, building.name, name))) await building.drop();
      return name;
    } catch (error) {
      await building.drop();
      throw error;
    }
  })());
}

async function loadOldLayout(db: Kysely<Schema>): Promise<void> {
  await migrate(db, oldMigrations());
  await db.transaction().execute(async (trx) => {
    // The rows as stored, foreign keys and triggers aside (the trigger-made rows are in the fixture).
    await sql`set local session_replication_role = replica`.execute(trx);
    for (const [table, rows] of Object.entries(FIXTURE.rows)) {
      if (rows.length === 0) continue;
      const { rows: columns } = await sql<{ c: string }>`
        select column_name as c from information_schema.columns
         where table_schema = current_schema() and table_name = ${table} and is_generated = 'NEVER'
         order by ordinal_position`.execute(trx);
      const list = sql.join(columns.map((r) => sql.ref(r.c)));
      await sql`
        insert into ${sql.table(table)} (${list}) overriding system value
        select ${list} from jsonb_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows)}::jsonb)`.execute(
        trx,
      );
    }
    await sql`select setval('ingest_seq', ${FIXTURE.ingestSeq}::int8)`.execute(trx);
    await sql`select setval(pg_get_serial_sequence('catalog_snapshots', 'snapshot_id'),
                            (select max(snapshot_id) from catalog_snapshots))`.execute(trx);
  });
}

/** The API on a port; every URL of the fixture fetched, with the sha256 of its body. */
export async function serveAll(db: Kysely<Schema>) {
  const app = await buildApi(db, { rateLimitPerMinute: 1_000_000, cadenceSeconds: 900 });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const served: Fixture['served'] = [];
    for (const { url } of FIXTURE.served) {
      const res = await fetch(base + url);
      const body = Buffer.from(await res.arrayBuffer());
      if (process.env.DUMP_BODY === url) console.log(body.toString());
      // (the fields method 3.0.0 added, null on these 2.0.0 generations, out: the old code's bytes)
      const old = withoutMethod3Nulls(body.toString());
      served.push({ url, status: res.status, sha256: createHash('sha256').update(old).digest('hex') });
    }
    const meta = await fetch(`${base}/api/v1/meta`);
    return { served, metaStatus: meta.status };
  } finally {
    await app.close();
  }
}

/** The URLs whose status or body differ from what the old layout's code served. */
export function mismatches(served: Fixture['served']): string[] {
  const want = new Map(FIXTURE.served.map((r) => [r.url, `${r.status} ${r.sha256}`]));
  const urls = served.filter((r) => want.get(r.url) !== `${r.status} ${r.sha256}`).map((r) => r.url);
  return served.length === FIXTURE.served.length ? urls : ['(another number of URLs)', ...urls];
}

/**
 * Nothing to drop: the originals are kept between files and runs, as the migrated templates are.
 * Kept so that a test file written against the per-file originals (an `afterAll`) still runs.
 */
export async function closeOldLayouts(): Promise<void> {}

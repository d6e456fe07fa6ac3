import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Kysely, sql } from 'kysely';
import { buildApi } from '../../src/api/index.ts';
import { openDatabase } from '../../src/db/index.ts';
import { loadMigrations, migrate } from '../../src/db/migrate.ts';
import { PGliteDialect } from '../../src/db/pglite/dialect.ts';
import { openPGlite } from '../../src/db/pglite/open.ts';
import type { Schema } from '../../src/db/schema.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import type { TestDatabase } from './db.ts';
import { cloneDatabase, copyDatabase, type ClonedDatabase } from './pg-template.ts';
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
export const FIXTURE = JSON.parse(
  readFileSync(path.join(projectRoot, 'fixtures', 'compact-migration', 'old-layout.json'), 'utf8'),
) as Fixture;
/**
 * A database in the old layout (migrations up to 0022) holding the fixture's rows, of the caller
 * alone. The first call of a process builds one (migrations 0001-0022 and the fixture's rows: most
 * of a test's time when each built its own); every call gets a copy of it: PGlite's data folder
 * dumped and loaded, or a Postgres `create database ... template`. closeOldLayouts() drops the
 * Postgres original (afterAll).
 */
export async function oldLayoutDatabase(backend: 'pglite' | 'pg'): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const pglite = await openPGlite(null, { loadDataDir: await (originals.pglite ??= buildPGliteOriginal()) });
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
  const copy = await copyDatabase(base, (await (originals.pg ??= buildPgOriginal(base))).name);
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

const originals: { pglite?: Promise<Blob>; pg?: Promise<ClonedDatabase> } = {};

/** Drops the Postgres original oldLayoutDatabase copies (once every copy is closed). */
export async function closeOldLayouts(): Promise<void> {
  const pg = originals.pg;
  delete originals.pg;
  delete originals.pglite;
  if (pg) await (await pg).drop();
}

async function buildPGliteOriginal(): Promise<Blob> {
  const pglite = await openPGlite(null);
  const db = new Kysely<Schema>({ dialect: new PGliteDialect(pglite) });
  try {
    await loadOldLayout(db);
    await pglite.query('checkpoint'); // the data folder whole on disk before the dump
    return await pglite.dumpDataDir('none');
  } finally {
    await db.destroy();
    await pglite.close();
  }
}

async function buildPgOriginal(base: string): Promise<ClonedDatabase> {
  const empty = await cloneDatabase(base, false);
  try {
    const database = await openDatabase({ databaseUrl: empty.url, maxConnections: 1 });
    try {
      await loadOldLayout(database.db);
    } finally {
      await database.close(); // nothing may stay connected to a database copied from
    }
    return empty;
  } catch (error) {
    await empty.drop();
    throw error;
  }
}

async function loadOldLayout(db: Kysely<Schema>): Promise<void> {
  const all = loadMigrations();
  await migrate(
    db,
    all.slice(
      0,
      all.findIndex((m) => m.name === 'compact_facts'),
    ),
  );
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

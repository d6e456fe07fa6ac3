import { openDatabase, type Database } from '../../src/db/index.ts';
import { cloneDatabase } from './pg-template.ts';

/**
 * The backends every database test runs on: the embedded PGlite always, and real Postgres when
 * TEST_DATABASE_URL is set. Use with `describe.each(backends())`.
 */
export function backends(): { backend: 'pglite' | 'pg' }[] {
  return process.env.TEST_DATABASE_URL ? [{ backend: 'pglite' }, { backend: 'pg' }] : [{ backend: 'pglite' }];
}

export interface TestDatabase extends Database {
  /** For pg: a connection string to this test's own database. */
  readonly url: string | undefined;
}

/**
 * A fresh database with every migration applied (or none, with `migrate: false`), of this test
 * alone: on pg a new database of the TEST_DATABASE_URL cluster (dropped on close), on PGlite a new
 * in-memory database. Migrated ones are copies of a migrated template rather than a migration
 * run each: a Postgres template database (test/helpers/pg-template.ts) and PGlite's data-folder
 * template (src/db/pglite/template.ts). Both are named by a digest of every migration's text, so
 * a copy has exactly the migrations of sql/migrations; test/global-setup.ts makes them once
 * before the workers start.
 */
export async function freshDatabase(
  backend: 'pglite' | 'pg',
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  const migrated = options.migrate !== false;
  if (backend === 'pg') {
    const base = process.env.TEST_DATABASE_URL;
    if (!base) throw new Error('TEST_DATABASE_URL is not set');
    const clone = await cloneDatabase(base, migrated);
    let database: Database;
    try {
      database = await openDatabase({ databaseUrl: clone.url });
    } catch (error) {
      await clone.drop();
      throw error;
    }
    return {
      ...database,
      url: clone.url,
      close: async () => {
        await database.close();
        await clone.drop();
      },
    };
  }
  const database = await openDatabase({ dataDir: null, fromTemplate: migrated });
  return { ...database, url: undefined };
}

/**
 * Makes a migrated embedded database under `dataDir` (a DATA_DIR for the CLI), unpacked from the
 * migrated template, and closes it. A CLI test whose subject is not the first run's migration
 * starts from this: a new DATA_DIR costs `initdb` and every migration on its first open, 10-25 s
 * on the 2-core machine and 80-110 s at load 24, against 1-5 s for the template
 * (src/db/pglite/template.ts). test/cli/bin.test.ts keeps a run on a truly new DATA_DIR.
 */
export async function migratedDataDir(dataDir: string): Promise<string> {
  await (await openDatabase({ dataDir, fromTemplate: true })).close();
  return dataDir;
}

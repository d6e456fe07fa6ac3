import { openDatabase, type Database } from '../../src/db/index.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createScratchSchema } from '../../src/db/scratch-schema.ts';

/**
 * The backends every database test runs on: the embedded PGlite always, and real Postgres when
 * TEST_DATABASE_URL is set. Use with `describe.each(backends())`.
 */
export function backends(): { backend: 'pglite' | 'pg' }[] {
  return process.env.TEST_DATABASE_URL ? [{ backend: 'pglite' }, { backend: 'pg' }] : [{ backend: 'pglite' }];
}

export interface TestDatabase extends Database {
  /** For pg: a connection string whose search_path is this test's own schema. */
  readonly url: string | undefined;
}

/**
 * A fresh, migrated database: an in-memory PGlite, or a new schema of its own in the
 * TEST_DATABASE_URL database (dropped on close), so test files never see each other's rows.
 */
export async function freshDatabase(
  backend: 'pglite' | 'pg',
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  let url: string | undefined;
  let dropSchema: (() => Promise<void>) | undefined;
  if (backend === 'pg') {
    const base = process.env.TEST_DATABASE_URL;
    if (!base) throw new Error('TEST_DATABASE_URL is not set');
    const scratch = await createScratchSchema(base, 't');
    url = scratch.url;
    dropSchema = scratch.drop;
  }
  const database = await openDatabase({ databaseUrl: url, dataDir: null });
  if (options.migrate !== false) await migrate(database.db);
  return {
    ...database,
    url,
    close: async () => {
      await database.close();
      await dropSchema?.();
    },
  };
}

import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { backends, freshDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { loadMigrations, migrate, schemaStatus } from './migrate.ts';
import { openDatabase } from './index.ts';

describe.each(backends())('migrate on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: applies every migration once and records it', async () => {
    database = await freshDatabase(backend, { migrate: false });
    const files = loadMigrations();
    expect(await migrate(database.db)).toEqual(files.map((m) => m.version));
    expect(await migrate(database.db)).toEqual([]);
    const status = await schemaStatus(database.db);
    expect(status.pending).toEqual([]);
    expect(status.current).toBe(files[files.length - 1]!.version);
  });

  it('behavior: a schema that is behind reports its pending migrations', async () => {
    database = await freshDatabase(backend, { migrate: false });
    const files = loadMigrations();
    await migrate(database.db, files.slice(0, 1));
    const status = await schemaStatus(database.db);
    expect(status.current).toBe(files[0]!.version);
    expect(status.pending.map((m) => m.version)).toEqual(files.slice(1).map((m) => m.version));
  });

  it('error: a failing migration leaves no bookkeeping row and none of its changes', async () => {
    database = await freshDatabase(backend, { migrate: false });
    const broken = [{ version: 9001, name: 'broken', sql: 'create table half_done (x int); select 1/0;' }];
    await expect(migrate(database.db, broken)).rejects.toThrow();
    const status = await schemaStatus(database.db, broken);
    expect(status.pending.map((m) => m.version)).toEqual([9001]);
    const table = await sql<{ t: string | null }>`select to_regclass('half_done')::text as t`.execute(database.db);
    expect(table.rows[0]!.t).toBeNull();
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('migrate on pg, two runners', () => {
  it('behavior: two runners at once apply each migration exactly once', async () => {
    const database = await freshDatabase('pg', { migrate: false });
    const second = await openDatabase({ databaseUrl: database.url });
    try {
      const [a, b] = await Promise.all([migrate(database.db), migrate(second.db)]);
      const all = [...a, ...b].sort((x, y) => x - y);
      expect(all).toEqual(loadMigrations().map((m) => m.version));
    } finally {
      await second.close();
      await database.close();
    }
  });
});

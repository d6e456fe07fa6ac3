import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgPool } from '../../src/db/pg/open.ts';
import { freshDatabase, type TestDatabase } from '../helpers/db.ts';

/**
 * Each Postgres connection asks for 1 GB of local buffers for temporary tables at connect
 * (src/db/pg/open.ts), so that a cold run's temporary tables stay in the backend's memory; the
 * server's default is 8 MB. It must come with the connection: a session that has used a temporary
 * table can no longer change it. An `options` in the connection string replaces it.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('temp_buffers per connection (Postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase('pg', { migrate: false });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('a connection of openDatabase has 1GB, and keeps it after a temporary table', async () => {
    const show = async () =>
      (await sql<{ temp_buffers: string }>`show temp_buffers`.execute(db.db)).rows[0]!.temp_buffers;
    expect(await show()).toBe('1GB');
    await sql`create temp table t_probe (x int)`.execute(db.db);
    expect(await show()).toBe('1GB');
  });

  it("the connection string's options replace it", async () => {
    const pool = openPgPool(`${db.url!}?options=-c%20temp_buffers%3D8MB`);
    try {
      expect((await pool.query('show temp_buffers')).rows[0]).toEqual({ temp_buffers: '8MB' });
    } finally {
      await pool.end();
    }
  });
});

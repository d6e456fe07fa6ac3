import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrate, type Migration } from '../../src/db/migrate.ts';
import { backends, freshDatabase } from '../helpers/db.ts';

/**
 * migrate's path when nothing is pending (every run's case): it answers from schema_migrations
 * alone. These migrations are the test's own (versions past any real one), on a database with
 * none applied, so what each call applied is known from the list given.
 */
const A: Migration = { version: 9001, name: 'test_a', sql: 'create table mig_test (x int primary key)' };
const B: Migration = { version: 9002, name: 'test_b', sql: 'insert into mig_test values (1)' };
const C: Migration = { version: 9003, name: 'test_c', sql: 'insert into mig_test values (2)' };

describe.each(backends())('migrate on $backend', ({ backend }) => {
  it('behavior: applies only what is missing, whether all, none or a later one, each once', async () => {
    const db = await freshDatabase(backend, { migrate: false });
    try {
      const rows = async () =>
        (await sql<{ x: number }>`select x from mig_test order by x`.execute(db.db)).rows.map((r) => r.x);
      expect(await migrate(db.db, [A])).toEqual([9001]);
      expect(await migrate(db.db, [A])).toEqual([]);
      // B is missing while A is in: the full path runs B alone
      expect(await migrate(db.db, [A, B])).toEqual([9002]);
      expect(await migrate(db.db, [A, B])).toEqual([]);
      expect(await rows()).toEqual([1]);
      // a row removed from the bookkeeping counts as missing: its migration runs again
      await sql`delete from schema_migrations where version = 9002`.execute(db.db);
      await sql`delete from mig_test`.execute(db.db);
      expect(await migrate(db.db, [A, B, C])).toEqual([9002, 9003]);
      expect(await rows()).toEqual([1, 2]);
      const versions = await sql<{ version: number }>`select version from schema_migrations order by 1`.execute(db.db);
      expect(versions.rows.map((r) => r.version)).toEqual([9001, 9002, 9003]);
    } finally {
      await db.close();
    }
  });

  it.runIf(backend === 'pg')(
    'behavior: with every migration applied it does not wait on the migration lock another session holds',
    async () => {
      const db = await freshDatabase(backend, { migrate: false });
      const other = new pg.Client({ connectionString: db.url });
      await other.connect();
      try {
        expect(await migrate(db.db, [A])).toEqual([9001]);
        await other.query('select pg_advisory_lock(402000001)'); // MIGRATION_LOCK_KEY (src/db/migrate.ts)
        // nothing pending: answered without the lock
        expect(await migrate(db.db, [A])).toEqual([]);
        // something pending: the full path waits for the lock, then applies it
        const pending = migrate(db.db, [A, B]);
        // (it is seen waiting: an advisory lock not granted, in pg_locks)
        for (;;) {
          const { rows } = await other.query<{ n: number }>(
            "select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted",
          );
          if (rows[0]!.n === 1) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        await other.query('select pg_advisory_unlock(402000001)');
        expect(await pending).toEqual([9002]);
      } finally {
        await other.end();
        await db.close();
      }
    },
  );
});

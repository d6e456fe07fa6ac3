import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../helpers/db.ts';

/**
 * A Postgres backend terminated while it runs a query (issue 20): pg_terminate_backend by an
 * operator, a restart or a failover (SQLSTATE 57P01). The process must not end (pg emits 'error'
 * on the client, which is still checked out), and only the query that met the termination fails:
 * pg-pool hands out the last released client first, so the next query would otherwise get the
 * dead connection. The pool of a fresh database holds one client, which makes that reuse certain.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('a backend terminated during a query (Postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase('pg', { migrate: false });
  });
  afterAll(async () => {
    await db?.close();
  });

  const backendPid = async () =>
    (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db.db)).rows[0]!.pid;

  it('error: the terminated query fails with 57P01; the next query runs on a new connection', async () => {
    const before = await backendPid();
    // The backend terminates itself mid-statement; the termination is delivered in pg_sleep.
    const terminated = sql`do $$ begin perform pg_terminate_backend(pg_backend_pid()); perform pg_sleep(10); end $$`
      .execute(db.db)
      .then(
        () => undefined,
        (error: { code?: string }) => error.code,
      );
    expect(await terminated).toBe('57P01');
    // At once, before the dead socket's end is read, as a busy server's next request would.
    const after = await backendPid();
    expect(after).not.toBe(before);
    expect(await backendPid()).toBe(after);
  });
});

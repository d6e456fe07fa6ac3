/**
 * The child process of pglite-kill.test.ts: opens the embedded database under argv[2] as `run`
 * does (openDatabase), commits known rows, then starts work it never commits, says `ready` on
 * stdout and goes on writing until the test kills it (SIGKILL: no close, no shutdown checkpoint).
 *
 * Committed: `kept` holds 1..1000; `refilled` was emptied by `truncate` and refilled with
 * 1..10 in one transaction (the bulk path of a cold method run, docs/operations.md).
 * Never committed: 1001..2000 in `kept`, and `refilled` truncated again and being filled with
 * millions of rows when the kill comes.
 */
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/index.ts';

const dataDir = process.argv[2]!;
const { db } = await openDatabase({ dataDir });
await sql`create table kept (n int primary key)`.execute(db);
await sql`insert into kept select generate_series(1, 1000)`.execute(db);
await sql`create table refilled (n int primary key)`.execute(db);
await sql`insert into refilled select generate_series(1, 100)`.execute(db);
await db.transaction().execute(async (trx) => {
  await sql`truncate refilled`.execute(trx);
  await sql`insert into refilled select generate_series(1, 10)`.execute(trx);
});
await db.transaction().execute(async (trx) => {
  await sql`insert into kept select generate_series(1001, 2000)`.execute(trx);
  await sql`truncate refilled`.execute(trx);
  process.stdout.write('ready\n');
  // (the kill comes during this statement: 5M rows take seconds in PGlite)
  await sql`insert into refilled select generate_series(1, 5000000)`.execute(trx);
  process.stdout.write('not killed\n');
  await new Promise(() => {});
});

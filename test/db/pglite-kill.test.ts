import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointEmbedded, openDatabase, type Database } from '../../src/db/index.ts';
import { projectRoot } from '../../src/lib/paths.ts';

/**
 * The embedded database on disk after its process is killed (SIGKILL: no close, no shutdown
 * checkpoint), with the server settings src/db/pglite/open.ts gives it: what committed is there,
 * what did not commit is not, and the database opens and takes writes again. (A power loss or an
 * OS crash is another matter: docs/operations.md, "Embedded database".)
 */
describe('the embedded database killed mid-write (PGlite on disk)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-pglite-kill-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts the child and kills it with SIGKILL once it is writing what it never commits. */
  function runAndKill(): Promise<{ signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', path.join(projectRoot, 'test/db/pglite-kill-child.ts'), dir],
        {
          cwd: projectRoot,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        // a moment into the 5M-row insert, so that the kill falls inside it
        if (stdout.includes('ready\n')) setTimeout(() => child.kill('SIGKILL'), 300);
      });
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (_code, signal) => resolve({ signal, stdout, stderr }));
    });
  }

  // (a fresh on-disk PGlite, opened twice: slow on a loaded machine)
  it(
    'behavior: committed rows are all there, uncommitted ones are not, and the database takes writes again',
    { timeout: 300_000 },
    async () => {
      const killed = await runAndKill();
      expect(killed.stderr).toBe('');
      expect(killed.stdout).toBe('ready\n');
      expect(killed.signal).toBe('SIGKILL');

      const { db, close } = await openDatabase({ dataDir: dir });
      try {
        const count = async (table: string) =>
          (
            await sql<{
              n: number;
              s: string;
            }>`select count(*)::int as n, coalesce(sum(n), 0)::text as s from ${sql.table(table)}`.execute(db)
          ).rows[0];
        // 1..1000: 1000 rows summing to 1000 * 1001 / 2; 1..10: 10 rows summing to 55
        expect(await count('kept')).toEqual({ n: 1000, s: '500500' });
        expect(await count('refilled')).toEqual({ n: 10, s: '55' });
        // the primary key index agrees with the heap (an index-only lookup of a committed and an uncommitted key)
        await db.transaction().execute(async (trx) => {
          await sql`set local enable_seqscan = off`.execute(trx);
          const found = await sql<{ n: number }>`select n from kept where n in (1000, 1001) order by n`.execute(trx);
          expect(found.rows).toEqual([{ n: 1000 }]);
        });
        await sql`insert into kept values (1001)`.execute(db);
        await sql`checkpoint`.execute(db);
        expect(await count('kept')).toEqual({ n: 1001, s: '501501' });
      } finally {
        await close();
      }
    },
  );
});

describe('the embedded database in a run (PGlite, in memory)', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ dataDir: null });
  });
  afterAll(async () => {
    await database?.close();
  });

  it('behavior: the settings of src/db/pglite/open.ts are in force, with fsync off as PGlite starts it', async () => {
    const { rows } = await sql<{ name: string; setting: string; unit: string | null }>`
      select name, setting, unit from pg_settings
       where name in ('wal_level', 'max_wal_senders', 'temp_buffers', 'fsync') order by name`.execute(database.db);
    // temp_buffers is in 8 kB pages: 256 MB = 32768 pages
    expect(rows).toEqual([
      { name: 'fsync', setting: 'off', unit: null },
      { name: 'max_wal_senders', setting: '0', unit: null },
      { name: 'temp_buffers', setting: '32768', unit: '8kB' },
      { name: 'wal_level', setting: 'minimal', unit: null },
    ]);
  });

  it('behavior: writes leave the redo point where it was (no checkpointer); checkpointEmbedded moves it past them', async () => {
    const { db } = database;
    const lsns = async () =>
      (
        await sql<{ redo: string; now: string }>`
          select redo_lsn::text as redo, pg_current_wal_lsn()::text as now from pg_control_checkpoint()`.execute(db)
      ).rows[0]!;
    const before = await lsns();
    await sql`create table filler (n int, pad text)`.execute(db);
    await sql`insert into filler select g, repeat('x', 100) from generate_series(1, 100000) g`.execute(db);
    const written = await lsns();
    expect(written.redo).toBe(before.redo);
    expect(written.now).not.toBe(before.now);
    await checkpointEmbedded(database);
    const after = await lsns();
    // the new redo point is at or past where the WAL stood before the checkpoint
    const asNumber = (lsn: string) => {
      const [hi, lo] = lsn.split('/');
      return BigInt(`0x${hi}`) * 2n ** 32n + BigInt(`0x${lo}`);
    };
    expect(asNumber(after.redo) >= asNumber(written.now)).toBe(true);
  });
});

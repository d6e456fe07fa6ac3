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

  it('behavior: migration 0003 marks the stored transfers that rule 3 admits, and only those', async () => {
    database = await freshDatabase(backend, { migrate: false });
    const files = loadMigrations();
    await migrate(
      database.db,
      files.filter((m) => m.version < 3),
    );
    const hash = (c: string) => `0x${c.repeat(64)}`;
    const [payer, other, seller] = ['0x' + '1'.repeat(40), '0x' + '2'.repeat(40), '0x' + '3'.repeat(40)];
    // tx a: authorized by its payer; tx b: a plain transfer; tx c: an authorization by someone
    // else; tx d: the payer's authorization, but recorded in another block (a reorged copy).
    await sql`
      insert into usdc_transfers (tx_hash, log_index, block_hash, block_number, block_timestamp, from_address, to_address, value, added_seq)
      values (${hash('a')}, 1, ${hash('1')}, 1, 100, ${payer}, ${seller}, 5, 1),
             (${hash('b')}, 1, ${hash('1')}, 1, 100, ${payer}, ${seller}, 5, 1),
             (${hash('c')}, 1, ${hash('1')}, 1, 100, ${payer}, ${seller}, 5, 1),
             (${hash('d')}, 1, ${hash('1')}, 1, 100, ${payer}, ${seller}, 5, 1)`.execute(database.db);
    await sql`
      insert into usdc_authorizations (tx_hash, log_index, block_hash, block_number, authorizer, nonce, added_seq)
      values (${hash('a')}, 0, ${hash('1')}, 1, ${payer}, ${hash('0')}, 1),
             (${hash('c')}, 0, ${hash('1')}, 1, ${other}, ${hash('0')}, 1),
             (${hash('d')}, 0, ${hash('2')}, 1, ${payer}, ${hash('0')}, 1)`.execute(database.db);
    await migrate(
      database.db,
      files.filter((m) => m.version === 3),
    );
    const { rows } = await sql<{ tx: string; authorized: boolean }>`
      select left(tx_hash, 3) as tx, authorized from usdc_transfers order by tx_hash`.execute(database.db);
    expect(rows).toEqual([
      { tx: '0xa', authorized: true },
      { tx: '0xb', authorized: false },
      { tx: '0xc', authorized: false },
      { tx: '0xd', authorized: false },
    ]);
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

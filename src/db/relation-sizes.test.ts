import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { backends, freshDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { relationSizes } from './relation-sizes.ts';

describe.each(backends())('relationSizes on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: every table of the schema with its rows and bytes; a partitioned table sums its partitions', async () => {
    database = await freshDatabase(backend);
    const db = database.db;
    await sql`create table scratch_parts (k bigint primary key, v text) partition by range (k)`.execute(db);
    await sql`create table scratch_parts_a partition of scratch_parts for values from (0) to (1000)`.execute(db);
    await sql`create table scratch_parts_b partition of scratch_parts for values from (1000) to (2000)`.execute(db);
    await sql`insert into scratch_parts select k, repeat('x', 100) from generate_series(1, 1500) k`.execute(db);
    await sql`insert into schema_migrations (version, name) values (9001, 'a'), (9002, 'b')`.execute(db);

    const sizes = await relationSizes(db);
    const byName = new Map(sizes.map((s) => [s.name, s]));
    // the tables of the migrations (sql/schema.txt) and the scratch one; no view, no partition
    const { rows: tables } = await sql<{ n: string }>`
      select count(*)::text as n from pg_tables where schemaname = current_schema()`.execute(db);
    expect(sizes.length).toBe(Number(tables[0]!.n) - 2);
    expect(byName.has('scratch_parts_a')).toBe(false);
    expect(byName.has('verified_transfers')).toBe(false);

    const parts = byName.get('scratch_parts')!;
    expect(parts.rows).toBe(1500n);
    const { rows: leaves } = await sql<{ t: string; i: string }>`
      select (pg_table_size('scratch_parts_a') + pg_table_size('scratch_parts_b'))::text as t,
             (pg_indexes_size('scratch_parts_a') + pg_indexes_size('scratch_parts_b'))::text as i`.execute(db);
    expect(parts.tableBytes).toBe(BigInt(leaves[0]!.t));
    expect(parts.indexBytes).toBe(BigInt(leaves[0]!.i));
    expect(parts.totalBytes).toBe(parts.tableBytes + parts.indexBytes);
    expect(parts.bytesPerRow).toBe(Math.round(Number(parts.totalBytes) / 1500));

    const migrations = byName.get('schema_migrations')!;
    const { rows: applied } = await sql<{ n: string; b: string }>`
      select count(*)::text as n, pg_total_relation_size('schema_migrations')::text as b from schema_migrations`.execute(
      db,
    );
    expect(migrations.rows).toBe(BigInt(applied[0]!.n));
    expect(migrations.totalBytes).toBe(BigInt(applied[0]!.b));
    expect(byName.get('acc_state')!.bytesPerRow).toBeNull(); // empty
    // largest first
    expect(sizes.map((s) => s.totalBytes)).toEqual(
      [...sizes.map((s) => s.totalBytes)].sort((a, b) => (b > a ? 1 : b < a ? -1 : 0)),
    );
  });
});

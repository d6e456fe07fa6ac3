import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate, schemaStatus } from '../../src/db/migrate.ts';
import { computeGeneration } from '../../src/method/index.ts';
import { compareGenerationRows, formatDifference, readGenerationRows } from '../../src/publish/index.ts';
import type { Schema } from '../../src/db/schema.ts';
import { TallyError, isTemporary } from '../../src/lib/errors.ts';
import { backends, type TestDatabase } from '../helpers/db.ts';
import { FIXTURE, mismatches, oldLayoutDatabase, serveAll } from '../helpers/old-layout.ts';

// The move from the text fact layout (usdc_transfers, usdc_authorizations, chain_blocks) to the
// compact one (migrations 0023 and 0024, the copy of src/db/compact-copy.ts between them). The
// fixture's rows (test/helpers/old-layout.ts) are loaded into a database at migration 0022,
// migrated, and served by this code.
const OLD_TRANSFERS = FIXTURE.rows.usdc_transfers!.length;
/** What stays pending while the copy is: the switch (0026) and every migration after it. */
const PENDING_AFTER_COPY = loadMigrations()
  .filter((m) => m.version >= 26)
  .map((m) => m.name);
/** The generations rows (their digests among them), in the fixture's JSON form. */
async function generations(db: Kysely<Schema>) {
  const { rows } = await sql`select * from generations order by generation`.execute(db);
  return JSON.parse(JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as unknown;
}

async function tableExists(db: Kysely<Schema>, name: string) {
  const { rows } = await sql<{ t: string | null }>`select to_regclass(${name})::text as t`.execute(db);
  return rows[0]!.t !== null;
}

async function copied(db: Kysely<Schema>) {
  const { rows } = await sql<{ n: number }>`select count(*)::int4 as n from transfers`.execute(db);
  return rows[0]!.n;
}

describe.each(backends())('the move to the compact fact layout on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: migrated, every retained generation serves byte-identical bodies and keeps its digests', async () => {
    database = await oldLayoutDatabase(backend);
    const before = await serveAll(database.db);
    expect(mismatches(before.served)).toEqual([]); // the old layout, as loaded, serves what it served

    const applied = await migrate(database.db, undefined, { copyFacts: { batchTransfers: 8 } });
    // (and every later one: 0028 keys the work state by address ids, emptied so the next run is cold)
    expect(applied.map((v) => loadMigrations().find((m) => m.version === v)!.name)).toEqual(
      loadMigrations()
        .filter((m) => m.version >= 25)
        .map((m) => m.name),
    );
    expect(applied.slice(0, 2).map((v) => loadMigrations().find((m) => m.version === v)!.name)).toEqual([
      'compact_facts',
      'compact_switch',
    ]);
    for (const old of ['usdc_transfers', 'usdc_authorizations', 'chain_blocks', 'compact_copy'])
      expect(await tableExists(database.db, old)).toBe(false);
    expect(await copied(database.db)).toBe(OLD_TRANSFERS);
    // migration 0027 moved the copied rows into partitions of the fact tables
    const { rows: parts } = await sql<{ n: number }>`
      select count(*)::int4 as n from pg_inherits where inhparent = 'transfers'::regclass`.execute(database.db);
    expect(parts[0]!.n).toBeGreaterThan(0);
    const after = await serveAll(database.db);
    expect(mismatches(after.served)).toEqual([]);
    expect(after.metaStatus).toBe(200);
    expect(await generations(database.db)).toEqual(FIXTURE.generations);
  });

  it('behavior: after migration 0028 (work state by address ids) the first run is cold and recomputes the last generation exactly', async () => {
    database = await oldLayoutDatabase(backend);
    await migrate(database.db, undefined, { copyFacts: { batchTransfers: 8 } });
    for (const table of ['acc_state', 'part_state', 'acc_sellers', 'acc_day_payers', 'part_seller_lines'] as const)
      expect(await database.db.selectFrom(table).selectAll().execute(), table).toEqual([]);
    const last = await database.db
      .selectFrom('generations')
      .selectAll()
      .orderBy('generation', 'desc')
      .executeTakeFirstOrThrow();
    const again = await computeGeneration(database.db, {
      runSeq: last.run_seq,
      asOf: { number: last.as_of_block, hash: last.as_of_block_hash as `0x${string}`, timestamp: last.as_of_ts },
      catalogSnapshotId: last.catalog_snapshot_id,
      sources: last.sources as unknown[],
      generatedAt: new Date(last.generated_at),
      methodVersion: last.method_version,
    });
    const [was, is] = [
      await readGenerationRows(database.db, last.generation),
      await readGenerationRows(database.db, again),
    ];
    expect(was.sellers.some((r) => Number(r.payments_30d) > 0)).toBe(true); // (not an empty comparison)
    expect(compareGenerationRows(was, is).map(formatDifference)).toEqual([]);
    expect(is.generation.digests).toEqual(was.generation.digests);
    expect(is.sellerPeriods).toEqual(was.sellerPeriods);
    // the work state it built names sellers and payers by id, each an addresses row
    const { rows } = await sql<{ n: number; named: number }>`
      select count(*)::int4 as n,
             count(*) filter (where exists (select 1 from addresses s where s.address_id = d.seller_id)
                                and exists (select 1 from addresses p where p.address_id = d.payer_id))::int4 as named
        from (select seller_id, unnest(payer_ids) as payer_id from acc_day_payers) d`.execute(database.db);
    expect(rows[0]!.n).toBeGreaterThan(0);
    expect(rows[0]!.named).toBe(rows[0]!.n);
    // and the retained generations still serve what they served
    expect(mismatches((await serveAll(database.db)).served)).toEqual([]);
  });

  it('error: a copy killed after its first batch, and run again, ends with the same bodies and digests', async () => {
    database = await oldLayoutDatabase(backend);
    const killed = new Error('killed after the first batch');
    await expect(
      migrate(database.db, undefined, {
        copyFacts: {
          batchTransfers: 8,
          onBatch: () => {
            throw killed;
          },
        },
      }),
    ).rejects.toBe(killed);
    // The first batch is in (a whole number of blocks: at least 8 transfers, not all), the switch is not.
    const first = await copied(database.db);
    expect(first).toBeGreaterThanOrEqual(8);
    expect(first).toBeLessThan(OLD_TRANSFERS);
    expect((await schemaStatus(database.db)).pending.map((m) => m.name)).toEqual(PENDING_AFTER_COPY);
    // Meanwhile the old layout is still what is served.
    expect(mismatches((await serveAll(database.db)).served)).toEqual([]);

    await migrate(database.db, undefined, { copyFacts: { batchTransfers: 8 } });
    expect(await copied(database.db)).toBe(OLD_TRANSFERS);
    const after = await serveAll(database.db);
    expect(mismatches(after.served)).toEqual([]);
    expect(after.metaStatus).toBe(200);
    expect(await generations(database.db)).toEqual(FIXTURE.generations);
  });

  it('behavior: `run` does not copy: while the copy is pending it stops (exit 75) naming `migrate`, and the old layout stays served', async () => {
    database = await oldLayoutDatabase(backend);
    const error = await migrate(database.db, undefined, { copyFacts: false }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isTemporary(error)).toBe(true);
    expect((error as Error).message).toContain('x402-tally migrate');
    expect(await copied(database.db)).toBe(0);
    expect((await schemaStatus(database.db)).pending.map((m) => m.name)).toEqual(PENDING_AFTER_COPY);
    expect(mismatches((await serveAll(database.db)).served)).toEqual([]);
  });

  it('error: a stored value of 2^63 or more stops the copy (exit 1) naming tx_hash:log_index, its batch not copied', async () => {
    database = await oldLayoutDatabase(backend);
    const { rows } = await sql<{ tx: string; li: number }>`
      select tx_hash as tx, log_index as li from usdc_transfers order by block_number limit 1`.execute(database.db);
    const { tx, li } = rows[0]!;
    await sql`update usdc_transfers set value = 9223372036854775808 where tx_hash = ${tx} and log_index = ${li}`.execute(
      database.db,
    );
    const error = await migrate(database.db).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TallyError);
    expect(isTemporary(error)).toBe(false);
    expect((error as Error).message).toContain(`${tx}:${li} has value 9223372036854775808`);
    expect(await copied(database.db)).toBe(0);
    expect(await tableExists(database.db, 'usdc_transfers')).toBe(true);
  });
});

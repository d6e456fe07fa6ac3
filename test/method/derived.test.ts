import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DERIVED_STATE_TABLES, DERIVED_TABLES, forgetDerivedState } from '../../src/method/derived.ts';
import { compareGenerationRows, formatDifference, readGenerationRows } from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { compute, loadFixture } from './setup.ts';

/**
 * DERIVED_TABLES (src/method/derived.ts) is the one list of the method's derived tables, used by
 * the incremental property test and by whatever rebuilds the method's state (forgetDerivedState,
 * bench/method.ts VERIFY).
 */
describe.each(backends())('the derived tables on $backend', ({ backend }) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(backend);
  });
  afterAll(async () => t?.close());

  it('default: DERIVED_TABLES is every acc_* and part_* table of the schema, catalog_snapshot_sellers and seller_daily_rows', async () => {
    const { rows } = await sql<{ name: string }>`
      select table_name as name from information_schema.tables
       where table_schema = current_schema() and table_type = 'BASE TABLE'
         and (table_name like 'acc\\_%' or table_name like 'part\\_%')`.execute(t.db);
    const expected = [...rows.map((r) => r.name), 'catalog_snapshot_sellers', 'seller_daily_rows'].sort();
    // 14 acc_* (4 of method 3.0.0, 1 of the market summary: its day sets are arrays of acc_market_days
    // since migration 0045; the market's open days, migration 0048), 7 part_* (docs/data-model.md; part_edge_lines: migration 0044), and the two
    expect(expected.length).toBe(23);
    expect([...DERIVED_TABLES].sort()).toEqual(expected);
    expect(new Set(DERIVED_TABLES).size).toBe(DERIVED_TABLES.length);
  });

  it('behavior: after forgetDerivedState the next run is cold, gives the rows of the incremental run and leaves published rows alone', async () => {
    const fixture = await loadFixture(t.db);
    const first = await compute(t.db, fixture.snapshotId);
    const firstRows = await readGenerationRows(t.db, first);
    // a steady run over the same facts: it reuses the partials the first one built
    const steady = await compute(t.db, fixture.snapshotId, { runSeq: 2n });
    const live = await t.db
      .selectFrom('part_seller_hours')
      .select(['seller_id', 'hour_start'])
      .where('gen_to', 'is', null)
      .orderBy('seller_id')
      .orderBy('hour_start')
      .execute();
    expect(live.length).toBeGreaterThan(0);
    expect(live.every((r) => r.hour_start > 0n)).toBe(true);

    await forgetDerivedState(t.db);
    for (const table of DERIVED_STATE_TABLES)
      expect(await t.db.selectFrom(table).selectAll().execute(), table).toEqual([]);
    const cold = await compute(t.db, fixture.snapshotId, { runSeq: 2n });

    // cold: the run closed every live partial (gen_to = its generation) and built them again
    const closed = await t.db
      .selectFrom('part_seller_hours')
      .select(['seller_id', 'hour_start'])
      .where('gen_to', '=', cold)
      .orderBy('seller_id')
      .orderBy('hour_start')
      .execute();
    expect(closed).toEqual(live);
    expect(await t.db.selectFrom('acc_state').select('checked_seq').execute()).toEqual([{ checked_seq: 2n }]);
    const differences = compareGenerationRows(
      await readGenerationRows(t.db, steady),
      await readGenerationRows(t.db, cold),
    ).map(formatDifference);
    expect(differences).toEqual([]);
    expect(compareGenerationRows(firstRows, await readGenerationRows(t.db, first)).map(formatDifference)).toEqual([]);
  });
});

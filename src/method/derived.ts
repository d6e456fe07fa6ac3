import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/**
 * The method's derived tables (docs/data-model.md, "Shared versioned rows" and "Work state"):
 * every row is computed by the method from the chain facts and the catalog, none is an input.
 * Tests that compare incremental runs with from-scratch ones save and restore exactly these, and
 * anything that rebuilds the method's state goes through this list. A new acc_* or part_* table
 * must be added here (test/method/derived.test.ts checks it against the schema).
 *
 * The closed rows of the versioned tables (part_seller_hours, part_hours, seller_daily_rows) serve
 * retained generations: deleting them changes published bodies. Use `forgetDerivedState` to make
 * the next run cold instead.
 */
export const DERIVED_TABLES = [
  // catalog-derived, once per snapshot (method step 1)
  'catalog_snapshot_sellers',
  // the window's accumulators (step 1a) and the market's complete days (step 4)
  'acc_state',
  'acc_sellers',
  'acc_values',
  'acc_payers',
  'acc_day_payers',
  'acc_seller_days',
  'acc_market_state',
  'acc_market_days',
  // the market's open days' histograms (step 4, migration 0048)
  'acc_market_open',
  // the summary's periods (step 4b; the market days' payer and seller sets are arrays in
  // acc_market_days, migration 0045)
  'acc_market_summary',
  // method 3.0.0's per-class and per-reason numbers (step 1c) and the pairs they were decided with
  'acc_seller_classes',
  'acc_reason_payers',
  'acc_reason_sellers',
  'acc_operator_pairs',
  // the 2.0.0 digests' partials: work state and versioned rows
  'part_state',
  'part_sellers',
  'part_seller_digests',
  'part_seller_lines',
  'part_edge_lines',
  'part_seller_hours',
  'part_hours',
  // the daily rows shared between generations (step 6)
  'seller_daily_rows',
] as const satisfies readonly (keyof Schema)[];

export type DerivedTable = (typeof DERIVED_TABLES)[number];

/**
 * The rows that say what the derived tables are exact for (seq, window, seller set) and the
 * catalog-derived sellers. Without them the next compute empties the accumulators and the market
 * cache, closes every live partial and builds all of them from the facts: a cold run
 * (docs/METHOD.md 2.10). Closed versioned rows are left alone.
 */
export const DERIVED_STATE_TABLES = [
  'acc_state',
  'acc_market_state',
  'part_state',
  'catalog_snapshot_sellers',
] as const satisfies readonly DerivedTable[];

/**
 * Makes the next `computeGeneration` a cold run: deletes the rows of DERIVED_STATE_TABLES, so that
 * run rebuilds every derived table from the facts. Published generations keep their rows. Safe
 * to re-run; takes the same table locks a compute takes first, so a concurrent compute finishes
 * before or starts after.
 */
export async function forgetDerivedState(db: Kysely<Schema>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const table of DERIVED_STATE_TABLES) await trx.deleteFrom(table).execute();
  });
}

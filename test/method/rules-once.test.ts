import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlDir } from '../../src/lib/paths.ts';
import { computeGeneration } from '../../src/method/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { blockHash, insertCatalog, insertTransfers, type FixtureTransfer } from '../helpers/facts.ts';

/**
 * Each SQL rule written once (issue 21, migration 0023): the visibility of a chain fact is the
 * function visible_at, inlined by the planner; the method steps and the views call it; the view
 * generation_payments is built on verified_transfers and keeps the rows of its own definition.
 */

/** Every SQL file of the method (sql/method and its version folders), without its comments. */
function methodSqlFiles(): { file: string; text: string }[] {
  const dir = path.join(sqlDir, 'method');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.sql'))
    .map((f) => ({ file: f, text: readFileSync(path.join(dir, f), 'utf8').replace(/--.*$/gm, '') }));
}

/** The plan Postgres runs for a query, as text. */
async function plan(t: TestDatabase, query: string): Promise<string> {
  const { rows } = await sql<{ 'QUERY PLAN': string }>`explain (verbose, costs off) ${sql.raw(query)}`.execute(t.db);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe('each SQL rule written once: the method files', () => {
  it('behavior: no method step writes the visibility rule out, and none calls visible_at with a subquery for the seq', () => {
    const files = methodSqlFiles();
    expect(files.length).toBeGreaterThan(5);
    // the rule's second half, as every step wrote it before migration 0023
    expect(files.filter((f) => /removed_seq\s+is\s+null\s+or/i.test(f.text)).map((f) => f.file)).toEqual([]);
    // A subquery argument is not inlined (see the explain test below): every call's arguments are
    // plain columns or constants, i.e. hold no parenthesis.
    const calls = files.flatMap((f) => f.text.match(/visible_at\(/g) ?? []);
    const plain = files.flatMap((f) => f.text.match(/visible_at\([^()]*\)/g) ?? []);
    expect(calls.length).toBe(16); // 01a: 8 (2 of them the first and last day's blocks of a leaving seller), 04: 2 (the ended days and the day a reset fills), digests: 2, 3.0.0's reasons: 1, the cold reads' m_cold_facts: 2, their fundings (3.0.0): 1
    expect(plain.length).toBe(calls.length);
  });
});

describe.each(backends())('each SQL rule written once on $backend', ({ backend }) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(backend);
  });
  afterAll(async () => t?.close());

  it('default: visible_at(added, removed, seq) is added <= seq and (removed is null or removed > seq)', async () => {
    const cases: { added: number; removed: number | null; seq: number }[] = [];
    for (const added of [1, 2, 3])
      for (const removed of [null, 2, 3, 4])
        for (let seq = 0; seq <= 5; seq++) if (removed === null || removed > added) cases.push({ added, removed, seq });
    const { rows } = await sql<{ v: boolean }>`
      select visible_at(a, r, s) as v
        from unnest(${cases.map((c) => c.added)}::int8[], ${cases.map((c) => c.removed)}::int8[],
                    ${cases.map((c) => c.seq)}::int8[]) with ordinality as u(a, r, s, i)
       order by i`.execute(t.db);
    // the interval [added, removed): seen from added on, no longer from removed on
    expect(rows.map((r) => r.v)).toEqual(
      cases.map((c) => c.added <= c.seq && (c.removed === null || c.seq < c.removed)),
    );
    expect(rows.filter((r) => r.v).length).toBe(22); // not vacuous: both answers occur
  });

  it('behavior: a call with columns or constants is inlined: the plan holds the comparisons, not the function', async () => {
    // one partition of the facts (migration 0027), or the plan of an empty partitioned table is a constant false
    await sql`select fact_partitions_cover(array[1]::int8[])`.execute(t.db);
    const constant = await plan(t, 'select count(*) from blocks t where visible_at(t.added_seq, t.removed_seq, 7)');
    expect(constant).not.toContain('visible_at');
    expect(constant).toMatch(/added_seq <= '?7'?/);
    expect(constant).toMatch(/removed_seq IS NULL\) OR \(t\.removed_seq > '?7'?/);
    const column = await plan(
      t,
      `select count(*) from blocks t join generations g on visible_at(t.added_seq, t.removed_seq, g.run_seq)`,
    );
    expect(column).not.toContain('visible_at');
    expect(column).toContain('g.run_seq');
    // ... but not with a subquery as the seq (used twice in the body) over a plain table: why the
    // steps join it. (Over the partitioned `blocks` the planner makes the subquery an InitPlan first
    // and inlines the call; the steps do not rely on that.)
    await sql`create temp table plain_facts (added_seq int8, removed_seq int8)`.execute(t.db);
    const subquery = await plan(
      t,
      'select count(*) from plain_facts t where visible_at(t.added_seq, t.removed_seq, (select max(run_seq) from generations))',
    );
    expect(subquery).toContain('visible_at');
  });

  it('behavior: generation_payments is built on verified_transfers and calls visible_at', async () => {
    const { rows } = await sql<{ def: string }>`select pg_get_viewdef('generation_payments'::regclass) as def`.execute(
      t.db,
    );
    const def = rows[0]!.def;
    expect(def).toContain('verified_transfers');
    expect(def).toContain('visible_at(');
    expect(def).not.toContain('usdc_transfers');
    expect(def).not.toContain('authorized');
  });

  it('behavior: generation_payments has the rows of its definition of migration 0003, every rule exercised', async () => {
    const seller = `0x${'a'.repeat(40)}`;
    const other = `0x${'b'.repeat(40)}`; // not in the catalog
    const payer = `0x${'7'.repeat(40)}`;
    // the as-of at noon: the window starts at noon 30 days before, its first market day at midnight
    const asOfTs = 1_767_268_800n; // 2026-01-01T12:00:00Z, block 10,000,000; one block every 2 s
    const blockOf = (ts: bigint) => 10_000_000n - (asOfTs - ts) / 2n;
    let n = 0;
    const pay = (over: Partial<FixtureTransfer> & { ts: bigint }): FixtureTransfer => ({
      tx: `0x${(++n).toString(16).padStart(64, '0')}`,
      logIndex: 1,
      block: blockOf(over.ts),
      from: payer,
      to: seller,
      value: 100n,
      authorizer: payer,
      ...over,
    });
    const day = 86_400n;
    const transfers = [
      pay({ ts: asOfTs - 10n }), // in the window
      pay({ ts: asOfTs - 29n * day }), // in the window
      pay({ ts: asOfTs - 30n * day - 10n }), // before the window, on the first market day
      pay({ ts: asOfTs - 32n * day }), // before the first market day
      pay({ ts: asOfTs + 2n }), // after the as-of
      pay({ ts: asOfTs - 20n, from: seller, authorizer: seller }), // self-payment
      pay({ ts: asOfTs - 30n, value: 0n }), // zero
      pay({ ts: asOfTs - 40n, authorizer: null }), // not authorized
      pay({ ts: asOfTs - 50n, to: other }), // not a catalog seller
      pay({ ts: asOfTs - 60n, addedSeq: 3n }), // added after run 2
      pay({ ts: asOfTs - 70n, addedSeq: 1n, removedSeq: 2n }), // removed by run 2
      pay({ ts: asOfTs - 80n, addedSeq: 1n, removedSeq: 3n }), // removed after run 2
      pay({ ts: asOfTs - 90n, addedSeq: 2n }), // added by run 2
    ];
    await insertTransfers(t.db, transfers);
    const snapshot = await insertCatalog(t.db, [{ listing_id: '1'.padStart(64, '0'), seller_address: seller }]);
    const generation = await computeGeneration(t.db, {
      runSeq: 2n,
      asOf: { number: blockOf(asOfTs), hash: blockHash(blockOf(asOfTs)), timestamp: asOfTs },
      catalogSnapshotId: snapshot,
      sources: [],
      // a 2.0.0 generation: the definition of migration 0003 is 2.x's (3.0.0's: method3.test.ts)
      methodVersion: '2.0.0',
    });
    // The view as migration 0003 wrote it, with the rules spelled out: the reference.
    const { rows: reference } = await sql`
      select g.generation, t.tx_hash, t.log_index, t.block_number, t.block_hash, t.block_timestamp,
             t.from_address as payer, t.to_address as seller_address, t.value,
             t.block_timestamp > g.window_start_ts as in_window,
             -- (3.0.0's columns, migrations 0029 and 0031: null on a 2.0.0 generation)
             null::text as class, null::text as internal_reason
        from generations g
        join (select distinct snapshot_id, seller_address from catalog_listings where verifiability = 'base_usdc') s
          on s.snapshot_id = g.catalog_snapshot_id
        join transfer_facts t
          on t.to_address = s.seller_address and t.block_number <= g.as_of_block
         and t.block_timestamp >= g.market_from_ts and t.block_timestamp <= g.as_of_ts
         and t.added_seq <= g.run_seq and (t.removed_seq is null or t.removed_seq > g.run_seq)
       where t.from_address <> t.to_address and t.value > 0 and t.authorized and g.generation = ${generation}
       order by t.tx_hash`.execute(t.db);
    const { rows: served } = await sql`
      select * from generation_payments where generation = ${generation} order by tx_hash`.execute(t.db);
    expect(served).toEqual(reference);
    // worked out by hand from the list above: payments 1, 2, 3 (out of the window), 12 and 13
    expect(
      served.map((r) => [Number(BigInt((r as { tx_hash: string }).tx_hash)), (r as { in_window: boolean }).in_window]),
    ).toEqual([
      [1, true],
      [2, true],
      [3, false],
      [12, true],
      [13, true],
    ]);
  });
});

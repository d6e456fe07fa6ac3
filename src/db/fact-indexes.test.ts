import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { backends, freshDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { createStagingTables, kyselyRunner, loadFacts, summarizeFactIndexes } from './load-facts.ts';

// Migration 0030: blocks_added_seq is a BRIN index, summarized by fact_indexes_summarize();
// blocks_pkey, blocks_ts and transfers_pkey fill their pages to 100%.

const BLOCK = 50_000_000n;

/** `count` blocks of one payment each from block BLOCK + first, all stored with seq `seq`, through load_facts.sql. */
async function storeBlocks(db: Kysely<any>, first: number, count: number, seq: number) {
  await db.transaction().execute(async (trx) => {
    const run = kyselyRunner(trx);
    await createStagingTables(run);
    const hex = (tag: string) => `'0x' || encode(sha256(convert_to('${tag}' || i, 'UTF8')), 'hex')`;
    await sql
      .raw(
        `insert into x402_load_transfers (tx, li, h, n, ts, f, t, v, added, removed, class, pair_li, nonce)
         select ${hex('tx')}, 1, ${hex('block')}, ${BLOCK} + i, 1767268800 + i, '0x' || repeat('a', 40),
                '0x' || repeat('b', 40), 1000, ${seq}, null, 1, 0, ${hex('nonce')}
           from generate_series(${first}, ${first + count - 1}) i`,
      )
      .execute(trx);
    await loadFacts(run);
  });
}

/** Per partition of `blocks`: its heap pages (8 KB each). */
async function heapPages(db: Kysely<any>): Promise<number[]> {
  const { rows } = await sql<{ pages: string }>`
    select (pg_relation_size(i.inhrelid) / 8192)::text as pages
      from pg_inherits i where i.inhparent = 'blocks'::regclass order by i.inhrelid`.execute(db);
  return rows.map((r) => Number(r.pages));
}

describe.each(backends())('the fact indexes of migration 0030 on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('fact_indexes_summarize summarizes each full range of 128 pages once; scans by seq find exactly the rows', async () => {
    database = await freshDatabase(backend);
    const db = database.db;
    await storeBlocks(db, 0, 25_000, 7);
    await storeBlocks(db, 25_000, 500, 8);
    const pages = await heapPages(db);
    // the rows written fill more than one range (so the test summarizes something)
    expect(pages.reduce((a, b) => a + b, 0)).toBeGreaterThan(256);
    // nothing was summarized since the index was created empty: every full range of 128 pages
    // (pages_per_range's default) is summarized now, the partial last range of each partition is
    // not. (On Postgres, autosummarize may have had autovacuum summarize some meanwhile: at most
    // that many then; the embedded database has no autovacuum.)
    const expected = pages.reduce((sum, p) => sum + Math.floor(p / 128), 0);
    const summarized = await summarizeFactIndexes(db);
    if (backend === 'pglite') expect(summarized).toBe(expected);
    else expect(summarized).toBeLessThanOrEqual(expected);
    expect(await summarizeFactIndexes(db)).toBe(0);

    // the changed-fact scan by seq through the BRIN index, forced: the same rows as by counting
    await db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const { rows } = await sql<{ n: string; lo: string; hi: string }>`
        select count(*)::text as n, min(block_id >> 20)::text as lo, max(block_id >> 20)::text as hi
          from blocks where added_seq > 7 and added_seq <= 8`.execute(trx);
      expect(rows[0]).toEqual({ n: '500', lo: String(BLOCK + 25_000n), hi: String(BLOCK + 25_499n) });
      const { rows: plan } = await sql<{ 'QUERY PLAN': string }>`
        explain select block_id from blocks where added_seq > 7 and added_seq <= 8`.execute(trx);
      expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Bitmap Index Scan on blocks_\w+added_seq/);
    });
  });

  it("new partitions get the parents' index options: BRIN by seq, B-trees filled to 100%", async () => {
    database = await freshDatabase(backend);
    const db = database.db;
    await storeBlocks(db, 0, 10, 1);
    const { rows } = await sql<{ parent: string; am: string; options: string | null }>`
      select p.relname as parent, a.amname as am, array_to_string(c.reloptions, ',') as options
        from pg_inherits i
        join pg_class c on c.oid = i.inhrelid
        join pg_class p on p.oid = i.inhparent
        join pg_am a on a.oid = c.relam
       where p.relnamespace = current_schema()::regnamespace
         and p.relname in ('blocks_pkey', 'blocks_ts', 'blocks_added_seq', 'blocks_removed_seq',
                           'transfers_pkey', 'transfers_to')
       order by 1`.execute(db);
    expect(rows).toEqual([
      { parent: 'blocks_added_seq', am: 'brin', options: 'autosummarize=on' },
      { parent: 'blocks_pkey', am: 'btree', options: 'fillfactor=100' },
      { parent: 'blocks_removed_seq', am: 'btree', options: null },
      { parent: 'blocks_ts', am: 'btree', options: 'fillfactor=100' },
      { parent: 'transfers_pkey', am: 'btree', options: 'fillfactor=100' },
      { parent: 'transfers_to', am: 'btree', options: null },
    ]);
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChunkWrite } from '../../src/sync/store.ts';
import { storeChunk } from '../../src/sync/store.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';

const SELLER = '0x' + '33'.repeat(20);
const BLOCK = { number: 10n, hash: `0x${'4e'.repeat(32)}` as const, timestamp: 1_700_000_020n };

// A chunk of one block and no logs: what it stores is the block (for the reorg walk) and the
// seller's coverage up to it.
const chunk: ChunkWrite = {
  logs: { transfers: [], authorizations: [], blocks: [BLOCK] },
  sellers: [SELLER],
  from: { block: 0n, ts: 0n },
  toBlock: BLOCK.number,
  runSeq: 1n,
};

describe.each(backends())('a chunk whose opening fails ($backend)', ({ backend }) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase(backend);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('error: a failure among the chunk opening statements rolls its transaction back, and the next chunk on the same connections stores', async () => {
    const db = database.db;
    // Without the partitioning row, fact_partitions_cover (run first in the chunk's transaction)
    // fails; on Postgres it is one of the statements sent with `begin` in one round trip.
    const width = (await sql<{ w: string }>`select width_blocks::text as w from fact_partitioning`.execute(db)).rows[0]!
      .w;
    await sql`delete from fact_partitioning`.execute(db);
    await expect(storeChunk(db, chunk)).rejects.toThrow();
    await sql`insert into fact_partitioning (width_blocks) values (${width}::int8)`.execute(db);
    // A connection left inside the failed transaction would refuse every statement from here on.
    const stored = await storeChunk(db, chunk);
    expect(stored).toEqual({ transfers: 0, authorizations: 0 });
    const coverage = await sql<{ to_block: string }>`
      select to_block::text as to_block from seller_coverage where seller_address = ${SELLER}`.execute(db);
    expect(coverage.rows).toEqual([{ to_block: '10' }]);
    const blocks = await sql<{ n: string }>`
      select (block_id >> 20)::text as n from blocks where block_id between 10 * 1048576 and 11 * 1048576 - 1`.execute(
      db,
    );
    expect(blocks.rows).toEqual([{ n: '10' }]);
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from '../../src/chain/index.ts';
import { STAGING_VACUUM_EVERY } from '../../src/db/load-facts.ts';
import type { ChunkWrite } from '../../src/sync/store.ts';
import { storeChunk } from '../../src/sync/store.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';

const SELLER = `0x${'33'.repeat(20)}` as Hex;
const CHUNKS = 3 * STAGING_VACUUM_EVERY;
const PER_CHUNK = 300;
const hex = (n: number, bytes: number) => `0x${n.toString(16).padStart(bytes * 2, '0')}` as Hex;

/** Chunk `c`: PER_CHUNK paid transfers, one a block, in blocks c * 1000 + 1 .. c * 1000 + PER_CHUNK. */
function chunk(c: number): ChunkWrite {
  const blocks = Array.from({ length: PER_CHUNK }, (_, i) => {
    const n = c * 1000 + i + 1;
    return { number: BigInt(n), hash: hex(n, 32), timestamp: 1_700_000_000n + BigInt(2 * n) };
  });
  const transfers = blocks.map((b, i) => ({
    txHash: hex(0x100000 + c * 1000 + i, 32),
    logIndex: 1,
    blockHash: b.hash,
    blockNumber: b.number,
    blockTimestamp: b.timestamp,
    from: hex(0x5000 + i, 20), // the same payers in every chunk: only the first chunk adds them
    to: SELLER,
    value: 1_000n + BigInt(i),
  }));
  const authorizations = transfers.map((t) => ({
    txHash: t.txHash,
    logIndex: 0,
    blockHash: t.blockHash,
    blockNumber: t.blockNumber,
    blockTimestamp: t.blockTimestamp,
    authorizer: t.from,
    nonce: hex(t.logIndex + Number(t.blockNumber), 32),
  }));
  return {
    logs: { transfers, authorizations, blocks },
    sellers: [SELLER],
    from: { block: 1n, ts: 1_700_000_002n },
    toBlock: BigInt(c * 1000 + 999),
    runSeq: 1n,
  };
}

describe.each(backends())('the staging tables across chunks ($backend)', ({ backend }) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase(backend);
  });
  afterAll(async () => {
    await database?.close();
  });

  /** The largest file of a session's x402_stage_transfers (every session of this test's database). */
  const stageBytes = async () => {
    const { rows } = await sql<{ bytes: string | null }>`
      select max(pg_relation_size(c.oid))::text as bytes
        from pg_class c where c.relname = 'x402_stage_transfers' and c.relpersistence = 't'`.execute(database.db);
    return Number(rows[0]?.bytes ?? 0);
  };

  it('behavior: chunks stored one after another each store their own rows once (a chunk never loads the rows of the one before), and the files keep their pages at commit without growing with the chunks', async () => {
    const db = database.db;
    const sizes: number[] = [];
    for (let c = 0; c < CHUNKS; c++) {
      const stored = await storeChunk(db, chunk(c));
      expect(stored, `chunk ${c}`).toEqual({ transfers: PER_CHUNK, authorizations: PER_CHUNK });
      sizes.push(await stageBytes());
    }
    const { rows } = await sql<{ n: string; paid: string; blocks: string }>`
      select count(*)::text as n, count(*) filter (where class = 1)::text as paid,
             count(distinct block_id)::text as blocks from transfers`.execute(db);
    expect(rows[0]).toEqual({
      n: String(CHUNKS * PER_CHUNK),
      paid: String(CHUNKS * PER_CHUNK),
      blocks: String(CHUNKS * PER_CHUNK),
    });
    // Not truncated at commit: the first chunk's pages are still there after it.
    const one = sizes[0]!;
    expect(one).toBeGreaterThan(0);
    // Reused: after CHUNKS chunks a session's file holds a few chunks' pages (the rows of the
    // chunks since its last vacuum, and the last chunk's), not CHUNKS chunks'.
    expect(Math.max(...sizes)).toBeLessThanOrEqual((STAGING_VACUUM_EVERY + 1) * one);
  });
});

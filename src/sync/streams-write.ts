import { sql, type Kysely, type Transaction } from 'kysely';
import type { BlockRecord } from '../chain/index.ts';
import type { Schema } from '../db/index.ts';
import { coverFactPartitions, createStagingTables, kyselyRunner, loadFacts } from '../db/load-facts.ts';
import { TallyError } from '../lib/errors.ts';

/**
 * What the writers of method 3.0.0's streams (./streams-store.ts) share: a chunk's transaction,
 * the block versions it stores, and the check of a value the store cannot hold.
 */

/** The live block versions a chunk needs, stored through sql/store/load_facts.sql. */
export interface StreamBlocks {
  /** Blocks whose rows go into this run's version (a claim's block: batch_claims.block_id). */
  facts: readonly BlockRecord[];
  /**
   * Blocks stored only for the reorg walk (src/sync/reorg.ts), when no live version is: the
   * chunk's last block. Every row a stream stores lies at or below such a block, so a reorg that
   * replaces the row's block replaces a stored block too, and the walk finds it.
   */
  marks: readonly BlockRecord[];
}

/** Values as text, for unnest's int8[] parameters. */
export const texts = (values: readonly (string | number | bigint)[]) => values.map(String);

/** Stores a chunk's block versions (one mark alone by markBlock, else through load_facts.sql). */
export async function storeBlocks(trx: Transaction<Schema>, blocks: StreamBlocks, runSeq: bigint): Promise<void> {
  if (blocks.facts.length === 0 && blocks.marks.length === 1) return markBlock(trx, blocks.marks[0]!, runSeq);
  if (blocks.facts.length === 0 && blocks.marks.length === 0) return;
  const run = kyselyRunner(trx);
  await createStagingTables(run);
  const seq = runSeq.toString();
  const facts = blocks.facts;
  await sql`
    insert into x402_load_blocks (n, h, ts, added, removed)
    select u.n, u.h, u.ts, ${seq}::int8, null
      from unnest(${texts(facts.map((b) => b.number))}::int8[], ${facts.map((b) => b.hash)}::text[],
                  ${texts(facts.map((b) => b.timestamp))}::int8[]) as u(n, h, ts)`.execute(trx);
  const marks = blocks.marks;
  await sql`
    insert into x402_load_blocks (n, h, ts, added, removed)
    select u.n, u.h, u.ts, ${seq}::int8, null
      from unnest(${texts(marks.map((b) => b.number))}::int8[], ${marks.map((b) => b.hash)}::text[],
                  ${texts(marks.map((b) => b.timestamp))}::int8[]) as u(n, h, ts)
     where not exists (select 1 from blocks v
                        where v.block_id between u.n * 1048576 and u.n * 1048576 + 1048575
                          and v.block_hash = decode(substr(u.h, 3), 'hex')
                          and v.removed_seq is null)`.execute(trx);
  await loadFacts(run);
}

/**
 * One block stored for the reorg walk only (most chunks of these streams hold no log): a version
 * stamped with this run's seq unless a live one with the same hash is stored, numbered as
 * load_facts.sql numbers versions (the highest stored version + 1). One statement instead of
 * the staging tables and load_facts.sql's four, for the ~80 empty chunks of a 20k-payment whole
 * run (docs/benchmarks.md, "Method 3.0.0's streams in a whole run": its effect on the ratio was
 * within that machine's noise).
 */
async function markBlock(trx: Transaction<Schema>, block: BlockRecord, runSeq: bigint): Promise<void> {
  const n = block.number.toString();
  await sql`
    insert into blocks (block_id, block_timestamp, added_seq, removed_seq, block_hash)
    select block_version_id(${n}::int8,
             coalesce((select max(b.block_id) - ${n}::int8 * 1048576 from blocks b
                        where b.block_id between ${n}::int8 * 1048576 and ${n}::int8 * 1048576 + 1048575), -1) + 1),
           ${block.timestamp.toString()}::int8, ${runSeq.toString()}::int8, null,
           decode(substr(${block.hash}, 3), 'hex')
     where not exists (select 1 from blocks v
                        where v.block_id between ${n}::int8 * 1048576 and ${n}::int8 * 1048576 + 1048575
                          and v.block_hash = decode(substr(${block.hash}, 3), 'hex')
                          and v.removed_seq is null)
        on conflict (block_id) do nothing`.execute(trx);
}

/** Opens the chunk's transaction, creating the fact partitions its blocks need first (see coverFactPartitions). */
export function inChunk<T>(
  db: Kysely<Schema>,
  blocks: StreamBlocks,
  work: (trx: Transaction<Schema>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await coverFactPartitions(
      kyselyRunner(trx),
      [...blocks.facts, ...blocks.marks].map((b) => b.number),
    );
    return work(trx);
  });
}

const MAX_INT8 = 2n ** 63n - 1n;

/** A value the store cannot hold (int8) and the real USDC cannot have: the node serves another chain or token. */
export function refuseValue(
  what: string,
  at: { txHash: string; logIndex: number; blockNumber: bigint },
  value: bigint,
) {
  if (value > MAX_INT8)
    throw new TallyError(
      `a ${what} of ${value} micro-USDC is more than the store holds (2^63 - 1): USDC's whole supply is far below; ` +
        'check that the node serves Base and that the USDC contract is right; nothing of its chunk was stored',
      { details: { log: `${at.txHash}:${at.logIndex}`, value: value.toString(), block: at.blockNumber.toString() } },
    );
}

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { TallyError, TemporaryError } from '../lib/errors.ts';
import { sqlDir } from '../lib/paths.ts';
import { createStagingTables, kyselyRunner, loadFacts, vacuumStagingTables } from './load-facts.ts';

/**
 * Step B of the move to the compact fact layout (docs/data-model.md, "Migration: in place,
 * resumable"): copies the rows of usdc_transfers, usdc_authorizations and chain_blocks into
 * addresses, blocks and transfers, between migration 0025 (the new tables and the copy's state
 * row, `compact_copy`) and migration 0026 (the check, the switch of the views, the drop of the old
 * tables). Only `migrate` runs it; `run` refuses to start while it is pending (src/db/migrate.ts).
 */

/** The migration that needs the copy done first (its name, not its number: numbers move at merges). */
export const COPY_BEFORE_MIGRATION = 'compact_switch';

/** Default most transfers per batch: one transaction each. */
const BATCH_TRANSFERS = 50_000;

// The run lock of src/run/lock.ts (same two keys): an older `run` still writing the old tables
// holds it, and no run may start while the copy holds it.
const RUN_LOCK_KEY = 402_000_002;

export interface CopyProgress {
  /** Block numbers below this are copied. */
  nextBlock: bigint;
  /** The copy is complete when nextBlock reaches this. */
  topBlock: bigint;
  /** Transfers copied by this batch. */
  transfers: number;
}

export interface CopyOptions {
  /** Most transfers per batch (a block's transfers are never split); default 50,000. */
  batchTransfers?: number;
  /** Called after each committed batch (progress; tests interrupt the copy here). */
  onBatch?: (progress: CopyProgress) => void | Promise<void>;
}

/** Whether migration 0025 is applied and old rows are still to copy. */
export async function compactCopyPending(db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ pending: boolean }>`
    select to_regclass('compact_copy') is not null as pending`.execute(db);
  if (!rows[0]?.pending) return false;
  try {
    const state = await sql<{ pending: boolean }>`
      select next_block < top_block as pending from compact_copy`.execute(db);
    return state.rows[0]?.pending ?? false;
  } catch (error) {
    // another runner's later migration dropped the table between the two statements (two
    // `migrate` at once on a new database): nothing is left to copy
    if ((error as { code?: string }).code === '42P01') return false;
    throw error;
  }
}

/**
 * Copies the old fact rows of block numbers [next_block, top_block) in ascending batches, one
 * transaction each: the batch's addresses, block versions (one per distinct number, hash, time
 * and seqs among chain_blocks and the transfers' own; numbered in a fixed order, so a rerun gives
 * the same ids) and transfers (rule 3 from `authorized`; the pairing AuthorizationUsed's log
 * index and nonce when one is stored), and the state row moved past them, all committed
 * together. Killed at any point, the open batch rolls back and a rerun resumes at the state row:
 * nothing lost, nothing doubled. Holds the run lock for the whole copy (a TemporaryError, exit 75,
 * when a run holds it). A value of 2^63 or more stops it (exit 1) naming `tx_hash:log_index`,
 * the state unmoved. Returns the batches and transfers copied.
 */
export async function copyFactsToCompact(
  db: Kysely<any>,
  options: CopyOptions = {},
): Promise<{ batches: number; transfers: number }> {
  const batchTransfers = options.batchTransfers ?? BATCH_TRANSFERS;
  if (!Number.isInteger(batchTransfers) || batchTransfers < 1) throw new RangeError('batchTransfers must be >= 1');
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ locked: boolean }>`
      select pg_try_advisory_lock(${RUN_LOCK_KEY}, hashtext(current_schema())) as locked`.execute(conn);
    if (!rows[0]?.locked)
      throw new TemporaryError('a run holds the lock on this database: run `x402-tally migrate` again when it ends');
    try {
      // Indexes for the batches' range reads; dropped with the old tables by migration 0026.
      await sql`create index if not exists usdc_transfers_copy on usdc_transfers (block_number)`.execute(conn);
      await sql`create index if not exists chain_blocks_copy on chain_blocks (block_number)`.execute(conn);
      await sql`create index if not exists usdc_authorizations_copy on usdc_authorizations (block_number)`.execute(
        conn,
      );
      let batches = 0;
      let transfers = 0;
      for (;;) {
        const batch = await conn.transaction().execute((trx) => copyBatch(trx, batchTransfers));
        if (batch === undefined) break;
        // (the rows this batch's createStagingTables deleted: their pages reused by the next batches)
        await vacuumStagingTables(kyselyRunner(conn));
        batches++;
        transfers += batch.transfers;
        await options.onBatch?.(batch);
      }
      return { batches, transfers };
    } finally {
      await sql`select pg_advisory_unlock(${RUN_LOCK_KEY}, hashtext(current_schema()))`.execute(conn);
    }
  });
}

// sql/store/load_facts.sql writes the layout of migration 0051 (no blocks.block_number; versions
// numbered by block_version_id), and this copy runs at migration 0025's: for the batch's
// statements a trigger fills block_number (block_id >> 20, what the check of migration 0025 wants)
// and block_version_id is defined as 0051 defines it (its text read from that migration, so the
// rule stands once); both are dropped before the batch commits, so the migrations after 0025 find
// the schema they were written for.
let before0051: string | undefined;
function beforeMigration0051(): string {
  if (before0051) return before0051;
  const m0051 = readFileSync(path.join(sqlDir, 'migrations', '0051_slim_blocks.sql'), 'utf8');
  const start = m0051.indexOf('create function block_version_id');
  const end = m0051.indexOf('end $$;', start);
  if (start < 0 || end < 0) throw new Error('migration 0051 no longer defines block_version_id as the copy expects');
  before0051 = `
  ${m0051.slice(start, end + 'end $$;'.length)}
  create function compact_copy_block_number() returns trigger language plpgsql as $$
  begin
    new.block_number := new.block_id >> 20;
    return new;
  end $$;
  create trigger compact_copy_block_number before insert on blocks
    for each row execute function compact_copy_block_number()`;
  return before0051;
}
const AFTER_0051 = `
  drop trigger compact_copy_block_number on blocks;
  drop function compact_copy_block_number();
  drop function block_version_id(int8, int8)`;

/** One batch of the copy, in its transaction; undefined when nothing was left to copy. */
async function copyBatch(trx: Kysely<any>, batchTransfers: number): Promise<CopyProgress | undefined> {
  const state = await sql<{ next_block: bigint; top_block: bigint }>`
    select next_block, top_block from compact_copy for update`.execute(trx);
  const { next_block: lo, top_block: top } = state.rows[0]!;
  if (BigInt(lo) >= BigInt(top)) return undefined;
  // The batch ends before the block of the (batchTransfers + 1)-th transfer from lo (after lo's
  // own block at least), or at the top.
  const cut = await sql<{ n: bigint }>`
    select block_number as n from usdc_transfers
     where block_number >= ${lo} and block_number < ${top}
     order by block_number offset ${batchTransfers} limit 1`.execute(trx);
  const at = cut.rows[0]?.n;
  const hi = at === undefined ? BigInt(top) : BigInt(at) > BigInt(lo) ? BigInt(at) : BigInt(lo) + 1n;

  const run = kyselyRunner(trx);
  await createStagingTables(run);
  await sql`
    insert into x402_load_blocks (n, h, ts, added, removed)
    select block_number, block_hash, block_timestamp, added_seq, removed_seq
      from chain_blocks
     where block_number >= ${lo} and block_number < ${hi.toString()}`.execute(trx);
  // The pairing AuthorizationUsed: the first of the transaction by the transfer's payer.
  await sql`
    insert into x402_load_transfers (tx, li, h, n, ts, f, t, v, added, removed, class, pair_li, nonce)
    select t.tx_hash, t.log_index, t.block_hash, t.block_number, t.block_timestamp, t.from_address,
           t.to_address, t.value, t.added_seq, t.removed_seq, case when t.authorized then 1 else 0 end,
           a.log_index, a.nonce
      from usdc_transfers t
      left join (select distinct on (tx_hash, block_hash, authorizer) tx_hash, block_hash, authorizer, log_index, nonce
                   from usdc_authorizations
                  where block_number >= ${lo} and block_number < ${hi.toString()}
                  order by tx_hash, block_hash, authorizer, log_index) a
        on t.authorized and a.tx_hash = t.tx_hash and a.block_hash = t.block_hash and a.authorizer = t.from_address
     where t.block_number >= ${lo} and t.block_number < ${hi.toString()}`.execute(trx);
  const big = await sql<{ tx: string; li: number; v: string }>`
    select tx, li, v::text as v from x402_load_transfers where v >= 9223372036854775808 order by n, li limit 1`.execute(
    trx,
  );
  const bad = big.rows[0];
  if (bad)
    throw new TallyError(
      `the stored USDC transfer ${bad.tx}:${bad.li} has value ${bad.v}, 2^63 or more, which no USDC amount reaches and ` +
        'the compact layout cannot hold: delete its row from usdc_transfers (or restore the node that served it) and run migrate again; ' +
        'the copy stopped before its batch',
      { details: { transfer: `${bad.tx}:${bad.li}`, value: bad.v } },
    );
  await sql.raw(beforeMigration0051()).execute(trx);
  const stored = await loadFacts(run, { beforePartitions: true }); // (this copy runs before migration 0027)
  await sql.raw(AFTER_0051).execute(trx);
  await sql`update compact_copy set next_block = ${hi.toString()}`.execute(trx);
  return { nextBlock: hi, topBlock: BigInt(top), transfers: stored.transfers };
}

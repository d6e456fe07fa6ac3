import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { TemporaryError } from '../lib/errors.ts';
import { sqlDir } from '../lib/paths.ts';

/** Runs one SQL statement with positional parameters: a Kysely transaction, or a pg client. */
export type RunStatement = (text: string, params?: readonly unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/** The statement runner of a Kysely connection or transaction. */
export function kyselyRunner(db: Kysely<any>): RunStatement {
  return async (text, params = []) => {
    const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, [...params]));
    return { rows };
  };
}

/**
 * A file of sql/store without its whole-line comments. The comments document the SQL here; the
 * server need not receive them, and must not see only them: pg_stat_activity shows the first
 * 1 kB of a running statement (track_activity_query_size), and store_chunk.sql's first 1.2 kB were
 * comments, so an operator watching a slow sync (or bench/indexer.ts' sampler) saw no SQL of it.
 */
export function storeSql(file: string): string {
  return readFileSync(path.join(sqlDir, 'store', file), 'utf8')
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n');
}

// sql/store/stage.sql creates the session's staging and load tables (temporary) and empties them;
// sql/store/load_facts.sql moves the load tables into the compact fact tables.
// (Files of several statements, each ending a line with `;`, and no `;` at a line end inside one.)
const statementsOf = (file: string) =>
  storeSql(file)
    .split(/;\n/)
    .filter((s) => s.trim() !== '');
const STAGE = statementsOf('stage.sql');
const LOAD_FACTS = statementsOf('load_facts.sql');
// Its first statement creates the partitions the load tables' rows need (migration 0027).
const [COVER_PARTITIONS, ...LOAD_ROWS] = LOAD_FACTS;
if (!COVER_PARTITIONS?.includes('fact_partitions_cover('))
  throw new Error('sql/store/load_facts.sql must begin with the statement that creates the partitions');

/**
 * Creates this session's staging and load tables when missing, and empties them (sql/store/stage.sql).
 * Every writer runs it first in its transaction: the tables keep their rows past a commit.
 */
export async function createStagingTables(run: RunStatement): Promise<void> {
  for (const statement of STAGE) await run(statement);
}

/**
 * Makes the pages of the staging tables' deleted rows reusable (VACUUM, which records their free
 * space), without giving them back (`truncate false`: no file truncation, the cost that `on commit
 * delete rows` paid at every commit). Run it on the session that staged, outside a transaction,
 * every few transactions that staged (the sync: src/sync/store.ts; the copy of the old tables:
 * src/db/compact-copy.ts): in between, each transaction's rows take new pages, so the files grow to
 * a few chunks' rows and stay there. A session that never ran createStagingTables has no tables to
 * vacuum (an error).
 */
const VACUUM_STAGING =
  'vacuum (truncate false, process_toast false) x402_stage_blocks, x402_stage_transfers, ' +
  'x402_stage_authorizations, x402_load_blocks, x402_load_transfers';
/** Transactions that staged on a session between two vacuumStagingTables. */
export const STAGING_VACUUM_EVERY = 4;
export async function vacuumStagingTables(run: RunStatement): Promise<void> {
  await run(VACUUM_STAGING);
}

/**
 * Creates the partitions of `blocks` and `transfers` that hold these block numbers, when missing
 * (the function `fact_partitions_cover` of migration 0027). Run it FIRST in a transaction that
 * then stores facts, before the transaction reads or writes a fact table: creating a partition
 * locks its parent exclusively until commit, and two transactions that each held a lock on the
 * parent while waiting for that lock would deadlock. When every partition exists it is one catalog
 * lookup per distinct range, and takes no lock.
 */
export async function coverFactPartitions(
  run: RunStatement,
  blockNumbers: readonly (bigint | number | string)[],
): Promise<void> {
  if (blockNumbers.length === 0) return;
  const ranges = [...new Set(blockNumbers.map((n) => n.toString()))];
  await run('select fact_partitions_cover($1::int8[])', [ranges]);
}

/**
 * Moves the rows of `x402_load_blocks` and `x402_load_transfers` into `addresses`, `blocks` and
 * `transfers` (sql/store/load_facts.sql), in the caller's transaction, first creating the
 * partitions they need (see coverFactPartitions; `beforePartitions`: the copy of migration
 * 0025's rows, which runs before migration 0027 made the tables partitioned). A block version with the
 * same number, hash, time and seqs is reused, else added; safe against concurrent writers of the
 * same versions. Returns the transfers stored and how many of them are paired (class 1). Throws
 * a TemporaryError, and the caller's transaction must roll back, when a transfer found no block
 * version (a concurrent writer stored another hash at its block number: the chain moved under
 * the run; the next run reads it again).
 */
export async function loadFacts(
  run: RunStatement,
  options: { beforePartitions?: boolean } = {},
): Promise<{ transfers: number; authorized: number }> {
  let last: Record<string, unknown> | undefined;
  if (!options.beforePartitions) await run(COVER_PARTITIONS!);
  for (const statement of LOAD_ROWS) last = (await run(statement)).rows[0];
  const unplaced = Number(last?.unplaced ?? 0);
  if (unplaced > 0)
    throw new TemporaryError(
      `${unplaced} transfers found no stored version of their block: another writer stored a different block at the same number; run again`,
      { details: { unplaced } },
    );
  return { transfers: Number(last?.transfers ?? 0), authorized: Number(last?.authorized ?? 0) };
}

/**
 * Summarizes the page ranges of the BRIN index `blocks_added_seq` (migration 0030) that filled
 * since its last summary, on every partition; returns how many. A BRIN index has no entry for an
 * unsummarized range, so every scan by seq reads all of its pages: on Postgres autovacuum
 * summarizes a range once inserts move past it (`autosummarize`), but the embedded database runs
 * no autovacuum, and without this its changed-fact scans would read every block stored since the
 * partition was created. The sync calls it after storing. Cheap when nothing is pending; never
 * waits long for a lock (a partition autovacuum holds is left to autovacuum).
 */
export async function summarizeFactIndexes(db: Kysely<any>): Promise<number> {
  const { rows } = await sql<{ n: number }>`select fact_indexes_summarize() as n`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** One transfer in the old layout's text form, as tests and benchmarks write facts. */
export interface FactRow {
  tx: string;
  logIndex: number;
  blockHash: string;
  block: bigint;
  ts: bigint;
  from: string;
  to: string;
  value: bigint;
  addedSeq: bigint;
  removedSeq: bigint | null;
  /** Rule 3: paired with an AuthorizationUsed by `from` in its transaction. */
  authorized: boolean;
  /** The pairing AuthorizationUsed's log index and nonce, when authorized. */
  pairLogIndex?: number | null;
  nonce?: string | null;
}

/**
 * Writes transfers given in the old layout's form (text hashes and addresses, their own seqs)
 * into the compact tables, in one transaction: for tests and benchmarks that write facts by hand.
 * Each transfer goes into the block version of its (block, hash, time, seqs). Not idempotent: a
 * transfer written twice fails on the primary key.
 */
export async function writeFactRows(db: Kysely<any>, rows: readonly FactRow[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: FactRow) => T) => rows.map(f);
  await db.transaction().execute(async (trx) => {
    const run = kyselyRunner(trx);
    await coverFactPartitions(
      run,
      rows.map((r) => r.block),
    );
    await createStagingTables(run);
    await sql`
      insert into x402_load_transfers (tx, li, h, n, ts, f, t, v, added, removed, class, pair_li, nonce)
      select * from unnest(${col((r) => r.tx)}::text[], ${col((r) => r.logIndex)}::int4[],
                           ${col((r) => r.blockHash)}::text[], ${col((r) => r.block.toString())}::int8[],
                           ${col((r) => r.ts.toString())}::int8[], ${col((r) => r.from)}::text[],
                           ${col((r) => r.to)}::text[], ${col((r) => r.value.toString())}::numeric[],
                           ${col((r) => r.addedSeq.toString())}::int8[],
                           ${col((r) => (r.removedSeq === null ? null : r.removedSeq.toString()))}::int8[],
                           ${col((r) => (r.authorized ? 1 : 0))}::int2[],
                           ${col((r) => (r.authorized ? (r.pairLogIndex ?? null) : null))}::int4[],
                           ${col((r) => (r.authorized ? (r.nonce ?? null) : null))}::text[])`.execute(trx);
    await loadFacts(run);
  });
}

import { sql, type Kysely } from 'kysely';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { BlockRecord, PaymentLogs } from '../chain/index.ts';
import { pgPoolOf, type Schema } from '../db/index.ts';
import {
  coverFactPartitions,
  createStagingTables,
  kyselyRunner,
  loadFacts,
  STAGING_VACUUM_EVERY,
  storeSql,
  vacuumStagingTables,
  type RunStatement,
} from '../db/load-facts.ts';
import { TallyError } from '../lib/errors.ts';

export interface Coverage {
  fromBlock: bigint;
  fromTs: bigint;
  toBlock: bigint;
}

/** The stored coverage of these sellers (lowercase), by seller. */
export async function loadCoverage(db: Kysely<Schema>, sellers: readonly string[]): Promise<Map<string, Coverage>> {
  const out = new Map<string, Coverage>();
  if (sellers.length === 0) return out;
  const { rows } = await sql<{ seller_address: string; from_block: bigint; from_ts: bigint; to_block: bigint }>`
    select seller_address, from_block, from_ts, to_block
      from seller_coverage
     where seller_address = any(${[...sellers]}::text[])`.execute(db);
  for (const r of rows)
    out.set(r.seller_address, {
      fromBlock: BigInt(r.from_block),
      fromTs: BigInt(r.from_ts),
      toBlock: BigInt(r.to_block),
    });
  return out;
}

/** Forgets the coverage of these sellers (they will be backfilled again). Logs stay. */
export async function deleteCoverage(db: Kysely<Schema>, sellers: readonly string[]): Promise<void> {
  if (sellers.length === 0) return;
  await sql`delete from seller_coverage where seller_address = any(${[...sellers]}::text[])`.execute(db);
}

/**
 * Creates, in a transaction of its own, every fact partition that blocks `from`..`to` fall in
 * (fact_partitions_cover, one block number per partition width and the last block). The sync
 * calls it before its seller batches start, so that no chunk transaction creates one: a chunk
 * that creates a partition holds the creation's advisory lock until it commits, and every other
 * batch's chunk waits for that lock meanwhile (bench/indexer.ts at 200k: 11-66 samples of
 * `Lock:advisory` on fact_partitions_cover at the start of the sync). The chunks still cover their
 * own blocks (a no-op then, taking no lock). Creates the partitions the chunks would create: each
 * chunk stores its last block, and a chunk spans fewer blocks than a partition.
 */
export async function coverBlockRange(db: Kysely<Schema>, from: bigint, to: bigint): Promise<void> {
  if (from > to) return;
  await sql`
    select fact_partitions_cover(array(
             select generate_series(${str(from)}::int8, ${str(to)}::int8,
                                    (select width_blocks from fact_partitioning))
             union all select ${str(to)}::int8))`.execute(db);
}

export interface ChunkWrite {
  logs: PaymentLogs;
  /** The sellers whose coverage this chunk extends, lowercase. */
  sellers: readonly string[];
  /** Coverage start for sellers that have none yet. */
  from: { block: bigint; ts: bigint };
  /** The chunk's last block: the sellers' coverage reaches at least here afterwards. */
  toBlock: bigint;
  runSeq: bigint;
}

const str = (v: bigint | number) => v.toString();

/** The first value a fact cannot hold: USDC values are stored as `int8` (docs/data-model.md). */
const MAX_STORED_VALUE_EXCLUSIVE = 2n ** 63n;

/**
 * Refuses a chunk holding a transfer whose value is 2^63 or more, before anything is staged
 * (exit 1, naming the transfer as `tx_hash:log_index`). The compact fact layout stores USDC
 * values as `int8` (docs/data-model.md, "The compact layout"); USDC's whole supply is below
 * 10^17 micro-USDC, so such a value comes only from a broken node or a contract that is not USDC,
 * and storing it would make every sum over it wrong. Not temporary: running again reads the same log.
 */
function refuseUnstorableValues(transfers: PaymentLogs['transfers']): void {
  for (const t of transfers)
    if (t.value >= MAX_STORED_VALUE_EXCLUSIVE)
      throw new TallyError(
        `the USDC transfer ${t.txHash}:${t.logIndex} has value ${t.value}, 2^63 or more, which no USDC amount reaches: ` +
          'check that the node serves Base and that the USDC contract is right; nothing of its chunk was stored',
        {
          details: {
            transfer: `${t.txHash}:${t.logIndex}`,
            value: t.value.toString(),
            block: t.blockNumber.toString(),
          },
        },
      );
}

// The chunk's SQL (sql/store): the statement that picks what of a staged chunk is new, decides
// rule 3 of a verified payment and advances coverage; then load_facts.sql stores it (src/db/load-facts.ts).
// Both backends run the same.
const STORE_CHUNK = storeSql('store_chunk.sql');

// Settings of a chunk's transaction only (`set_config(..., true)` is `set local`; one round trip):
// - No JIT. The staging tables have no statistics, so store_chunk.sql's per-transfer probe is
//   costed at ~1.4M, over jit_above_cost and the inlining and optimization thresholds: Postgres 15
//   then compiled ~60 functions with LLVM for each chunk (1-2 s of server CPU each, auto_explain on
//   the 200k-payment bench) to run a statement that reads ~6,000 buffers. PGlite has no JIT.
// - No wait for the WAL flush at commit. A chunk and its coverage commit together, so a chunk whose
//   commit a crash of the database server loses is also missing from the coverage, and the next run
//   fetches it again; the publish transaction (synchronous) flushes every chunk's WAL before a
//   generation can be served. Saves one fdatasync per chunk (1-3.6 ms on the development machine's
//   disk, pg_test_fsync; 1,570 chunks at 1M payments). Never corrupts: see the Postgres manual,
//   "Asynchronous Commit".
const CHUNK_SETTINGS = `select set_config('jit', 'off', true), set_config('synchronous_commit', 'off', true)`;

/**
 * Part 1 (store_chunk.sql) and part 2 (load_facts.sql) of storing a staged chunk, in its
 * transaction (whose settings are CHUNK_SETTINGS, applied by the caller).
 */
async function storeStaged(run: RunStatement, write: ChunkWrite, sellers: string[]) {
  await run(STORE_CHUNK, [str(write.runSeq), sellers, str(write.from.block), str(write.from.ts), str(write.toBlock)]);
  const stored = await loadFacts(run);
  return { transfers: stored.transfers, authorizations: stored.authorized };
}

// Lock order for concurrent chunks: (block_number, block_hash) and (tx_hash, log_index,
// block_hash), compared field by field (hashes are fixed-length lowercase hex, so string order is
// byte order) instead of through concatenated keys, which cost a string per comparison.
const byBlock = (a: BlockRecord, b: BlockRecord) =>
  a.number < b.number ? -1 : a.number > b.number ? 1 : a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0;
const byLog = (a: { txHash: string; logIndex: number; blockHash: string }, b: typeof a) =>
  a.txHash < b.txHash
    ? -1
    : a.txHash > b.txHash
      ? 1
      : a.logIndex - b.logIndex || (a.blockHash < b.blockHash ? -1 : a.blockHash > b.blockHash ? 1 : 0);

// Every stored value is 0x hex or a decimal integer (validated when read from the RPC), so a
// Postgres array literal needs no quoting: built here and cast with `::text::T[]`, it spares the
// driver's per-element escaping (the largest client cost of a chunk write). The one check over the
// joined text keeps anything else (a quote, a brace, a comma inside a value) from reaching SQL.
const UNSAFE_ELEMENT = /[^0-9a-zA-Z,]/; // searching for a bad character: 1.5x faster than matching all
function arrayLiteral<T>(rows: readonly T[], value: (row: T) => string | number | bigint): string {
  const parts = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) parts[i] = String(value(rows[i]!));
  const text = parts.join(',');
  if (UNSAFE_ELEMENT.test(text) || parts.some((p) => p.length === 0))
    throw new TypeError('a stored value is not hex or a decimal integer');
  return `{${text}}`;
}

/** The block numbers a chunk may store facts in: its blocks' and its transfers'. */
const chunkBlockNumbers = (blocks: readonly BlockRecord[], transfers: PaymentLogs['transfers']) => [
  ...blocks.map((b) => b.number),
  ...transfers.map((t) => t.blockNumber),
];

/**
 * Stores one completed chunk in ONE transaction: first the partitions of the fact tables it needs
 * are created (coverFactPartitions, before anything else locks them), then its blocks, transfers
 * and authorizations are staged (COPY on Postgres, unnest on PGlite), then
 * sql/store/store_chunk.sql picks what is new (a transfer already stored is left as is), decides
 * rule 3, and advances the sellers' coverage,
 * and sql/store/load_facts.sql stores the new transfers and block versions. A run killed before it
 * leaves nothing of the chunk; after it, everything, so a restart resumes at toBlock + 1 without
 * skipping or counting a log twice. Rows are sorted by key so that concurrent chunks take index
 * locks in one order (no deadlock). Safe to re-run. Returns how many transfers were new, and how
 * many of those are paired with an AuthorizationUsed (rule 3).
 */
export async function storeChunk(
  db: Kysely<Schema>,
  write: ChunkWrite,
): Promise<{ transfers: number; authorizations: number }> {
  refuseUnstorableValues(write.logs.transfers);
  const blocks = [...write.logs.blocks].sort(byBlock);
  const transfers = [...write.logs.transfers].sort(byLog);
  const auths = [...write.logs.authorizations].sort(byLog);
  const sellers = [...write.sellers].sort();
  const pool = pgPoolOf(db);
  if (pool) return storeChunkByCopy(pool, write, { blocks, transfers, auths, sellers });
  // PGlite (no COPY): the staging tables are filled from arrays, in the same transaction.
  const b = (value: (x: BlockRecord) => string | bigint) => arrayLiteral(blocks, value);
  const t = (value: (x: (typeof transfers)[number]) => string | number | bigint) => arrayLiteral(transfers, value);
  const a = (value: (x: (typeof auths)[number]) => string | number | bigint) => arrayLiteral(auths, value);
  const stored = await db.transaction().execute(async (trx) => {
    const run = kyselyRunner(trx);
    await coverFactPartitions(run, chunkBlockNumbers(blocks, transfers));
    await run(CHUNK_SETTINGS);
    await createStagingTables(run);
    await sql`
      insert into x402_stage_blocks
      select * from unnest(${b((x) => x.number)}::text::int8[], ${b((x) => x.hash)}::text::text[],
                           ${b((x) => x.timestamp)}::text::int8[])`.execute(trx);
    await sql`
      insert into x402_stage_transfers
      select * from unnest(${t((x) => x.txHash)}::text::text[], ${t((x) => x.logIndex)}::text::int4[],
                           ${t((x) => x.blockHash)}::text::text[], ${t((x) => x.blockNumber)}::text::int8[],
                           ${t((x) => x.blockTimestamp)}::text::int8[], ${t((x) => x.from)}::text::text[],
                           ${t((x) => x.to)}::text::text[], ${t((x) => x.value)}::text::numeric[])`.execute(trx);
    await sql`
      insert into x402_stage_authorizations
      select * from unnest(${a((x) => x.txHash)}::text::text[], ${a((x) => x.logIndex)}::text::int4[],
                           ${a((x) => x.blockHash)}::text::text[], ${a((x) => x.blockNumber)}::text::int8[],
                           ${a((x) => x.authorizer)}::text::text[], ${a((x) => x.nonce)}::text::text[])`.execute(trx);
    return storeStaged(run, write, sellers);
  });
  // (PGlite has one session, and the dialect runs this after any open transaction ends)
  if (stagedOnSession(db)) await vacuumStagingTables(kyselyRunner(db));
  return stored;
}

// Chunks staged per session (a pool's connection, or PGlite's one session) since its last
// vacuumStagingTables: the staging tables' deleted rows are made reusable every
// STAGING_VACUUM_EVERY chunks (sql/store/stage.sql).
const stagedChunks = new WeakMap<object, number>();
function stagedOnSession(session: object): boolean {
  const n = (stagedChunks.get(session) ?? 0) + 1;
  stagedChunks.set(session, n % STAGING_VACUUM_EVERY);
  return n % STAGING_VACUUM_EVERY === 0;
}

// Creates this session's staging tables when missing (sql/store/stage.sql; one text of several statements).
const STAGE_SQL = storeSql('stage.sql');

/**
 * A Postgres chunk's first statements, sent as ONE simple query (several statements, no
 * parameters: the block numbers are decimal integers, inlined as an array literal): `begin`, the
 * fact partitions the chunk needs (first, before anything locks a fact table: see
 * coverFactPartitions), the transaction's settings (CHUNK_SETTINGS) and the staging tables. They
 * were eight round trips of a chunk's seventeen; on a loaded machine each costs the wait for the
 * server's and this process's turn on a core, not the work (bench/indexer.ts --profile-statements:
 * `begin` alone averaged 7.8 ms a chunk at 200k, load 1-5).
 */
function openChunkSql(blockNumbers: readonly bigint[]): string {
  const statements = ['begin'];
  if (blockNumbers.length > 0) {
    const numbers = [...new Set(blockNumbers.map(String))];
    // (arrayLiteral refuses anything but digits, letters and commas: nothing that ends the quotes)
    statements.push(`select fact_partitions_cover('${arrayLiteral(numbers, (n) => n)}'::int8[])`);
  }
  statements.push(CHUNK_SETTINGS, STAGE_SQL);
  return statements.join(';\n');
}

// Postgres: the rows go through COPY into the staging tables, then sql/store/store_chunk.sql in the
// same transaction, as PGlite does from arrays: measured on Postgres 15, COPY + INSERT .. SELECT
// costs about 0.7x the server CPU of parsing the same rows as arrays.

// COPY text format: tab-separated, one row a line. Nothing needs escaping, by construction: the
// string fields (hashes, addresses, nonces) are the decoder's lowercase copies of fields that
// validateLogs matched against /^0x[0-9a-fA-F]{n}$/, and the rest are bigints and numbers. (A
// second scan of the whole text for a stray character, kept until 2026-11-23, cost ~0.4 s of the
// indexer's ~12 CPU-s on bench/indexer.ts and could not fail on validated input.)
function copyText<T>(rows: readonly T[], row: (r: T) => string): string {
  let text = '';
  for (const r of rows) text += `${row(r)}\n`;
  return text;
}

async function copyInto(client: pg.PoolClient, table: string, text: string): Promise<void> {
  if (text.length === 0) return;
  await pipeline(Readable.from([text]), client.query(copyFrom(`copy ${table} from stdin`)));
}

async function storeChunkByCopy(
  pool: pg.Pool,
  write: ChunkWrite,
  rows: {
    blocks: BlockRecord[];
    transfers: PaymentLogs['transfers'];
    auths: PaymentLogs['authorizations'];
    sellers: string[];
  },
): Promise<{ transfers: number; authorizations: number }> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // The transaction's opening in one round trip (simple query protocol, several statements;
    // inside the try: a statement after `begin` that fails leaves the transaction to roll back).
    await client.query(openChunkSql(chunkBlockNumbers(rows.blocks, rows.transfers)));
    const run: RunStatement = (text, params) => client.query(text, params ? [...params] : undefined);
    await copyInto(
      client,
      'x402_stage_blocks',
      copyText(rows.blocks, (x) => `${x.number}\t${x.hash}\t${x.timestamp}`),
    );
    await copyInto(
      client,
      'x402_stage_transfers',
      copyText(
        rows.transfers,
        (x) =>
          `${x.txHash}\t${x.logIndex}\t${x.blockHash}\t${x.blockNumber}\t${x.blockTimestamp}\t${x.from}\t${x.to}\t${x.value}`,
      ),
    );
    await copyInto(
      client,
      'x402_stage_authorizations',
      copyText(
        rows.auths,
        (x) => `${x.txHash}\t${x.logIndex}\t${x.blockHash}\t${x.blockNumber}\t${x.authorizer}\t${x.nonce}`,
      ),
    );
    const stored = await storeStaged(run, write, rows.sellers);
    await client.query('commit');
    if (stagedOnSession(client))
      // After the commit, so a failure here loses nothing stored: the connection is not reused
      // (its staging tables go with it) and the sync goes on.
      await vacuumStagingTables(run).catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
    return stored;
  } catch (error) {
    await client.query('rollback').catch((e: unknown) => {
      broken = e instanceof Error ? e : new Error(String(e));
    });
    throw error;
  } finally {
    client.release(broken); // a connection that cannot even roll back is not reused
  }
}

import { sql, type Kysely } from 'kysely';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { BlockRecord, PaymentLogs } from '../chain/index.ts';
import { pgPoolOf, type Schema } from '../db/index.ts';

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

/**
 * Rule 3 of a verified payment (docs/METHOD.md), for the transfer `u` of a chunk: its transaction
 * (same tx_hash and block_hash) holds an AuthorizationUsed whose authorizer is the transfer's
 * `from`. Read against the chunk's own authorizations (`from` names them: columns tx, h, au):
 * fetchPaymentLogs returns, with every transfer, the AuthorizationUsed logs of its transaction, so
 * they are always in the same chunk. Stored as usdc_transfers.authorized (migration 0003), which
 * the view generation_payments reads: `auth.tx is not null` after this join.
 * A join, not `in (select ..)`: Postgres hashes an `in` only while it expects the set to fit in
 * work_mem, and beyond that scans the set once per transfer. Not on a distinct set either (that
 * costs an aggregate per chunk): when one payer authorized twice in one transaction, the transfer
 * comes out twice and `on conflict do nothing` keeps the first, with the same flag.
 */
const AUTHORIZED_JOIN = (from: string) => `left join ${from} auth on auth.tx = u.tx and auth.h = u.h and auth.au = u.f`;

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

/**
 * Stores one completed chunk in ONE statement (so, one transaction): its blocks, transfers and
 * authorizations (bulk, through unnest; an already stored row is left as is) and the sellers'
 * advanced coverage. A run killed before it leaves nothing of the chunk; after it, everything,
 * so a restart resumes at toBlock + 1 without skipping or counting a log twice. Rows are sorted
 * by key so that concurrent chunks take index locks in one order (no deadlock). Safe to re-run.
 * Returns how many transfer and authorization rows were new.
 */
export async function storeChunk(
  db: Kysely<Schema>,
  write: ChunkWrite,
): Promise<{ transfers: number; authorizations: number }> {
  const blocks = [...write.logs.blocks].sort(byBlock);
  const transfers = [...write.logs.transfers].sort(byLog);
  const auths = [...write.logs.authorizations].sort(byLog);
  const sellers = [...write.sellers].sort();
  const pool = pgPoolOf(db);
  if (pool) return storeChunkByCopy(pool, write, { blocks, transfers, auths, sellers });
  const b = (value: (x: BlockRecord) => string | bigint) => arrayLiteral(blocks, value);
  const t = (value: (x: (typeof transfers)[number]) => string | number | bigint) => arrayLiteral(transfers, value);
  const a = (value: (x: (typeof auths)[number]) => string | number | bigint) => arrayLiteral(auths, value);
  const seq = str(write.runSeq);
  const { rows } = await sql<{ transfers: number; authorizations: number }>`
    with b as (
      insert into chain_blocks (block_number, block_hash, block_timestamp, added_seq)
      select n, h, ts, ${seq}::int8
        from unnest(${b((x) => x.number)}::text::int8[], ${b((x) => x.hash)}::text::text[],
                    ${b((x) => x.timestamp)}::text::int8[]) as u(n, h, ts)
      on conflict do nothing
    ), sa as (
      select *
        from unnest(${a((x) => x.txHash)}::text::text[], ${a((x) => x.logIndex)}::text::int4[],
                    ${a((x) => x.blockHash)}::text::text[], ${a((x) => x.blockNumber)}::text::int8[],
                    ${a((x) => x.authorizer)}::text::text[], ${a((x) => x.nonce)}::text::text[])
             as u(tx, li, h, n, au, no)
    ), t as (
      insert into usdc_transfers (tx_hash, log_index, block_hash, block_number, block_timestamp,
                                  from_address, to_address, value, added_seq, authorized)
      select u.tx, u.li, u.h, u.n, u.ts, u.f, u.t, u.v, ${seq}::int8, auth.tx is not null
        from unnest(${t((x) => x.txHash)}::text::text[], ${t((x) => x.logIndex)}::text::int4[],
                    ${t((x) => x.blockHash)}::text::text[], ${t((x) => x.blockNumber)}::text::int8[],
                    ${t((x) => x.blockTimestamp)}::text::int8[], ${t((x) => x.from)}::text::text[],
                    ${t((x) => x.to)}::text::text[], ${t((x) => x.value)}::text::numeric[])
             as u(tx, li, h, n, ts, f, t, v)
        ${sql.raw(AUTHORIZED_JOIN('sa'))}
       order by u.tx, u.li, u.h
      on conflict do nothing
      returning 1
    ), a as (
      insert into usdc_authorizations (tx_hash, log_index, block_hash, block_number, authorizer, nonce, added_seq)
      select tx, li, h, n, au, no, ${seq}::int8 from sa
      on conflict do nothing
      returning 1
    ), c as (
      insert into seller_coverage (seller_address, from_block, from_ts, to_block)
      select s, ${str(write.from.block)}::int8, ${str(write.from.ts)}::int8, ${str(write.toBlock)}::int8
        from unnest(${sellers}::text[]) as u(s)
      on conflict (seller_address) do update
        set to_block = greatest(seller_coverage.to_block, excluded.to_block)
    )
    select (select count(*) from t)::int4 as transfers, (select count(*) from a)::int4 as authorizations`.execute(db);
  const row = rows[0]!;
  return { transfers: Number(row.transfers), authorizations: Number(row.authorizations) };
}

// Postgres: the rows go through COPY into session-local staging tables (emptied at every commit),
// then one INSERT .. SELECT per table in the same transaction. Same rows, same conflict rule, same
// lock order as the unnest path (which PGlite, having no COPY, keeps): measured on Postgres 15,
// COPY + INSERT .. SELECT costs about 0.7x the server CPU of parsing the same rows as arrays.
// Text columns in byte order ("C"): the ORDER BY below (the lock order) then compares with memcmp
// rather than the database's locale; for lowercase hex both orders are the same, and all writers
// use this one. On 200k staged transfers the sort went from ~0.6 s to ~0.1 s of server CPU.
const STAGE = `
  create temp table if not exists x402_stage_blocks (n int8, h text collate "C", ts int8) on commit delete rows;
  create temp table if not exists x402_stage_transfers (tx text collate "C", li int4, h text collate "C", n int8, ts int8,
                                                        f text collate "C", t text collate "C", v numeric) on commit delete rows;
  create temp table if not exists x402_stage_authorizations (tx text collate "C", li int4, h text collate "C", n int8,
                                                             au text collate "C", no text collate "C") on commit delete rows;`;

const INSERT_STAGED = `
  with b as (
    insert into chain_blocks (block_number, block_hash, block_timestamp, added_seq)
    select n, h, ts, $1::int8 from x402_stage_blocks order by n, h
    on conflict do nothing
  ), t as (
    insert into usdc_transfers (tx_hash, log_index, block_hash, block_number, block_timestamp,
                                from_address, to_address, value, added_seq, authorized)
    select u.tx, u.li, u.h, u.n, u.ts, u.f, u.t, u.v, $1::int8, auth.tx is not null
      from x402_stage_transfers u ${AUTHORIZED_JOIN('x402_stage_authorizations')}
     order by u.tx, u.li, u.h
    on conflict do nothing
    returning 1
  ), a as (
    insert into usdc_authorizations (tx_hash, log_index, block_hash, block_number, authorizer, nonce, added_seq)
    select tx, li, h, n, au, no, $1::int8 from x402_stage_authorizations order by tx, li, h
    on conflict do nothing
    returning 1
  ), c as (
    insert into seller_coverage (seller_address, from_block, from_ts, to_block)
    select s, $3::int8, $4::int8, $5::int8 from unnest($2::text[]) as u(s)
    on conflict (seller_address) do update
      set to_block = greatest(seller_coverage.to_block, excluded.to_block)
  )
  select (select count(*) from t)::int4 as transfers, (select count(*) from a)::int4 as authorizations`;

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
    await client.query('begin');
    try {
      await client.query(STAGE);
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
      const result = await client.query<{ transfers: number; authorizations: number }>(INSERT_STAGED, [
        str(write.runSeq),
        rows.sellers,
        str(write.from.block),
        str(write.from.ts),
        str(write.toBlock),
      ]);
      await client.query('commit');
      const row = result.rows[0]!;
      return { transfers: Number(row.transfers), authorizations: Number(row.authorizations) };
    } catch (error) {
      await client.query('rollback').catch((e: unknown) => {
        broken = e instanceof Error ? e : new Error(String(e));
      });
      throw error;
    }
  } finally {
    client.release(broken); // a connection that cannot even roll back is not reused
  }
}

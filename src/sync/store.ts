import { sql, type Kysely } from 'kysely';
import type { BlockRecord, PaymentLogs } from '../chain/index.ts';
import type { Schema } from '../db/index.ts';

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
  for (const r of rows) out.set(r.seller_address, { fromBlock: BigInt(r.from_block), fromTs: BigInt(r.from_ts), toBlock: BigInt(r.to_block) });
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

// Lock order for concurrent chunks: (block_number, block_hash) and (tx_hash, log_index,
// block_hash), compared field by field (hashes are fixed-length lowercase hex, so string order is
// byte order) instead of through concatenated keys, which cost a string per comparison.
const byBlock = (a: BlockRecord, b: BlockRecord) =>
  a.number < b.number ? -1 : a.number > b.number ? 1 : a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0;
const byLog = (a: { txHash: string; logIndex: number; blockHash: string }, b: typeof a) =>
  a.txHash < b.txHash ? -1 : a.txHash > b.txHash ? 1 : a.logIndex - b.logIndex || (a.blockHash < b.blockHash ? -1 : a.blockHash > b.blockHash ? 1 : 0);

// Every stored value is 0x hex or a decimal integer (validated when read from the RPC), so a
// Postgres array literal needs no quoting: built here and cast with `::text::T[]`, it spares the
// driver's per-element escaping (the largest client cost of a chunk write). The one check over the
// joined text keeps anything else (a quote, a brace, a comma inside a value) from reaching SQL.
const SAFE_ELEMENTS = /^[0-9a-zA-Z,]*$/;
function arrayLiteral<T>(rows: readonly T[], value: (row: T) => string | number | bigint): string {
  const parts = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) parts[i] = String(value(rows[i]!));
  const text = parts.join(',');
  if (!SAFE_ELEMENTS.test(text) || parts.some((p) => p.length === 0)) throw new TypeError('a stored value is not hex or a decimal integer');
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
export async function storeChunk(db: Kysely<Schema>, write: ChunkWrite): Promise<{ transfers: number; authorizations: number }> {
  const blocks = [...write.logs.blocks].sort(byBlock);
  const transfers = [...write.logs.transfers].sort(byLog);
  const auths = [...write.logs.authorizations].sort(byLog);
  const sellers = [...write.sellers].sort();
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
    ), t as (
      insert into usdc_transfers (tx_hash, log_index, block_hash, block_number, block_timestamp,
                                  from_address, to_address, value, added_seq)
      select tx, li, h, n, ts, f, t, v, ${seq}::int8
        from unnest(${t((x) => x.txHash)}::text::text[], ${t((x) => x.logIndex)}::text::int4[],
                    ${t((x) => x.blockHash)}::text::text[], ${t((x) => x.blockNumber)}::text::int8[],
                    ${t((x) => x.blockTimestamp)}::text::int8[], ${t((x) => x.from)}::text::text[],
                    ${t((x) => x.to)}::text::text[], ${t((x) => x.value)}::text::numeric[])
             as u(tx, li, h, n, ts, f, t, v)
      on conflict do nothing
      returning 1
    ), a as (
      insert into usdc_authorizations (tx_hash, log_index, block_hash, block_number, authorizer, nonce, added_seq)
      select tx, li, h, n, au, no, ${seq}::int8
        from unnest(${a((x) => x.txHash)}::text::text[], ${a((x) => x.logIndex)}::text::int4[],
                    ${a((x) => x.blockHash)}::text::text[], ${a((x) => x.blockNumber)}::text::int8[],
                    ${a((x) => x.authorizer)}::text::text[], ${a((x) => x.nonce)}::text::text[])
             as u(tx, li, h, n, au, no)
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

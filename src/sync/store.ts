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
const byKey = <T>(key: (t: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/**
 * Stores one completed chunk in ONE statement (so, one transaction): its blocks, transfers and
 * authorizations (bulk, through unnest; an already stored row is left as is) and the sellers'
 * advanced coverage. A run killed before it leaves nothing of the chunk; after it, everything,
 * so a restart resumes at toBlock + 1 without skipping or counting a log twice. Rows are sorted
 * by key so that concurrent chunks take index locks in one order (no deadlock). Safe to re-run.
 * Returns how many transfer and authorization rows were new.
 */
export async function storeChunk(db: Kysely<Schema>, write: ChunkWrite): Promise<{ transfers: number; authorizations: number }> {
  const blocks = [...write.logs.blocks].sort(byKey((b: BlockRecord) => `${b.number.toString().padStart(20, '0')}${b.hash}`));
  const transfers = [...write.logs.transfers].sort(byKey((t) => `${t.txHash}${String(t.logIndex).padStart(10, '0')}${t.blockHash}`));
  const auths = [...write.logs.authorizations].sort(byKey((a) => `${a.txHash}${String(a.logIndex).padStart(10, '0')}${a.blockHash}`));
  const sellers = [...write.sellers].sort();
  const seq = str(write.runSeq);
  const { rows } = await sql<{ transfers: number; authorizations: number }>`
    with b as (
      insert into chain_blocks (block_number, block_hash, block_timestamp, added_seq)
      select n, h, ts, ${seq}::int8
        from unnest(${blocks.map((x) => str(x.number))}::int8[], ${blocks.map((x) => x.hash)}::text[],
                    ${blocks.map((x) => str(x.timestamp))}::int8[]) as u(n, h, ts)
      on conflict do nothing
    ), t as (
      insert into usdc_transfers (tx_hash, log_index, block_hash, block_number, block_timestamp,
                                  from_address, to_address, value, added_seq)
      select tx, li, h, n, ts, f, t, v, ${seq}::int8
        from unnest(${transfers.map((x) => x.txHash)}::text[], ${transfers.map((x) => x.logIndex)}::int4[],
                    ${transfers.map((x) => x.blockHash)}::text[], ${transfers.map((x) => str(x.blockNumber))}::int8[],
                    ${transfers.map((x) => str(x.blockTimestamp))}::int8[], ${transfers.map((x) => x.from)}::text[],
                    ${transfers.map((x) => x.to)}::text[], ${transfers.map((x) => str(x.value))}::numeric[])
             as u(tx, li, h, n, ts, f, t, v)
      on conflict do nothing
      returning 1
    ), a as (
      insert into usdc_authorizations (tx_hash, log_index, block_hash, block_number, authorizer, nonce, added_seq)
      select tx, li, h, n, au, no, ${seq}::int8
        from unnest(${auths.map((x) => x.txHash)}::text[], ${auths.map((x) => x.logIndex)}::int4[],
                    ${auths.map((x) => x.blockHash)}::text[], ${auths.map((x) => str(x.blockNumber))}::int8[],
                    ${auths.map((x) => x.authorizer)}::text[], ${auths.map((x) => x.nonce)}::text[])
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

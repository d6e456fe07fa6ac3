import { sql, type Kysely, type Transaction } from 'kysely';
import type { Schema } from '../db/index.ts';

/**
 * The coverage of method 3.0.0's streams (stream_coverage, seller_outgoing_coverage; migration
 * 0032): read by the sync (./streams.ts) to know where each stream resumes, and moved by the
 * writers (./streams-store.ts) in a chunk's transaction.
 */

export type StreamName = 'x402_proxies' | 'x402_claims' | 'x402_channels';

export interface StreamCoverage {
  fromBlock: bigint;
  fromTs: bigint;
  toBlock: bigint;
}

/** The stored coverage of each stream read for all addresses at once (stream_coverage). */
export async function loadStreamCoverage(db: Kysely<Schema>): Promise<Map<StreamName, StreamCoverage>> {
  const { rows } = await sql<{ stream: StreamName; from_block: string; from_ts: string; to_block: string }>`
    select stream, from_block, from_ts, to_block from stream_coverage`.execute(db);
  return new Map(
    rows.map((r) => [
      r.stream,
      { fromBlock: BigInt(r.from_block), fromTs: BigInt(r.from_ts), toBlock: BigInt(r.to_block) },
    ]),
  );
}

/** Forgets a stream's coverage: it is read again from its new start (its rows stay, and are not stored twice). */
export async function deleteStreamCoverage(db: Kysely<Schema>, stream: StreamName): Promise<void> {
  await sql`delete from stream_coverage where stream = ${stream}`.execute(db);
}

/** The coverage of these sellers' outgoing transfers (seller_outgoing_coverage), by seller. */
export async function loadOutgoingCoverage(
  db: Kysely<Schema>,
  sellers: readonly string[],
): Promise<Map<string, StreamCoverage>> {
  const out = new Map<string, StreamCoverage>();
  if (sellers.length === 0) return out;
  const { rows } = await sql<{ seller_address: string; from_block: string; from_ts: string; to_block: string }>`
    select seller_address, from_block, from_ts, to_block from seller_outgoing_coverage
     where seller_address = any(${[...sellers]}::text[])`.execute(db);
  for (const r of rows)
    out.set(r.seller_address, {
      fromBlock: BigInt(r.from_block),
      fromTs: BigInt(r.from_ts),
      toBlock: BigInt(r.to_block),
    });
  return out;
}

export async function deleteOutgoingCoverage(db: Kysely<Schema>, sellers: readonly string[]): Promise<void> {
  if (sellers.length === 0) return;
  await sql`delete from seller_outgoing_coverage where seller_address = any(${[...sellers]}::text[])`.execute(db);
}

/** Where a chunk's coverage starts when its stream (or seller) has none yet, and where it ends. */
export interface CoverageStep {
  from: { block: bigint; ts: bigint };
  toBlock: bigint;
}

/** Moves a stream's coverage to the chunk's end (in the chunk's transaction; it never moves back). */
export async function advanceStream(trx: Transaction<Schema>, stream: StreamName, step: CoverageStep) {
  await sql`
    insert into stream_coverage (stream, from_block, from_ts, to_block)
    values (${stream}, ${step.from.block.toString()}::int8, ${step.from.ts.toString()}::int8, ${step.toBlock.toString()}::int8)
    on conflict (stream) do update set to_block = greatest(stream_coverage.to_block, excluded.to_block)`.execute(trx);
}

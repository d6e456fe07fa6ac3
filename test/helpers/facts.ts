import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../src/db/schema.ts';

/**
 * Direct writers of catalog snapshots and chain facts for method tests: the rows the catalog
 * reader and the indexer would store, written by hand so that expected numbers can be worked out
 * from the fixture alone.
 */

export interface FixtureListing {
  listing_id: string;
  seller_address: string | null;
  category?: string;
  network?: string;
  resource_url?: string;
}

export async function insertCatalog(
  db: Kysely<Schema>,
  listings: FixtureListing[],
  sha256 = 'c'.repeat(64),
): Promise<bigint> {
  const snapshot = await db
    .insertInto('catalog_snapshots')
    .values({
      source: 'fixture',
      fetched_at: new Date('2026-01-01T00:00:00Z'),
      sha256,
      items_count: listings.length,
      listings_count: listings.length,
      rejected_count: 0,
    })
    .returning('snapshot_id')
    .executeTakeFirstOrThrow();
  const rows = listings.map((l, i) => ({
    snapshot_id: snapshot.snapshot_id,
    listing_id: l.listing_id,
    item_index: i,
    accept_index: 0,
    resource_url: l.resource_url ?? `https://api${i}.example.com/x`,
    network: l.network ?? (l.seller_address ? 'base' : 'solana'),
    canonical_network: l.seller_address ? 'eip155:8453' : 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
    pay_to: l.seller_address ?? 'So1anaPayTo',
    asset: l.seller_address
      ? '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'
      : 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    verifiability: (l.seller_address ? 'base_usdc' : 'other_rail') as 'base_usdc' | 'other_rail',
    seller_address: l.seller_address,
    title: `Listing ${i}`,
    description: null,
    category: l.category ?? 'other',
    category_source: 'auto' as const,
  }));
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('catalog_listings')
      .values(rows.slice(i, i + 500))
      .execute();
  }
  return snapshot.snapshot_id;
}

export interface FixtureTransfer {
  tx: string;
  logIndex: number;
  block: bigint;
  ts: bigint;
  from: string;
  to: string;
  value: bigint;
  /** Who the AuthorizationUsed of the same transaction names; null: there is none. */
  authorizer: string | null;
  addedSeq?: bigint;
  removedSeq?: bigint | null;
}

export function blockHash(block: bigint): `0x${string}` {
  return `0x${block.toString(16).padStart(64, 'b')}`;
}

/**
 * Stores transfers (and their authorizations) with one statement per table (unnest arrays), each
 * transfer with `authorized` as the indexer sets it: its own transaction holds an AuthorizationUsed
 * by its `from` (rule 3; here, the fixture's `authorizer` equals `from`).
 */
export async function insertTransfers(db: Kysely<Schema>, transfers: FixtureTransfer[]): Promise<void> {
  if (transfers.length === 0) return;
  const col = <T>(f: (t: FixtureTransfer) => T) => transfers.map(f);
  await sql`
    insert into usdc_transfers (tx_hash, log_index, block_hash, block_number, block_timestamp,
                                from_address, to_address, value, added_seq, removed_seq, authorized)
    select tx, li, h, n, ts, f, t, v, added, removed, coalesce(au = f, false) from unnest(${col((t) => t.tx)}::text[], ${col((t) => t.logIndex)}::int[],
                         ${col((t) => blockHash(t.block))}::text[], ${col((t) => t.block.toString())}::bigint[],
                         ${col((t) => t.ts.toString())}::bigint[], ${col((t) => t.from)}::text[],
                         ${col((t) => t.to)}::text[], ${col((t) => t.value.toString())}::numeric[],
                         ${col((t) => (t.addedSeq ?? 1n).toString())}::bigint[],
                         ${col((t) => (t.removedSeq == null ? null : t.removedSeq.toString()))}::bigint[],
                         ${col((t) => t.authorizer)}::text[])
           as u(tx, li, h, n, ts, f, t, v, added, removed, au)`.execute(db);
  const auth = transfers.filter((t) => t.authorizer !== null);
  if (auth.length === 0) return;
  const a = <T>(f: (t: FixtureTransfer) => T) => auth.map(f);
  await sql`
    insert into usdc_authorizations (tx_hash, log_index, block_hash, block_number, authorizer, nonce,
                                     added_seq, removed_seq)
    select * from unnest(${a((t) => t.tx)}::text[], ${a((t) => t.logIndex - 1)}::int[],
                         ${a((t) => blockHash(t.block))}::text[], ${a((t) => t.block.toString())}::bigint[],
                         ${a((t) => t.authorizer!)}::text[], ${a((t) => `0x${t.tx.slice(2, 66)}`)}::text[],
                         ${a((t) => (t.addedSeq ?? 1n).toString())}::bigint[],
                         ${a((t) => (t.removedSeq == null ? null : t.removedSeq.toString()))}::bigint[])`.execute(db);
}

export async function insertCoverage(
  db: Kysely<Schema>,
  rows: { seller: string; fromBlock: bigint; fromTs: bigint; toBlock: bigint }[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('seller_coverage')
    .values(
      rows.map((r) => ({ seller_address: r.seller, from_block: r.fromBlock, from_ts: r.fromTs, to_block: r.toBlock })),
    )
    .execute();
}

import type { Kysely } from 'kysely';
import { BASE_USDC } from '../../src/config/index.ts';
import { writeFactRows } from '../../src/db/load-facts.ts';
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
    asset: l.seller_address ? BASE_USDC : 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
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
 * Stores transfers as the indexer would (src/db/load-facts.ts: one block version per block and
 * seqs), each with rule 3 as the indexer decides it: its own transaction holds an
 * AuthorizationUsed by its `from` (here, the fixture's `authorizer` equals `from`), logged just
 * before it.
 */
export async function insertTransfers(db: Kysely<Schema>, transfers: FixtureTransfer[]): Promise<void> {
  await writeFactRows(
    db,
    transfers.map((t) => ({
      tx: t.tx,
      logIndex: t.logIndex,
      blockHash: blockHash(t.block),
      block: t.block,
      ts: t.ts,
      from: t.from,
      to: t.to,
      value: t.value,
      addedSeq: t.addedSeq ?? 1n,
      removedSeq: t.removedSeq ?? null,
      authorized: t.authorizer !== null && t.authorizer === t.from,
      pairLogIndex: t.logIndex - 1,
      nonce: `0x${t.tx.slice(2, 66)}`,
    })),
  );
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

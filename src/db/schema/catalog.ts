import type { ColumnType, Generated } from 'kysely';
import type { Int8, Timestamp } from './columns.ts';

/**
 * The catalog: its snapshots as fetched, their listings and rejects, and what the database derives
 * from a snapshot (search postings, the method's seller numbers).
 * Part of the row types of src/db/schema.ts (the Schema interface assembles them).
 */

export interface CatalogSnapshotsTable {
  snapshot_id: Generated<bigint>;
  source: string;
  fetched_at: Timestamp;
  sha256: string;
  items_count: number;
  listings_count: number;
  rejected_count: number;
}

export interface CatalogItemsTable {
  snapshot_id: Int8;
  item_index: number;
  item_json: string;
}

export interface CatalogListingsTable {
  snapshot_id: Int8;
  listing_id: string;
  item_index: number;
  accept_index: number;
  resource_url: string;
  network: string;
  canonical_network: string;
  pay_to: string;
  asset: string;
  verifiability: 'base_usdc' | 'other_rail';
  seller_address: string | null;
  title: string | null;
  description: string | null;
  category: string;
  category_source: 'auto' | 'seller_asserted';
  /** The search document (sql/migrations/0017), derived by the database from title, description and resource_url. */
  search_doc: ColumnType<string, never, never>;
}

export interface CatalogRejectsTable {
  snapshot_id: Int8;
  reject_index: number;
  item_index: number;
  accept_index: number | null;
  reason: string;
  detail: string;
}

/** Search postings of a catalog snapshot (sql/migrations/0017): written by a trigger with catalog_listings. */
export interface CatalogListingWordsTable {
  snapshot_id: Int8;
  word: string;
  score: number;
  listing_id: string;
}

/** Postings per word and score of a catalog snapshot (sql/migrations/0019): kept by the same trigger. */
export interface CatalogWordBandsTable {
  snapshot_id: Int8;
  word: string;
  score: number;
  listings: number;
}

/** The sellers of a catalog snapshot as the method numbers them (sql/migrations/0022; derived). */
export interface CatalogSnapshotSellersTable {
  snapshot_id: bigint;
  seller_id: number;
  seller_address: string;
  listing_count: number;
  categories: string[];
  /** method 3.0.0's same_operator pairs: the numbers of the sellers paying this one as its operator (migration 0034); null until computed */
  same_operator_payers: number[] | null;
}

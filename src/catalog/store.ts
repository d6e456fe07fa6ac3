import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { TallyError } from '../lib/errors.ts';
import type { Catalog } from './types.ts';

// Rows per statement: each statement sends one array per column (unnest), so a chunk is a few
// parameters however many rows it holds; the bound only keeps one message to a few MB.
const CHUNK = 5000;

function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
}

/**
 * The newest snapshot when it holds this very catalog: same items digest, same source, and the
 * same counts of items, listings (all, and base_usdc) and rejects. Listings are a function of the
 * items and of the chain settings (CHAIN_ID, USDC_ADDRESS); the base_usdc count catches a change of
 * those. Only the newest snapshot is considered: prune never deletes it.
 */
async function unchangedSnapshot(db: Kysely<Schema>, catalog: Catalog): Promise<bigint | undefined> {
  const last = await db
    .selectFrom('catalog_snapshots')
    .selectAll()
    .orderBy('snapshot_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (
    !last ||
    last.sha256 !== catalog.sha256 ||
    last.source !== catalog.source ||
    last.items_count !== catalog.itemLines.length ||
    last.listings_count !== catalog.listings.length ||
    last.rejected_count !== catalog.rejects.length
  ) {
    return undefined;
  }
  const { n } = await db
    .selectFrom('catalog_listings')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('snapshot_id', '=', last.snapshot_id)
    .where('verifiability', '=', 'base_usdc')
    .executeTakeFirstOrThrow();
  const baseUsdc = catalog.listings.filter((l) => l.verifiability === 'base_usdc').length;
  return Number(n) === baseUsdc ? last.snapshot_id : undefined;
}

/**
 * Stores a catalog as one snapshot (catalog_snapshots + its items, listings and rejects) in ONE
 * transaction with bulk `insert ... select from unnest(...)` statements; returns its snapshot_id.
 * An unchanged catalog (the newest snapshot holds the same items from the same source, see
 * unchangedSnapshot) is not stored again: its snapshot_id is returned (a steady run's catalog step
 * then costs one read). Its `fetched_at` stays that of the first read. Duplicates are not stored:
 * they follow from the stored items by the published dedupe rule.
 */
export async function storeCatalogSnapshot(db: Kysely<Schema>, catalog: Catalog): Promise<bigint> {
  return db.transaction().execute(async (trx) => {
    const reused = await unchangedSnapshot(trx, catalog);
    if (reused !== undefined) return reused;
    const snapshot = await trx
      .insertInto('catalog_snapshots')
      .values({
        source: catalog.source,
        fetched_at: catalog.fetchedAt,
        sha256: catalog.sha256,
        items_count: catalog.itemLines.length,
        listings_count: catalog.listings.length,
        rejected_count: catalog.rejects.length,
      })
      .returning('snapshot_id')
      .executeTakeFirstOrThrow();
    const id = String(snapshot.snapshot_id);

    for (const [n, part] of chunks(catalog.itemLines).entries()) {
      const indexes = part.map((_, i) => n * CHUNK + i);
      await sql`insert into catalog_items (snapshot_id, item_index, item_json)
        select ${id}::bigint, i, j from unnest(${indexes}::int4[], ${part}::text[]) as t(i, j)`.execute(trx);
    }
    for (const part of chunks(catalog.listings)) {
      const col = <K extends keyof (typeof part)[number]>(key: K) => part.map((l) => l[key]);
      await sql`insert into catalog_listings (snapshot_id, listing_id, item_index, accept_index, resource_url, network,
          canonical_network, pay_to, asset, verifiability, seller_address, title, description, category, category_source)
        select ${id}::bigint, * from unnest(${col('listing_id')}::text[], ${col('item_index')}::int4[],
          ${col('accept_index')}::int4[], ${col('resource_url')}::text[], ${col('network')}::text[],
          ${col('canonical_network')}::text[], ${col('pay_to')}::text[], ${col('asset')}::text[],
          ${col('verifiability')}::text[], ${col('seller_address')}::text[], ${col('title')}::text[],
          ${col('description')}::text[], ${col('category')}::text[], ${col('category_source')}::text[])`.execute(trx);
    }
    for (const [n, part] of chunks(catalog.rejects).entries()) {
      const indexes = part.map((_, i) => n * CHUNK + i);
      await sql`insert into catalog_rejects (snapshot_id, reject_index, item_index, accept_index, reason, detail)
        select ${id}::bigint, * from unnest(${indexes}::int4[], ${part.map((r) => r.item_index)}::int4[],
          ${part.map((r) => r.accept_index)}::int4[], ${part.map((r) => r.reason)}::text[],
          ${part.map((r) => r.detail)}::text[])`.execute(trx);
    }
    return snapshot.snapshot_id;
  });
}

/**
 * A stored snapshot's items (canonical JSON lines in input order), digest, source and read time,
 * for export and audit. Throws when the snapshot does not exist. Read-only.
 */
export async function loadCatalogSnapshot(
  db: Kysely<Schema>,
  snapshotId: bigint,
): Promise<{ itemLines: string[]; sha256: string; source: string; fetchedAt: Date }> {
  const snapshot = await db
    .selectFrom('catalog_snapshots')
    .select(['sha256', 'source', 'fetched_at', 'items_count'])
    .where('snapshot_id', '=', snapshotId)
    .executeTakeFirst();
  if (!snapshot)
    throw new TallyError(`catalog snapshot ${snapshotId} does not exist`, {
      details: { snapshotId: String(snapshotId) },
    });
  const rows = await db
    .selectFrom('catalog_items')
    .select('item_json')
    .where('snapshot_id', '=', snapshotId)
    .orderBy('item_index')
    .execute();
  return {
    itemLines: rows.map((r) => r.item_json),
    sha256: snapshot.sha256,
    source: snapshot.source,
    fetchedAt: snapshot.fetched_at,
  };
}

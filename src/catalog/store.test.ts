import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_CHAIN_ID, BASE_USDC } from '../config/index.ts';
import { projectRoot } from '../lib/paths.ts';
import { backends, freshDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { buildCatalog } from './build.ts';
import { catalogSha256 } from './canonical.ts';
import { loadCatalogSnapshot, storeCatalogSnapshot } from './store.ts';

const CRAWL = path.join(projectRoot, 'fixtures/catalog/bazaar-catalog-2025-12-31.json');
const items = (JSON.parse(readFileSync(CRAWL, 'utf8')) as { resources: unknown[] }).resources;
const fetchedAt = new Date('2025-12-31T00:34:27.045Z');
const catalog = buildCatalog(
  items,
  { source: 'bazaar-catalog-2025-12-31.json', fetchedAt },
  { chainId: BASE_CHAIN_ID, usdcAddress: BASE_USDC },
);

describe.each(backends())('catalog snapshot on $backend', ({ backend }) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase(backend);
  });
  afterAll(async () => database.close());

  it('default: the real crawl is stored whole and loads back to the same canonical form', async () => {
    const id = await storeCatalogSnapshot(database.db, catalog);
    const db = database.db;
    const counts = await Promise.all(
      (['catalog_items', 'catalog_listings', 'catalog_rejects'] as const).map(async (t) =>
        Number(
          (
            await db
              .selectFrom(t)
              .select((eb) => eb.fn.countAll<string>().as('n'))
              .where('snapshot_id', '=', id)
              .executeTakeFirstOrThrow()
          ).n,
        ),
      ),
    );
    // 1,400 items, 1,363 listings, 43 rejects: fixtures/catalog/derive_counts.py.
    expect(counts).toEqual([1400, 1363, 43]);
    const loaded = await loadCatalogSnapshot(db, id);
    expect(loaded.source).toBe('bazaar-catalog-2025-12-31.json');
    expect(loaded.fetchedAt.toISOString()).toBe('2025-12-31T00:34:27.045Z');
    expect(loaded.itemLines).toEqual(catalog.itemLines);
    // The digest recomputed from what the database gives back is the one Python computed.
    expect(catalogSha256(loaded.itemLines)).toBe('a0f32583c572e574974a6da803e0e2d12c9006210af676ff6cd5dc0ae6b8c852');
    expect(loaded.sha256).toBe('a0f32583c572e574974a6da803e0e2d12c9006210af676ff6cd5dc0ae6b8c852');
  });

  it('behavior: listings and rejects keep their nulls and values', async () => {
    const id = await storeCatalogSnapshot(database.db, catalog);
    const listings = await database.db
      .selectFrom('catalog_listings')
      .selectAll()
      .where('snapshot_id', '=', id)
      .orderBy('listing_id')
      .execute();
    expect(listings.map(({ snapshot_id: _, search_doc: _doc, ...rest }) => rest)).toEqual(catalog.listings);
    const rejects = await database.db
      .selectFrom('catalog_rejects')
      .selectAll()
      .where('snapshot_id', '=', id)
      .orderBy('reject_index')
      .execute();
    expect(rejects.map((r) => [r.reject_index, r.item_index, r.accept_index, r.reason])).toEqual(
      catalog.rejects.map((r, i) => [i, r.item_index, r.accept_index, r.reason]),
    );
  });

  it('behavior: an unchanged catalog is not stored again; a changed one is', async () => {
    const first = await storeCatalogSnapshot(database.db, catalog);
    const count = async () =>
      (await database.db.selectFrom('catalog_snapshots').select('snapshot_id').execute()).length;
    const before = await count();
    expect(await storeCatalogSnapshot(database.db, { ...catalog, fetchedAt: new Date('2026-01-01T00:00:00Z') })).toBe(
      first,
    );
    expect(await count()).toBe(before);
    // the same items read as another chain's: no listing is base_usdc, so it is another snapshot
    const other = buildCatalog(
      items,
      { source: 'bazaar-catalog-2025-12-31.json', fetchedAt },
      { chainId: 1, usdcAddress: BASE_USDC },
    );
    expect(other.sha256).toBe(catalog.sha256);
    const changed = await storeCatalogSnapshot(database.db, other);
    expect(changed).toBeGreaterThan(first);
    expect(await count()).toBe(before + 1);
    // and the first catalog again follows the newest snapshot, so it is stored anew
    expect(await storeCatalogSnapshot(database.db, catalog)).toBeGreaterThan(changed);
  });

  it('error: a snapshot that fails half-way leaves no row at all', async () => {
    const before = await database.db.selectFrom('catalog_snapshots').select('snapshot_id').execute();
    // Two listings with one listing_id break the primary key after the snapshot and items rows.
    const broken = { ...catalog, listings: [catalog.listings[0]!, catalog.listings[0]!] };
    await expect(storeCatalogSnapshot(database.db, broken)).rejects.toThrow();
    const after = await database.db.selectFrom('catalog_snapshots').select('snapshot_id').execute();
    expect(after).toEqual(before);
    const orphans = await database.db
      .selectFrom('catalog_items')
      .select('snapshot_id')
      .where(
        'snapshot_id',
        'not in',
        before.map((r) => r.snapshot_id),
      )
      .execute();
    expect(orphans).toEqual([]);
  });

  it('error: loading a snapshot that does not exist throws', async () => {
    await expect(loadCatalogSnapshot(database.db, 999_999n)).rejects.toThrow('does not exist');
  });
});

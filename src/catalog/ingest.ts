import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { readCatalog, type ReadCatalogOptions } from './source.ts';
import { storeCatalogSnapshot } from './store.ts';
import type { Catalog } from './types.ts';

/**
 * Reads a catalog and stores it as a new snapshot. Nothing is written unless the whole catalog
 * was read: a source failure throws (TemporaryError: exit 75) before the database is touched,
 * and the snapshot is written in one transaction. Each call stores a new snapshot.
 */
export async function ingestCatalog(
  db: Kysely<Schema>,
  source: string,
  options: ReadCatalogOptions,
): Promise<{ catalog: Catalog; snapshotId: bigint }> {
  const catalog = await readCatalog(source, options);
  const snapshotId = await storeCatalogSnapshot(db, catalog);
  return { catalog, snapshotId };
}

/**
 * Writes the listings of the real crawl (fixtures/catalog) as the API serves them, one JSON object
 * a line (listing_id, seller_address, title, description, resource_url), for label.py to label.
 * Reads through the catalog reader and one computed generation on an in-memory PGlite; the search
 * is not involved.
 *
 *   npx tsx test/api/search-labels/export-listings.ts > "$(mktemp -d)/listings.ndjson"
 */
import { readCatalog } from '../../../src/catalog/source.ts';
import { storeCatalogSnapshot } from '../../../src/catalog/store.ts';
import { BASE_USDC } from '../../../src/config/index.ts';
import { demoCatalogPath } from '../../../src/cli/demo.ts';
import { computeGeneration } from '../../../src/method/index.ts';
import { publishGeneration } from '../../../src/publish/index.ts';
import { freshDatabase } from '../../helpers/db.ts';

const db = await freshDatabase('pglite');
try {
  const catalog = await readCatalog(demoCatalogPath(), { chainId: 8453, usdcAddress: BASE_USDC });
  const snapshotId = await storeCatalogSnapshot(db.db, catalog);
  const generation = await computeGeneration(db.db, {
    runSeq: 1n,
    asOf: { number: 40_000_000n, hash: `0x${'ab'.repeat(32)}`, timestamp: 1_767_236_400n },
    catalogSnapshotId: snapshotId,
    sources: [],
  });
  await publishGeneration(db.db, generation);
  const rows = await db.db
    .selectFrom('gen_listings')
    .select(['listing_id', 'seller_address', 'title', 'description', 'resource_url'])
    .where('generation', '=', generation)
    .orderBy('listing_id')
    .execute();
  for (const r of rows) process.stdout.write(`${JSON.stringify(r)}\n`);
} finally {
  await db.close();
}

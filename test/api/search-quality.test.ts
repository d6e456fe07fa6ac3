import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { readCatalog } from '../../src/catalog/source.ts';
import { storeCatalogSnapshot } from '../../src/catalog/store.ts';
import { BASE_USDC } from '../../src/config/index.ts';
import { demoCatalogPath } from '../../src/cli/demo.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import { computeGeneration } from '../../src/method/index.ts';
import { publishGeneration } from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { get } from './helpers.ts';

/**
 * Search quality on the labelled set (test/api/search-labels/README.md): for each query, the
 * relevant listings of the real crawl were labelled by a separate procedure (label.py) from a
 * relevance rule written down before the search was tuned. Every listing the search returns
 * (all pages) is compared with the labels: recall = relevant found / relevant, precision =
 * relevant found / found. Targets (issue 23): recall >= 0.9 and precision >= 0.8 on every query.
 */
interface Labels {
  listings: number;
  queries: { q: string; relevant: string[] }[];
}
const labels = JSON.parse(readFileSync(path.join(projectRoot, 'test/api/search-labels.json'), 'utf8')) as Labels;

/** Every listing_id a search returns, following next_cursor page by page. */
async function searchAll(app: FastifyInstance, q: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(
      app,
      `/api/v1/sellers?q=${encodeURIComponent(q)}&limit=50${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(res.status, res.text).toBe(200);
    ids.push(...res.json.listings.map((l: { listing_id: string }) => l.listing_id));
    cursor = res.json.next_cursor;
  } while (cursor !== null);
  return ids;
}

describe.each(backends())('search quality on the labelled set on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;

  beforeAll(async () => {
    db = await freshDatabase(backend);
    const catalog = await readCatalog(demoCatalogPath(), { chainId: 8453, usdcAddress: BASE_USDC });
    const snapshotId = await storeCatalogSnapshot(db.db, catalog);
    const generation = await computeGeneration(db.db, {
      runSeq: 1n,
      asOf: { number: 40_000_000n, hash: `0x${'ab'.repeat(32)}`, timestamp: 1_767_236_400n },
      catalogSnapshotId: snapshotId,
      sources: [],
    });
    await publishGeneration(db.db, generation);
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('default: the labels are of this crawl, with at least 20 queries including video and token', () => {
    expect(labels.listings).toBe(1363); // src/catalog/real-crawl.test.ts
    expect(labels.queries.length).toBeGreaterThanOrEqual(20);
    expect(labels.queries.map((l) => l.q)).toEqual(expect.arrayContaining(['video', 'token']));
  });

  it.each(labels.queries.map((l) => [l.q, l.relevant] as const))(
    'behavior: q=%s finds its labelled listings (recall >= 0.9, precision >= 0.8)',
    async (q, relevant) => {
      const found = await searchAll(app, q);
      const hits = found.filter((id) => relevant.includes(id)).length;
      const recall = relevant.length === 0 ? 1 : hits / relevant.length;
      const precision = found.length === 0 ? (relevant.length === 0 ? 1 : 0) : hits / found.length;
      console.log(
        `search-quality ${backend} ${JSON.stringify(q)} relevant=${relevant.length} found=${found.length} recall=${recall.toFixed(2)} precision=${precision.toFixed(2)}`,
      );
      expect(new Set(found).size).toBe(found.length);
      expect(recall, `recall of ${q}`).toBeGreaterThanOrEqual(0.9);
      expect(precision, `precision of ${q}`).toBeGreaterThanOrEqual(0.8);
    },
  );
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog, storeCatalogSnapshot } from '../../src/catalog/index.ts';
import { loadConfig } from '../../src/config/index.ts';
import { computeGeneration } from '../../src/method/index.ts';
import { publishGeneration, pruneGenerations } from '../../src/publish/index.ts';
import { runCycle, type CycleDeps } from '../../src/run/cycle.ts';
import { coverBlockRange } from '../../src/sync/store.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { oneSellerItem } from '../helpers/e2e.ts';
import { fixedChain } from '../helpers/fixed-chain.ts';

const ITEM = oneSellerItem('0x' + '22'.repeat(20));
const AS_OF = { number: 100n, hash: `0x${'cd'.repeat(32)}` as const, timestamp: 1_767_139_200n };

/** Every stage but the chain is real; `around` replaces the snapshot and the sync. */
function deps(around: Pick<CycleDeps, 'storeCatalogSnapshot' | 'syncChain'>): CycleDeps {
  return {
    readCatalog: async (source, o) => buildCatalog([ITEM], { source, fetchedAt: new Date('2025-12-31T00:00:00Z') }, o),
    ...fixedChain(AS_OF),
    computeGeneration,
    publishGeneration,
    pruneGenerations,
    ...around,
  };
}

describe.each(backends())('the catalog snapshot beside the sync ($backend)', ({ backend }) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase(backend);
  });
  afterAll(async () => {
    await database?.close();
  });
  const config = () =>
    loadConfig({ DATABASE_URL: database.url, RPC_URL: 'http://127.0.0.1:1', CATALOG_SOURCE: 'catalog.json' });
  const published = async () =>
    (await sql<{ n: number }>`select count(*)::int4 as n from published_pointer`.execute(database.db)).rows[0]!.n;

  it('behavior: a snapshot that fails while the sync runs stops the sync (its signal aborts with that error) and the run publishes nothing', async () => {
    const failure = new Error('the snapshot failed');
    let syncStarted!: () => void;
    const started = new Promise<void>((resolve) => (syncStarted = resolve));
    let syncSignal: AbortSignal | undefined;
    const run = runCycle(
      database,
      config(),
      deps({
        // Fails only once the sync is running: the two overlap.
        storeCatalogSnapshot: async () => {
          await started;
          throw failure;
        },
        syncChain: (_db, _client, o) => {
          syncSignal = o.signal;
          syncStarted();
          // A sync that runs until it is stopped.
          return new Promise((_resolve, reject) => o.signal!.addEventListener('abort', () => reject(o.signal!.reason)));
        },
      }),
    );
    await expect(run).rejects.toBe(failure);
    expect(syncSignal?.aborted).toBe(true);
    expect(syncSignal?.reason).toBe(failure);
    expect(await published()).toBe(0);
  });

  it('behavior: the sync starts before the snapshot is stored, and the generation is computed with the stored snapshot', async () => {
    let syncStarted!: () => void;
    const started = new Promise<void>((resolve) => (syncStarted = resolve));
    let snapshotId: bigint | undefined;
    const report = await runCycle(
      database,
      config(),
      deps({
        // Stored only after the sync has started: run one after the other, this run would never end.
        storeCatalogSnapshot: async (db, catalog) => {
          await started;
          snapshotId = await storeCatalogSnapshot(db, catalog);
          return snapshotId;
        },
        syncChain: async (...args) => {
          syncStarted();
          return fixedChain(AS_OF).syncChain(...args);
        },
      }),
    );
    expect(snapshotId).toBeDefined();
    expect(report.catalogSnapshotId).toBe(snapshotId);
    const { rows } = await sql<{ id: string }>`
      select catalog_snapshot_id::text as id from generations where generation = ${report.generation}`.execute(
      database.db,
    );
    expect(rows[0]!.id).toBe(String(snapshotId));
    expect(await published()).toBe(1);
  });
});

describe.each(backends())('coverBlockRange ($backend)', ({ backend }) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase(backend);
  });
  afterAll(async () => {
    await database?.close();
  });
  const exists = async (name: string) =>
    (await sql<{ r: string | null }>`select to_regclass(${name})::text as r`.execute(database.db)).rows[0]!.r !== null;

  it('behavior: creates the partitions of blocks, transfers and batch_claims that every block of the range falls in, and no other', async () => {
    // Partitions are 3,024,000 blocks wide (migration 0027) and start at multiples of it. Blocks
    // 30,000,000..37,000,000 lie in those from 27,216,000 (9 widths), 30,240,000, 33,264,000 and
    // 36,288,000 (12 widths); 39,312,000 (13 widths) is past the range, 24,192,000 before it.
    const inRange = [27_216_000, 30_240_000, 33_264_000, 36_288_000];
    const outside = [24_192_000, 39_312_000];
    for (const first of [...inRange, ...outside])
      for (const parent of ['blocks', 'transfers', 'batch_claims'])
        expect(await exists(`${parent}_from_${first}`)).toBe(false);
    await coverBlockRange(database.db, 30_000_000n, 37_000_000n);
    for (const parent of ['blocks', 'transfers', 'batch_claims']) {
      for (const first of inRange) expect(await exists(`${parent}_from_${first}`)).toBe(true);
      for (const first of outside) expect(await exists(`${parent}_from_${first}`)).toBe(false);
    }
  });
});

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMethodSteps } from '../../src/method/index.ts';
import {
  compareGenerationRows,
  exportGeneration,
  formatDifference,
  pruneGenerations,
  publishGeneration,
  publishedGeneration,
  readBundle,
  readGenerationRows,
} from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { DEC_10, S } from './fixture.ts';
import { compute, loadFixture } from './setup.ts';

async function countRows(database: TestDatabase, generation: number) {
  let n = 0;
  for (const table of ['gen_sellers', 'gen_listings', 'gen_market_daily'] as const) {
    const r = await database.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<bigint>().as('n'))
      .where('generation', '=', generation)
      .executeTakeFirstOrThrow();
    n += Number(r.n);
  }
  return n;
}

describe.each(backends())('publishing on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  it('error: a failure at any step leaves the previous generation live and no trace of the new one', async () => {
    database = await freshDatabase(backend);
    const { snapshotId } = await loadFixture(database.db);
    const first = await compute(database.db, snapshotId);
    await publishGeneration(database.db, first);
    const stepNames = [...loadMethodSteps().map((s) => s.name), 'ready'];
    expect(stepNames.length).toBeGreaterThanOrEqual(6);
    for (const failAt of stepNames) {
      await expect(
        compute(database.db, snapshotId, {
          afterStep: (step) => {
            if (step === failAt) throw new Error(`injected at ${failAt}`);
          },
        }),
      ).rejects.toThrow(`injected at ${failAt}`);
      expect(await publishedGeneration(database.db)).toBe(first);
      const gens = await database.db.selectFrom('generations').select('generation').execute();
      expect(gens.map((g) => g.generation)).toEqual([first]);
      expect(await countRows(database, first + 1)).toBe(0);
    }
    // The publish step itself fails just before its commit: the pointer does not move.
    const second = await compute(database.db, snapshotId);
    await expect(
      publishGeneration(database.db, second, {
        beforeCommit: () => {
          throw new Error('injected at publish');
        },
      }),
    ).rejects.toThrow('injected at publish');
    expect(await publishedGeneration(database.db)).toBe(first);
    const status = await database.db
      .selectFrom('generations')
      .select('status')
      .where('generation', '=', second)
      .executeTakeFirstOrThrow();
    expect(status.status).toBe('ready');
    // ... and a later publish of it succeeds.
    await publishGeneration(database.db, second);
    expect(await publishedGeneration(database.db)).toBe(second);
  });

  it('behavior: of two publishers of one generation, one wins and the other fails cleanly', async () => {
    database = await freshDatabase(backend);
    const { snapshotId } = await loadFixture(database.db);
    const g = await compute(database.db, snapshotId);
    const results = await Promise.allSettled([publishGeneration(database.db, g), publishGeneration(database.db, g)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await publishedGeneration(database.db)).toBe(g);
  });

  it('error: publishing an older generation than the live one is refused', async () => {
    database = await freshDatabase(backend);
    const { snapshotId } = await loadFixture(database.db);
    const older = await compute(database.db, snapshotId);
    const newer = await compute(database.db, snapshotId);
    await publishGeneration(database.db, newer);
    await expect(publishGeneration(database.db, older)).rejects.toThrow(/backwards/);
    expect(await publishedGeneration(database.db)).toBe(newer);
  });

  it('behavior: pruning keeps the newest RETAIN_GENERATIONS published generations', async () => {
    database = await freshDatabase(backend);
    const { snapshotId } = await loadFixture(database.db);
    const published: number[] = [];
    for (let i = 0; i < 4; i++) {
      const g = await compute(database.db, snapshotId);
      await publishGeneration(database.db, g);
      published.push(g);
    }
    const leftover = await compute(database.db, snapshotId); // computed, never published, newer than live
    const result = await pruneGenerations(database.db, 2);
    expect(result.generations).toEqual(published.slice(0, 2));
    const gens = await database.db.selectFrom('generations').select('generation').orderBy('generation').execute();
    expect(gens.map((g) => g.generation)).toEqual([...published.slice(2), leftover]);
    expect(await countRows(database, published[0]!)).toBe(0);
    expect(await publishedGeneration(database.db)).toBe(published[3]);
  });

  it('behavior: export writes a bundle that reads back identical, and tampering is named', async () => {
    database = await freshDatabase(backend);
    const { snapshotId } = await loadFixture(database.db);
    // a 2.0.0 generation: the names of its differences are 2.x's (a 3.0.0 payment is also named
    // with its class, seller and period: test/e2e/run-audit.test.ts, demo-x402.test.ts)
    const g = await compute(database.db, snapshotId, { methodVersion: '2.0.0' });
    const dir = await mkdtemp(path.join(os.tmpdir(), 'x402-bundle-'));
    const out = path.join(dir, 'bundle');
    try {
      const manifest = await exportGeneration(database.db, g, out);
      const stored = await readGenerationRows(database.db, g);
      expect(manifest.files.map((f) => [f.name, f.rows])).toEqual([
        ['catalog_items.ndjson', 0],
        ['catalog_rejects.ndjson', 0],
        ['listings.ndjson', stored.listings.length],
        ['sellers.ndjson', 10],
        ['payments.ndjson', stored.payments.length],
        ['market_daily.ndjson', 30],
        ['seller_daily.ndjson', stored.sellerDaily.length], // hand-checked in seller-daily.test.ts
        ['periods.ndjson', 2],
        ['seller_periods.ndjson', 9],
      ]);
      const bundle = await readBundle(out);
      expect(bundle.integrity).toEqual([]);
      expect(bundle.manifest.digests).toEqual(stored.generation.digests);
      expect(compareGenerationRows(bundle.rows, stored)).toEqual([]);
      // A value above 2^53 survives the NDJSON text exactly.
      const sellersText = await readFile(path.join(out, 'sellers.ndjson'), 'utf8');
      expect(sellersText).toContain('"verified_revenue_30d_micro":5764607523034234880');

      // Tamper: drop one payment of seller A and change the value of another.
      const file = path.join(out, 'payments.ndjson');
      const lines = (await readFile(file, 'utf8')).trim().split('\n');
      const ofA = lines.map((l, i) => [l, i] as const).filter(([l]) => l.includes(`"seller_address":"${S.A}"`));
      const removed = JSON.parse(ofA[0]![0]) as { tx_hash: string; log_index: number };
      const changed = JSON.parse(ofA[1]![0]) as { tx_hash: string; log_index: number; value: number };
      lines[ofA[1]![1]] = ofA[1]![0].replace(`"value":${changed.value}`, `"value":${changed.value + 1}`);
      lines.splice(ofA[0]![1], 1);
      await writeFile(file, `${lines.join('\n')}\n`);
      const tampered = await readBundle(out);
      expect(tampered.integrity).toEqual([
        'payments.ndjson: sha256 differs from the manifest (the file was changed)',
        `payments.ndjson: ${stored.payments.length - 1} rows, the manifest says ${stored.payments.length}`,
      ]);
      const diffs = compareGenerationRows(tampered.rows, stored).map(formatDifference);
      expect(diffs).toEqual([
        `payment ${changed.tx_hash}:${changed.log_index} value: published ${changed.value + 1}, recomputed ${changed.value}`,
        `payment ${removed.tx_hash}:${removed.log_index}: published absent, recomputed present`,
      ]);

      // A row that does not fit its file's shape is refused, naming the file, its line and field.
      // The fourth line's value as text (a JSON string, not an integer):
      const quoted = [...lines];
      quoted[3] = quoted[3]!.replace(/"value":(\d+)/, '"value":"$1"');
      expect(quoted[3]).toMatch(/"value":"\d+"/);
      await writeFile(file, `${quoted.join('\n')}\n`);
      await expect(readBundle(out)).rejects.toThrow(`${file} line 4: value: must be a whole number`);
      // The second seller without its tier, the rest of the file intact:
      await writeFile(file, `${lines.join('\n')}\n`);
      const sellersFile = path.join(out, 'sellers.ndjson');
      const sellerLines = sellersText.split('\n');
      sellerLines[1] = sellerLines[1]!.replace(/"tier":"[a-z_]+",/, '');
      expect(sellerLines[1]).not.toContain('"tier"');
      await writeFile(sellersFile, sellerLines.join('\n'));
      await expect(readBundle(out)).rejects.toThrow(`${sellersFile} line 2: tier:`);
      // A line that is not JSON at all (cut short):
      sellerLines[1] = sellerLines[1]!.slice(0, 20);
      await writeFile(sellersFile, sellerLines.join('\n'));
      await expect(readBundle(out)).rejects.toThrow(`${sellersFile} line 2: not valid JSON`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('behavior: compare names the first period and seller whose digest differs, right after the digests', async () => {
    database = await freshDatabase(backend);
    const { snapshotId } = await loadFixture(database.db);
    const stored = await readGenerationRows(database.db, await compute(database.db, snapshotId));
    const other = structuredClone(stored);
    const start = DEC_10 + 21_600n; // 2025-12-10T06:00:00Z: the fixture's first period
    const ofB = other.sellerPeriods.find((p) => p.seller_address === S.B && p.period_start === start)!;
    ofB.sha256 = 'f'.repeat(64);
    other.periods[0]!.sha256 = 'e'.repeat(64);
    other.generation.digests.evidence_sha256 = '0'.repeat(64);
    const diffs = compareGenerationRows(stored, other).map(formatDifference);
    const wasB = stored.sellerPeriods.find((p) => p.seller_address === S.B && p.period_start === start)!;
    expect(diffs.slice(0, 2)).toEqual([
      `digest evidence_sha256: published ${stored.generation.digests.evidence_sha256}, recomputed ${'0'.repeat(64)}`,
      `first_period 2025-12-10T06:00:00Z (${start}) seller ${S.B}: published 4 payments ${String(wasB.sha256)}, recomputed 4 payments ${'f'.repeat(64)}`,
    ]);
    expect(diffs).toHaveLength(4); // and the two period rows themselves
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('publishing races on pg', () => {
  it('behavior: two runs computing at once: one generation is written, the other fails on its key', async () => {
    const database = await freshDatabase('pg');
    try {
      const { snapshotId } = await loadFixture(database.db);
      const results = await Promise.allSettled([compute(database.db, snapshotId), compute(database.db, snapshotId)]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect((rejected.reason as { code?: string }).code).toBe('23505');
      const gens = await database.db.selectFrom('generations').select('generation').execute();
      expect(gens).toEqual([{ generation: 1 }]);
    } finally {
      await database.close();
    }
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('the same inputs on both backends', () => {
  it('behavior: PGlite and Postgres give identical rows and digests', async () => {
    const lite = await freshDatabase('pglite');
    const pg = await freshDatabase('pg');
    try {
      const a = await loadFixture(lite.db);
      const b = await loadFixture(pg.db);
      const ga = await readGenerationRows(lite.db, await compute(lite.db, a.snapshotId));
      const gb = await readGenerationRows(pg.db, await compute(pg.db, b.snapshotId));
      expect(compareGenerationRows(ga, gb)).toEqual([]);
      expect(ga.generation.digests).toEqual(gb.generation.digests);
      expect(ga.sellers.length + ga.listings.length + ga.payments.length + ga.marketDaily.length).toBeGreaterThan(150);
    } finally {
      await lite.close();
      await pg.close();
    }
  });
});

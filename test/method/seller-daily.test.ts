import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { buildBundleDigests, bundleFileText, publishGeneration, readGenerationHead } from '../../src/publish/index.ts';
import { get } from '../api/helpers.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { NOT_A_SELLER, S } from './fixture.ts';
import { compute, loadFixture } from './setup.ts';

/**
 * The per-seller daily series (issue 13), computed by the method over the hand-checked fixture
 * (test/method/fixture.ts), served by GET /api/v1/sellers/{slug}/daily and exported in the bundle.
 * Expected rows, by hand from the fixture's payments:
 * - A: on 2025-12-10 the five ordinary payments 100 + 300 + 200 + 500 + 400 = 1500 from p1, p2, p3;
 *   on 2026-01-01 the payment of 1 at exactly the as-of time, from p3. Nothing else of A counts
 *   (window start, after the as-of block, plain transfer, foreign authorization, self, zero).
 * - B: four payments of 10 on 2025-12-10 from p1, p2, p3, p1: 40 from 3 payers.
 * - F: no payments: no rows.
 */
const A_DAYS = [
  { day: '2025-12-10', payments: 5, revenue_micro: 1500n, payers: 3 },
  { day: '2026-01-01', payments: 1, revenue_micro: 1n, payers: 1 },
];
const B_DAYS = [{ day: '2025-12-10', payments: 4, revenue_micro: 40n, payers: 3 }];

describe.each(backends())('daily series of a seller on $backend', ({ backend }) => {
  let database: TestDatabase;
  let generation: number;
  let app: FastifyInstance;

  beforeAll(async () => {
    database = await freshDatabase(backend);
    const fixture = await loadFixture(database.db);
    generation = await compute(database.db, fixture.snapshotId);
    await publishGeneration(database.db, generation);
    app = await buildApi(database.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const rowsOf = (seller: string) =>
    database.db
      .selectFrom('gen_seller_daily')
      .select(['day', 'payments', 'revenue_micro', 'payers'])
      .where('generation', '=', generation)
      .where('seller_address', '=', seller)
      .orderBy('day')
      .execute();

  it('default: the method writes one row per UTC day with payments, by hand', async () => {
    expect(await rowsOf(S.A)).toEqual(A_DAYS);
    expect(await rowsOf(S.B)).toEqual(B_DAYS);
    expect(await rowsOf(S.F)).toEqual([]);
  });

  it('behavior: GET /sellers/{slug}/daily serves exactly those rows, pinnable by generation', async () => {
    const res = await get(app, `/api/v1/sellers/${S.A}/daily?generation=${generation}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      generation,
      // the default method; over EIP-3009 payments alone its daily rows are 2.0.0's (SPEC
      // "Versions side by side"), so the hand-checked days below hold for both
      method_version: '3.0.0',
      seller_address: S.A,
      days: A_DAYS.map((d) => ({ ...d, revenue_micro: Number(d.revenue_micro) })),
    });
    expect((await get(app, `/api/v1/sellers/${S.F}/daily`)).json.days).toEqual([]);
  });

  it('error: an address that is not a seller of the generation is 404 seller_not_found', async () => {
    const res = await get(app, `/api/v1/sellers/${NOT_A_SELLER}/daily`);
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('seller_not_found');
  });

  it('behavior: the bundle carries the daily series (seller_daily.ndjson)', async () => {
    const head = await readGenerationHead(database.db, generation);
    let text = '';
    for await (const page of bundleFileText(database.db, head, 'seller_daily.ndjson')) text += page.bytes.toString();
    const lines = text.trim().split('\n');
    const files = await buildBundleDigests(database.db, head);
    expect(lines).toContain(
      `{"seller_address":"${S.A}","day":"2025-12-10","payments":5,"revenue_micro":1500,"payers":3}`,
    );
    expect(files.find((f) => f.name === 'seller_daily.ndjson')!.rows).toBe(lines.length);
  });
});

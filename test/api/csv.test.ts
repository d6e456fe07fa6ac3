import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedFixture } from './fixture.ts';
import { get, parseCsv } from './helpers.ts';

/**
 * CSV of the directory and the rankings (issue 13): every row of the generation, and parsed back
 * it gives the same rows as the JSON pages, integers exact (2^53 + 1 of seller A of the fixture).
 * parseCsv (helpers.ts) is a small RFC 4180 reader written for the tests, independent of csv-stringify.
 */

/** A JSON value as the CSV writes it: null empty, lists joined by `;`, numbers as digits. */
const asCsv = (v: unknown): string => (v === null ? '' : Array.isArray(v) ? v.join(';') : String(v));

describe.each(backends())('CSV on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture(db.db);
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  /** Every row of a JSON endpoint, page by page, with the raw JSON text of each integer kept. */
  async function allJson(path: string, key: string, limit: number): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(app, `${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      // exact integers: re-read big numbers from the text
      const exact = JSON.parse(res.text.replace(/:(\d{16,})/g, ':"$1"')) as Record<string, any>;
      out.push(...exact[key]);
      cursor = exact.next_cursor;
    } while (cursor !== null);
    return out;
  }

  it('default: ?format=csv gives every directory row; it round-trips to the JSON rows', async () => {
    const res = await get(app, '/api/v1/sellers?format=csv');
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/csv/);
    expect(String(res.headers['content-disposition'])).toContain('x402-tally-sellers-g1.csv');
    const [header, ...rows] = parseCsv(res.text);
    const json = await allJson('/api/v1/sellers', 'listings', 2);
    expect(header).toEqual(Object.keys(json[0]!));
    expect(rows).toEqual(json.map((r) => header!.map((k) => asCsv(r[k]))));
    expect(rows).toHaveLength(7);
    expect(res.text).toContain(',9007199254740993,'); // 2^53 + 1, not 9007199254740992
  });

  it('behavior: Accept: text/csv on the rankings gives every ranked row', async () => {
    const res = await get(app, '/api/v1/rankings', { accept: 'text/csv' });
    expect(res.status).toBe(200);
    const [header, ...rows] = parseCsv(res.text);
    const json = await allJson('/api/v1/rankings', 'rankings', 1);
    expect(rows).toEqual(json.map((r) => header!.map((k) => asCsv(r[k]))));
    expect(rows.map((r) => r[0])).toEqual(['1', '2']);
  });

  it('behavior: filters and the generation pin apply; JSON stays the default', async () => {
    const rows = parseCsv((await get(app, '/api/v1/sellers?format=csv&category=inference&generation=1')).text).slice(1);
    expect(rows.map((r) => r[0]!.slice(0, 2))).toEqual(['01', '03', '05', '06']);
    expect(
      String((await get(app, '/api/v1/sellers', { accept: 'text/csv, application/json' })).headers['content-type']),
    ).toMatch(/json/);
  });

  it('error: a bad format is a 400 naming format', async () => {
    const res = await get(app, '/api/v1/sellers?format=xml');
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/^format: /);
  });
});

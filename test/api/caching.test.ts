import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { A, publishGeneration, seedFixture } from './fixture.ts';
import { get } from './helpers.ts';

const TTL_MS = 200;

// The pointer's TTL is measured with performance.now() (src/api/published.ts): these tests fake it
// (and Date, for max-age) from before the API is built, so a cached pointer expires when a test
// moves the clock, never because the machine is slow. Timers stay real: a request waits at most
// 100 ms (real) for a pointer refresh before it is served the last state, so on a loaded machine
// the switch to a new state may come a few requests after the clock moves; tests wait for it
// rather than for a time.
const fakeClock = () => vi.useFakeTimers({ toFake: ['Date', 'performance'], now: new Date() });

/** Waits until `done()` holds, checking every 10 ms; the test's own timeout bounds the wait. */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await new Promise((r) => setTimeout(r, 10));
}

describe.each(backends())('API caching and publishing on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let snapshotId: bigint;

  beforeAll(async () => {
    fakeClock();
    db = await freshDatabase(backend);
    ({ snapshotId } = await seedFixture(db.db));
    app = await buildApi(db.db, { rateLimitPerMinute: 1_000_000, cadenceSeconds: 900, cacheTtlMs: TTL_MS });
  });
  afterAll(async () => {
    vi.useRealTimers();
    await app?.close();
    await db?.close();
  });

  it('default: ETag per (generation, URL) and If-None-Match gives a 304 without a body', async () => {
    const first = await get(app, '/api/v1/sellers?limit=2');
    const again = await get(app, '/api/v1/sellers?limit=2');
    const other = await get(app, '/api/v1/sellers?limit=3');
    expect(first.headers.etag).toMatch(/^"1-[A-Za-z0-9_-]{22}"$/);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(other.headers.etag).not.toBe(first.headers.etag);
    for (const tag of [first.headers.etag as string, `W/${first.headers.etag}`, `"x", ${first.headers.etag}`, '*']) {
      const res = await get(app, '/api/v1/sellers?limit=2', { 'if-none-match': tag });
      expect(res.status, tag).toBe(304);
      expect(res.text).toBe('');
      expect(res.headers.etag).toBe(first.headers.etag);
    }
    expect((await get(app, '/api/v1/sellers?limit=2', { 'if-none-match': '"1-other"' })).status).toBe(200);
  });

  it('default: Cache-Control is public with max-age 0 when the next run is overdue', async () => {
    // Generation 1 was published 2026-01-01T03:12Z; with a 900 s cadence the next run was due at 03:27Z.
    const res = await get(app, '/api/v1/rankings');
    const overdue = Date.now() > Date.parse('2026-01-01T03:27:00Z');
    expect(res.headers['cache-control']).toBe(
      overdue ? 'public, max-age=0' : expect.stringMatching(/^public, max-age=\d+$/),
    );
  });

  it('default: CORS is open for GET, and a preflight is answered', async () => {
    const res = await get(app, '/api/v1/meta', { origin: 'https://example.org' });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/api/v1/sellers',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(String(preflight.headers['access-control-allow-methods'])).toContain('GET');
  });

  it('behavior: a publish during traffic switches generation with no failed request', async () => {
    const urls = [
      '/api/v1/sellers?limit=3',
      `/api/v1/sellers/${A}`,
      '/api/v1/rankings',
      '/api/v1/meta',
      '/api/v1/market/daily',
    ];
    const results: { status: number; generation: number; titles: string[]; afterSwitch: boolean }[] = [];
    let stop = false;
    const worker = async (i: number) => {
      for (let k = 0; !stop; k++) {
        // Cached answers never touch I/O: yield so that timers (and the publish) get to run.
        await new Promise((r) => setImmediate(r));
        // Whether an answer of generation 2 had come back before this request started.
        const afterSwitch = results.some((r) => r.generation === 2);
        const res = await get(app, urls[(i + k) % urls.length]!);
        const listings: { title: string | null }[] = res.json?.listings ?? [];
        results.push({
          status: res.status,
          generation: res.json?.generation,
          titles: listings.map((l) => l.title ?? ''),
          afterSwitch,
        });
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    await until(() => results.length >= 10);
    const publishedAt = new Date(Date.now() - 100_000).toISOString();
    await publishGeneration(db.db, snapshotId, 2, ' v2', publishedAt);
    const publishedMs = Date.now();
    // Traffic after the publish, within the TTL: the clock has not moved, so still generation 1.
    const atPublish = results.length;
    await until(() => results.length >= atPublish + 10);
    // The TTL is over: the next request refreshes the pointer, and from then on it is generation 2.
    vi.advanceTimersByTime(TTL_MS + 50);
    const atExpiry = results.length;
    await until(() => results.filter((r) => r.afterSwitch).length >= 10);
    stop = true;
    await Promise.all(workers);

    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.slice(0, atExpiry).every((r) => r.generation === 1)).toBe(true);
    expect(results.filter((r) => r.afterSwitch).every((r) => r.generation === 2)).toBe(true);
    // No torn response: titles carry the generation's suffix exactly when the body says generation 2.
    for (const r of results) for (const t of r.titles) if (t) expect(t.endsWith(' v2')).toBe(r.generation === 2);

    const meta = await get(app, '/api/v1/meta');
    expect(meta.json.generations).toEqual({ latest: 2, retained: [1, 2] });
    // Published 100 s ago with a 900 s cadence: about 800 s until the next expected run.
    const maxAge = Number(
      /max-age=(\d+)/.exec(String((await get(app, '/api/v1/rankings')).headers['cache-control']))![1],
    );
    expect(maxAge).toBeLessThanOrEqual(800);
    expect(maxAge).toBeGreaterThanOrEqual(800 - Math.ceil((Date.now() - publishedMs) / 1000) - 1);

    const pinned = await get(app, '/api/v1/sellers?limit=3&generation=1');
    const latest = await get(app, '/api/v1/sellers?limit=3');
    expect([pinned.json.generation, latest.json.generation]).toEqual([1, 2]);
    expect(pinned.headers.etag).not.toBe(latest.headers.etag);
  });

  it('behavior: a pruned generation is a 404 once the pointer cache expires', async () => {
    expect((await get(app, '/api/v1/rankings?generation=1')).status).toBe(200);
    await db.db.deleteFrom('generations').where('generation', '=', 1).execute();
    vi.advanceTimersByTime(TTL_MS + 50);
    // Served from the last state while the refresh runs (200), then a 404: nothing else.
    const statuses: number[] = [];
    let res = await get(app, '/api/v1/rankings?generation=1');
    for (; res.status !== 404; res = await get(app, '/api/v1/rankings?generation=1')) statuses.push(res.status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect([res.status, res.json.error.code]).toEqual([404, 'generation_not_found']);
    expect((await get(app, '/api/v1/rankings')).json.generation).toBe(2);
  });

  it('error: a failing query is a 500 that says nothing about its cause', async () => {
    await sql`drop table gen_market_daily`.execute(db.db);
    const res = await get(app, '/api/v1/market/daily?from=2025-01-01');
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ error: { code: 'internal_error', message: 'internal error; it has been logged' } });
    expect(res.text).not.toMatch(/gen_market_daily|select|relation|\.ts|\/work|at /i);
  });
});

describe.each(backends())('API rate limit on $backend', ({ backend }) => {
  it('error: the request over the per-client limit is a 429 with Retry-After', async () => {
    const db = await freshDatabase(backend);
    await seedFixture(db.db);
    const app = await buildApi(db.db, { rateLimitPerMinute: 3, cadenceSeconds: 900 });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await get(app, '/api/v1/meta')).status);
      expect(statuses).toEqual([200, 200, 200]);
      const limited = await get(app, '/api/v1/sellers');
      expect(limited.status).toBe(429);
      expect(limited.json.error.code).toBe('rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
      // Another client is not limited.
      const other = await app.inject({ method: 'GET', url: '/api/v1/meta', remoteAddress: '10.0.0.2' });
      expect(other.statusCode).toBe(200);
    } finally {
      await app.close();
      await db.close();
    }
  });
});

describe.each(backends())('API reads racing a prune on $backend', ({ backend }) => {
  it('behavior: a generation pruned while still cached as retained is a 404, never an empty page', async () => {
    const db = await freshDatabase(backend);
    const { snapshotId } = await seedFixture(db.db);
    await publishGeneration(db.db, snapshotId, 2, ' v2');
    // A pointer cache that outlives the prune: the API still believes generation 1 is retained.
    const app = await buildApi(db.db, { rateLimitPerMinute: 1000, cadenceSeconds: 900, cacheTtlMs: 600_000 });
    try {
      expect((await get(app, '/api/v1/meta')).json.generations.retained).toEqual([1, 2]);
      // Generation 1's row is now cached too (a different URL than the ones asked below).
      expect((await get(app, '/api/v1/sellers?generation=1&limit=1')).json.count).toBe(1);
      await db.db.deleteFrom('generations').where('generation', '=', 1).execute();
      for (const url of [
        '/api/v1/sellers?generation=1',
        '/api/v1/rankings?generation=1',
        '/api/v1/market/daily?generation=1',
        `/api/v1/sellers/${A}?generation=1`,
        `/api/v1/sellers/${A}/payments?generation=1`,
      ]) {
        const res = await get(app, url);
        expect([res.status, res.json.error.code], url).toEqual([404, 'generation_not_found']);
      }
      expect((await get(app, '/api/v1/sellers?limit=1')).json.generation).toBe(2);
    } finally {
      await app.close();
      await db.close();
    }
  });
});

describe.each(backends())('API while the database fails on $backend', ({ backend }) => {
  it('behavior: cached responses of the last good generation keep being served; misses fail cleanly', async () => {
    fakeClock();
    const db = await freshDatabase(backend);
    await seedFixture(db.db);
    const app = await buildApi(db.db, { rateLimitPerMinute: 1000, cadenceSeconds: 900, cacheTtlMs: 50 });
    try {
      const before = await get(app, '/api/v1/sellers?limit=2');
      expect(before.status).toBe(200);
      // The API's queries now fail (as during a database restart).
      await sql`alter table generations rename to generations_away`.execute(db.db);
      await sql`alter table gen_listings_fixed rename to gen_listings_away`.execute(db.db);
      vi.advanceTimersByTime(100); // past the 50 ms TTL: the pointer's refresh fails
      const cached = await get(app, '/api/v1/sellers?limit=2');
      expect([cached.status, cached.text]).toEqual([200, before.text]);
      const miss = await get(app, '/api/v1/sellers?limit=3');
      expect([miss.status, miss.json.error.code]).toEqual([500, 'internal_error']);
      await sql`alter table generations_away rename to generations`.execute(db.db);
      await sql`alter table gen_listings_away rename to gen_listings_fixed`.execute(db.db);
      vi.advanceTimersByTime(100);
      expect((await get(app, '/api/v1/sellers?limit=3')).status).toBe(200);
    } finally {
      vi.useRealTimers();
      await app.close();
      await db.close();
    }
  });
});

describe.each(backends())('API while a run holds the database on $backend', ({ backend }) => {
  it('behavior: a pointer refresh blocked by a long transaction does not hold cached responses', async () => {
    fakeClock();
    const db = await freshDatabase(backend);
    await seedFixture(db.db);
    const app = await buildApi(db.db, { rateLimitPerMinute: 1000, cadenceSeconds: 900, cacheTtlMs: 50 });
    try {
      const before = await get(app, '/api/v1/sellers?limit=2');
      // Like a run's transaction: the pointer's table is locked (on PGlite the one connection is
      // held) until the test has its answer. Were the request held by the refresh, it would never
      // come back and the test would time out.
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      let release!: () => void;
      const mayCommit = new Promise<void>((r) => (release = r));
      const holder = db.db.transaction().execute(async (trx) => {
        await sql`lock table generations in access exclusive mode`.execute(trx);
        locked();
        await mayCommit;
      });
      await isLocked;
      vi.advanceTimersByTime(100); // past the 50 ms TTL: this request's refresh waits for the lock
      const during = await get(app, '/api/v1/sellers?limit=2');
      release();
      await holder;
      expect([during.status, during.text]).toEqual([200, before.text]);
    } finally {
      vi.useRealTimers();
      await app.close();
      await db.close();
    }
  });
});

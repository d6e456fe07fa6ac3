import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApi, type ApiOptions } from '../../src/api/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { A, B, publishGeneration, seedFixture } from './fixture.ts';

/**
 * The fast path (src/api/fast-path.ts) answers a cache hit before Fastify. Two APIs on one
 * database, one with it and one without, get the same requests over real HTTP in the same order:
 * every status, header (name, value and order; the Date value aside) and body byte must be equal.
 * Date is frozen (not performance, which times the pointer's TTL) so that max-age and the rate
 * limiter's reset seconds do not tick between the two answers.
 */

interface Raw {
  status: number;
  /** rawHeaders as received, with the Date value blanked. */
  headers: string[];
  body: Buffer;
}

// Kept-alive connections, as browsers and wrk use them (the answers then carry Keep-Alive).
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function request(base: string, method: string, url: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${url}`, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.rawHeaders.map((v, i) =>
            i % 2 === 1 && res.rawHeaders[i - 1]!.toLowerCase() === 'date' ? '-' : v,
          ),
          body: Buffer.concat(chunks),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** Every cached endpoint, with and without parameters, a pinned generation, and a few that are not cached. */
const URLS = [
  '/api/v1/sellers',
  '/api/v1/sellers?limit=2',
  '/api/v1/sellers?generation=1',
  '/api/v1/sellers?generation=2',
  '/api/v1/sellers?format=json',
  '/api/v1/directory',
  '/api/v1/directory?limit=1',
  '/api/v1/rankings',
  '/api/v1/rankings?sort=payers',
  `/api/v1/sellers/${A}`,
  `/api/v1/sellers/${B}?generation=1`,
  `/api/v1/sellers/${A}/payments`,
  `/api/v1/sellers/${A}/periods`,
  `/api/v1/sellers/${A}/daily`,
  '/api/v1/market/daily',
  '/api/v1/market/summary',
  '/api/v1/operators',
  '/api/v1/meta',
  '/api/v1/openapi.json',
  '/api/v1/sellers?limit=0', // a 400: never cached
  '/api/v1/nothing', // a 404
];

// Those the route answers with br or gzip (from a body of 1 KB), then those @fastify/compress reads.
const PICKED = [undefined, 'gzip', 'br', 'gzip, deflate, br', 'br;q=0, gzip'];
const ENCODINGS = [...PICKED, 'identity', '*', 'deflate', 'gzip;q=0'];

describe.each(backends())('API fast path on $backend', ({ backend }) => {
  let db: TestDatabase;
  const apps: FastifyInstance[] = [];
  let fastHits = 0;

  async function start(options: Partial<ApiOptions>): Promise<string> {
    const app = await buildApi(db.db, { rateLimitPerMinute: 1_000_000, cadenceSeconds: 900, ...options });
    apps.push(app);
    return listen(app);
  }

  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-01-01T03:20:00Z') });
    db = await freshDatabase(backend);
    const { snapshotId } = await seedFixture(db.db);
    await publishGeneration(db.db, snapshotId, 2, ' two', '2026-01-01T03:15:00Z');
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await db?.close();
    agent.destroy();
    vi.useRealTimers();
  });

  it('answers every cached endpoint, encoding and validator with the bytes of the route', async () => {
    const fast = await start({ onFastPath: () => fastHits++ });
    const slow = await start({ fastPath: false, onFastPath: () => expect.unreachable('fast path off') });
    let compared = 0;
    let large = 0;
    // Which requests a hit is answered from, by the rule the fast path documents: a URL the first
    // GET cached (a 200 of a snapshot endpoint or /meta, whose second never ends under the frozen
    // Date; not the OpenAPI document), no CSV asked
    // by Accept, and an encoding the route itself picks when the body is 1 KB or more.
    let expectedHits = 0;
    for (const url of URLS) {
      // The first request of each URL fills the cache (the route answers it on both).
      const first = await request(fast, 'GET', url, {});
      expect(await request(slow, 'GET', url, {})).toEqual(first);
      const etag = first.headers[first.headers.findIndex((h) => h.toLowerCase() === 'etag') + 1] ?? '"none"';
      if (first.body.length >= 1024) large++;
      const cached = first.status === 200 && !url.startsWith('/api/v1/openapi');
      for (const encoding of ENCODINGS) {
        for (const validator of [undefined, etag, `W/${etag}, "x"`, '"other"']) {
          for (const accept of [undefined, 'text/csv']) {
            const headers: Record<string, string> = {};
            if (encoding !== undefined) headers['accept-encoding'] = encoding;
            if (validator !== undefined) headers['if-none-match'] = validator;
            if (accept !== undefined) headers.accept = accept;
            const label = `${url} ${JSON.stringify(headers)}`;
            const a = await request(fast, 'GET', url, headers);
            const b = await request(slow, 'GET', url, headers);
            expect(a, label).toEqual(b);
            compared++;
            if (cached && accept !== 'text/csv' && (first.body.length < 1024 || PICKED.includes(encoding)))
              expectedHits++;
          }
        }
      }
      for (const method of ['HEAD', 'OPTIONS']) {
        const headers = { origin: 'https://example.org', 'access-control-request-method': 'GET' };
        expect(await request(fast, method, url, headers)).toEqual(await request(slow, method, url, headers));
      }
    }
    expect(compared).toBe(URLS.length * ENCODINGS.length * 4 * 2);
    // The encodings were tried on bodies that are compressed (1 KB or more) as well as smaller ones.
    expect(large).toBeGreaterThanOrEqual(3);
    expect(fastHits).toBe(expectedHits);
    // About 29 % of the requests compared are hits the fast path may take (436 of 1,512).
    expect(expectedHits).toBeGreaterThan(compared / 4);
  });

  it('takes the fast path for a hit only: not a miss, HEAD, CSV by Accept, or Accept-Encoding: *', async () => {
    let hits = 0;
    const base = await start({ onFastPath: () => hits++ });
    await request(base, 'GET', '/api/v1/rankings', {}); // a miss: the route fills the cache
    expect(hits).toBe(0);
    for (let i = 0; i < 5; i++) await request(base, 'GET', '/api/v1/rankings', {});
    expect(hits).toBe(5);
    await request(base, 'GET', '/api/v1/rankings', { 'accept-encoding': 'gzip' });
    await request(base, 'GET', '/api/v1/rankings', { 'if-none-match': '*' });
    expect(hits).toBe(7);
    await request(base, 'HEAD', '/api/v1/rankings', {});
    const csv = await request(base, 'GET', '/api/v1/rankings', { accept: 'text/csv' });
    expect(csv.headers).toContain('text/csv; charset=utf-8');
    await request(base, 'GET', '/api/v1/rankings', { 'accept-encoding': '*' });
    await request(base, 'GET', '/api/v1/rankings?limit=3', {}); // another URL: a miss
    expect(hits).toBe(7);
  });

  it('counts hits in the rate limit like the route does, and leaves the 429 to the route', async () => {
    const fast = await start({ rateLimitPerMinute: 3 });
    const slow = await start({ rateLimitPerMinute: 3, fastPath: false });
    const answers: Raw[] = [];
    for (let i = 0; i < 6; i++) {
      const a = await request(fast, 'GET', '/api/v1/market/daily', {});
      expect(a, `request ${i + 1}`).toEqual(await request(slow, 'GET', '/api/v1/market/daily', {}));
      answers.push(a);
    }
    // A limit of 3 a minute: remaining 2, 1, 0, then 429s.
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429, 429]);
    const remaining = answers.map((a) => a.headers[a.headers.indexOf('x-ratelimit-remaining') + 1]);
    expect(remaining).toEqual(['2', '1', '0', '0', '0', '0']);
    expect(JSON.parse(answers[3]!.body.toString()).error.code).toBe('rate_limited');
  });
});

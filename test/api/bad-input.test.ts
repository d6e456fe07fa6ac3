import fc from 'fast-check';
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { CATEGORIES } from '../../src/method/constants.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { A, seedFixture } from './fixture.ts';
import { DocumentValidator, get, templateOf } from './helpers.ts';

/** Endpoints with the query parameters each accepts and its largest limit (0: no limit). */
const ENDPOINTS = [
  { path: '/api/v1/meta', params: ['generation'], maxLimit: 0 },
  { path: '/api/v1/sellers', params: ['cursor', 'category', 'limit', 'generation'], maxLimit: 50 },
  { path: '/api/v1/rankings', params: ['cursor', 'category', 'limit', 'generation'], maxLimit: 500 },
  { path: `/api/v1/sellers/${A}`, params: ['generation'], maxLimit: 0 },
  { path: `/api/v1/sellers/${A}/payments`, params: ['cursor', 'limit', 'generation'], maxLimit: 500 },
  { path: '/api/v1/market/daily', params: ['from', 'to', 'generation'], maxLimit: 0 },
];
const withLimit = ENDPOINTS.filter((e) => e.maxLimit > 0);
const withCursor = ENDPOINTS.filter((e) => e.params.includes('cursor'));
const withCategory = ENDPOINTS.filter((e) => e.params.includes('category'));

const anyText = fc.string({ unit: 'binary', maxLength: 80 });
const query = (pairs: [string, string][]) => `?${new URLSearchParams(pairs).toString()}`;

describe.each(backends())('API bad input on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let validator: DocumentValidator;

  /** Requests `url` and checks the contract's error shape against the served document. */
  async function expectError(url: string, status: number, code: string, method = 'GET') {
    const res = await get(app, url, {}, method);
    expect(res.status, url).toBe(status);
    expect(res.json?.error?.code, url).toBe(code);
    expect(validator.check(templateOf(url), status, res.json)).toEqual([]);
    return res;
  }

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture(db.db);
    app = await buildApi(db.db, { rateLimitPerMinute: 1_000_000, cadenceSeconds: 900 });
    validator = new DocumentValidator((await get(app, '/api/v1/openapi.json')).json);
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('error: a malformed cursor is a 400 invalid_cursor naming cursor', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...withCursor),
        anyText.filter((s) => !/^[0-9a-f]{64}$/.test(s)),
        async (e, cursor) => {
          const res = await expectError(e.path + query([['cursor', cursor]]), 400, 'invalid_cursor');
          expect(res.json.error.message).toMatch(/^cursor: /);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('error: a well-formed cursor of another endpoint is a 400 invalid_cursor on rankings and payments', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...withCursor.filter((e) => e.path !== '/api/v1/sellers')),
        fc.stringMatching(/^[0-9a-f]{64}$/).filter((s) => !s.startsWith('01') && !s.startsWith('02')),
        async (e, cursor) => {
          await expectError(e.path + query([['cursor', cursor]]), 400, 'invalid_cursor');
        },
      ),
      { numRuns: 30 },
    );
  });

  it('behavior: any well-formed directory cursor is a page after it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.stringMatching(/^[0-9a-f]{64}$/), async (cursor) => {
        const res = await get(app, `/api/v1/sellers?cursor=${cursor}`);
        expect(res.status).toBe(200);
        for (const l of res.json.listings) expect(l.listing_id > cursor).toBe(true);
      }),
      { numRuns: 30 },
    );
  });

  it('error: a malformed slug is a 400 invalid_slug', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyText.filter((s) => s !== '' && s !== '.' && s !== '..' && !/^0x[0-9a-fA-F]{40}$/.test(s)),
        fc.boolean(),
        async (slug, payments) => {
          const url = `/api/v1/sellers/${encodeURIComponent(slug)}${payments ? '/payments' : ''}`;
          const res = await expectError(url, 400, 'invalid_slug');
          expect(res.json.error.message).toMatch(/^slug: /);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('error: a slug far over any address length is still a 400 invalid_slug, not a 404', async () => {
    for (const slug of ['a'.repeat(500), `0x${'ab'.repeat(20)}${'0'.repeat(1500)}`]) {
      await expectError(`/api/v1/sellers/${slug}`, 400, 'invalid_slug');
      await expectError(`/api/v1/sellers/${slug}/payments`, 400, 'invalid_slug');
    }
  });

  it('error: a request line over the HTTP parser limit is a 431 in the error shape (real socket)', async () => {
    const server = await buildApi(db.db, { rateLimitPerMinute: 1000, cadenceSeconds: 900 });
    await server.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = server.server.address() as net.AddressInfo;
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () =>
          socket.write(`GET /api/v1/sellers?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: t\r\n\r\n`),
        );
        let data = '';
        socket.on('data', (chunk) => (data += chunk.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 431 /);
      expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({
        error: { code: 'request_too_large', message: 'the request line or headers are too large' },
      });
    } finally {
      await server.close();
    }
  });

  it('error: a category outside the 11 values is a 400 naming category', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...withCategory),
        anyText.filter((s) => !(CATEGORIES as readonly string[]).includes(s)),
        async (e, category) => {
          const res = await expectError(e.path + query([['category', category]]), 400, 'invalid_parameter');
          expect(res.json.error.message).toMatch(/^category: /);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('args: limit is accepted exactly when it is a decimal integer within 1..max', async () => {
    const limitText = fc.oneof(
      anyText,
      fc.integer({ min: -10, max: 1000 }).map(String),
      fc.constantFrom('01', '1.0', '1e1', ' 5', '+5', '0x10', '99999999999'),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...withLimit), limitText, async (e, limit) => {
        const ok = /^[1-9][0-9]*$/.test(limit) && Number(limit) <= e.maxLimit;
        const res = await get(app, e.path + query([['limit', limit]]));
        if (ok) {
          expect(res.status).toBe(200);
        } else {
          expect(res.status, limit).toBe(400);
          expect(res.json.error).toMatchObject({
            code: 'invalid_parameter',
            message: expect.stringMatching(/^limit: /),
          });
        }
      }),
      { numRuns: 80 },
    );
  });

  it('args: generation is a 400 when malformed, 404 when not retained, 200 for generation 1', async () => {
    const genText = fc.oneof(
      anyText,
      fc.integer({ min: -5, max: 10 }).map(String),
      fc.constantFrom('2147483647', '2147483648', '1.5', '01', '1e3'),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), genText, async (e, generation) => {
        const res = await get(app, e.path + query([['generation', generation]]));
        const wellFormed =
          /^(0|[1-9][0-9]*)$/.test(generation) && Number(generation) >= 1 && Number(generation) <= 2_147_483_647;
        const expected = !wellFormed ? 400 : generation === '1' ? 200 : 404;
        expect(res.status, generation).toBe(expected);
        if (expected === 400) expect(res.json.error.message).toMatch(/^generation: /);
        if (expected === 404) expect(res.json.error.code).toBe('generation_not_found');
      }),
      { numRuns: 80 },
    );
  });

  it('error: an unknown query parameter is a 400 unknown_parameter naming it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS, { path: '/api/v1/openapi.json', params: [], maxLimit: 0 }),
        anyText.filter((s) => s !== ''),
        anyText,
        async (e, name, value) => {
          fc.pre(!e.params.includes(name));
          const res = await expectError(e.path + query([[name, value]]), 400, 'unknown_parameter');
          expect(res.json.error.message.startsWith(`${name}: `)).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('error: a parameter given twice is a 400 naming it', async () => {
    for (const e of ENDPOINTS) {
      for (const name of e.params) {
        const value =
          name === 'category'
            ? 'inference'
            : name === 'cursor'
              ? '0'.repeat(64)
              : name === 'from' || name === 'to'
                ? '2025-12-30'
                : '1';
        const res = await expectError(
          e.path +
            query([
              [name, value],
              [name, value],
            ]),
          400,
          name === 'cursor' ? 'invalid_cursor' : 'invalid_parameter',
        );
        expect(res.json.error.message).toMatch(new RegExp(`^${name}: must be given once`));
      }
    }
  });

  it('error: an over-long URL is a 414 uri_too_long', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENDPOINTS), fc.integer({ min: 2049, max: 20_000 }), async (e, length) => {
        const url = `${e.path}?pad=${'x'.repeat(Math.max(0, length - e.path.length - 5))}`;
        expect(url.length).toBeGreaterThan(2048);
        await expectError(url, 414, 'uri_too_long');
      }),
      { numRuns: 20 },
    );
  });

  it('error: a method other than GET/HEAD/OPTIONS is a 405 with Allow', async () => {
    const paths = [...ENDPOINTS.map((e) => e.path), '/api/v1/openapi.json', '/api/v1/docs'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...paths),
        fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH'),
        async (path, method) => {
          const res = await expectError(path, 405, 'method_not_allowed', method);
          expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
        },
      ),
      { numRuns: 40 },
    );
  });

  it('behavior: random query strings never cause a 5xx and errors keep the shape', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        fc.array(fc.tuple(fc.constantFrom('cursor', 'category', 'limit', 'generation', 'from', 'to', 'x'), anyText), {
          maxLength: 4,
        }),
        async (e, pairs) => {
          const url = e.path + query(pairs);
          const res = await get(app, url);
          expect(res.status, url).toBeLessThan(500);
          expect(validator.check(templateOf(url), res.status, res.json), url).toEqual([]);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('error: raw malformed URLs (bad percent-encoding, odd characters) are 4xx with the error shape', async () => {
    for (const url of [
      '/api/v1/sellers/%E0%A4%A',
      '/api/v1/sellers?limit=%ZZ',
      '/api/v1/%',
      '/api/v1/sellers?cursor=%00',
      '/api/v1//sellers',
      '/api/v1/market/daily?from=2025-13-01',
      '/api/v1/market/daily?from=2025-12-31&to=2025-12-01',
    ]) {
      const res = await get(app, url);
      expect(res.status, url).toBeGreaterThanOrEqual(400);
      expect(res.status, url).toBeLessThan(500);
      expect(res.json?.error?.code, url).toMatch(/^[a-z_]+$/);
    }
  });
});

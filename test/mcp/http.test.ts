import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A, seedFixture } from '../api/fixture.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { serveMcp } from '../helpers/mcp.ts';

/**
 * Faults of the MCP transport at /mcp (src/mcp/http.ts), over real HTTP on the published fixture
 * generation (test/api/fixture.ts): requests no MCP client sends, written by hand with fetch.
 * After each, the same server still answers GET /api/v1/meta.
 */
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A tools/call message; fixture seller A has 3 payers in the window (test/api/fixture.ts). */
const payersOfA = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'explain_metric', arguments: { address: A, metric: 'payers_30d' } },
});

/** The status of GET /api/v1/meta sent from the given loopback address (the rate limit is per client IP). */
function metaStatus(url: string, localAddress = '127.0.0.1'): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/api/v1/meta`, { localAddress }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      })
      .on('error', reject);
  });
}

describe.each(backends())('MCP over HTTP, faults, on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let url: string;
  const post = (body: unknown, base = url) =>
    fetch(`${base}/mcp`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture(db.db);
    ({ app, url } = await serveMcp(db.db));
  });

  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('error: a batch (a JSON array body) is refused with -32600, whatever its size, and runs no tool', async () => {
    for (const size of [1, 2, 100]) {
      const res = await post(Array.from({ length: size }, (_, i) => payersOfA(i + 1)));
      expect(res.status, `batch of ${size}`).toBe(400);
      const body = (await res.json()) as any;
      expect(body.jsonrpc).toBe('2.0');
      expect(body.id).toBeNull();
      expect(body.error.code).toBe(-32600);
      expect(body.error.message).toMatch(/^Invalid Request: batches are not supported/);
      expect(body.result).toBeUndefined();
    }
    // The same message alone is answered.
    const single = await post(payersOfA(1));
    expect(single.status).toBe(200);
    expect(((await single.json()) as any).result.structuredContent.value).toBe(3);
    expect(await metaStatus(url)).toBe(200);
  });

  it('error: each tools/call counts 1 against the per-client limit; a refused batch counts 1, its calls none', async () => {
    const limited = await serveMcp(db.db, { rateLimitPerMinute: 5 });
    try {
      // 1 of 5: a batch of 100 tools/call is one refused request, whose calls never run.
      const batch = await post(
        Array.from({ length: 100 }, (_, i) => payersOfA(i + 1)),
        limited.url,
      );
      expect(batch.status).toBe(400);
      // 2..5 of 5: four single calls are answered, each reading the API twice without counting it...
      for (let i = 0; i < 4; i++) {
        const res = await post(payersOfA(i + 1), limited.url);
        expect(res.status, `call ${i + 1}`).toBe(200);
        expect(((await res.json()) as any).result.structuredContent.value).toBe(3);
      }
      // ...and the fifth is over the limit: a 429 with Retry-After and the API's error body.
      const refused = await post(payersOfA(5), limited.url);
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const body = (await refused.json()) as any;
      expect(Object.keys(body)).toEqual(['error']);
      expect(body.error.code).toBe('rate_limited');
      expect(body.error.message).toMatch(/^more than 5 requests per minute from this client/);
      // This client is limited; the server answers another.
      expect(await metaStatus(limited.url)).toBe(429);
      expect(await metaStatus(limited.url, '127.0.0.2')).toBe(200);
    } finally {
      await limited.app.close();
    }
  });

  it('error: GET (an event stream), HEAD, DELETE, PUT and PATCH /mcp are 405 with Allow: POST and the API error body', async () => {
    for (const [method, headers] of [
      ['GET', { accept: 'text/event-stream' }],
      ['GET', {}],
      ['HEAD', {}],
      ['DELETE', { 'mcp-session-id': 'x' }],
      ['DELETE', {}],
      ['PUT', {}],
      ['PATCH', {}],
    ] as const) {
      const what = `${method} ${JSON.stringify(headers)}`;
      // A stream held open (the fault) is cut at the end instead of holding the test.
      const aborter = new AbortController();
      try {
        const res = await fetch(`${url}/mcp`, { method, headers, signal: aborter.signal });
        expect(res.status, what).toBe(405);
        expect(res.headers.get('allow'), what).toBe('POST');
        expect(res.headers.get('content-type'), what).toBe('application/json; charset=utf-8');
        if (method !== 'HEAD') {
          expect(await res.json(), what).toEqual({
            error: {
              code: 'method_not_allowed',
              message: `${method} is not allowed on /mcp; MCP is served statelessly: POST one JSON-RPC message`,
            },
          });
        }
      } finally {
        aborter.abort();
      }
    }
    expect(await metaStatus(url)).toBe(200);
  });

  it('error: tools/call with arguments that are not an object is -32602 naming arguments, no schema dump', async () => {
    for (const args of [null, [], 'top', 5, true]) {
      const res = await post({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'top_sellers', arguments: args },
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      expect(body.id).toBe(7);
      expect(body.result).toBeUndefined();
      expect(body.error.code, JSON.stringify(args)).toBe(-32602);
      expect(body.error.message, JSON.stringify(args)).toMatch(/^MCP error -32602: arguments: must be an object/);
      // No zod issue list, no schema: the message is one line of text.
      expect(body.error.message).not.toMatch(/[[\]{}\n]|expected|invalid_type/);
      expect(body.error.data).toBeUndefined();
    }
    // Without a tool name: -32602 naming it.
    const nameless = await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { arguments: {} } });
    expect(((await nameless.json()) as any).error).toEqual({
      code: -32602,
      message: 'MCP error -32602: name: must be a string, the name of a tool; see tools/list',
    });
    // A method this server does not serve is still -32601.
    const unknown = await post({ jsonrpc: '2.0', id: 10, method: 'resources/list' });
    expect(((await unknown.json()) as any).error.code).toBe(-32601);
    // No arguments at all is an empty object: top_sellers takes none.
    const none = await post({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'top_sellers' } });
    expect(((await none.json()) as any).result.structuredContent.generation).toBe(1);
    expect(await metaStatus(url)).toBe(200);
  });
});

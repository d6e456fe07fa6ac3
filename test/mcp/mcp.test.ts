import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { openDatabase } from '../../src/db/index.ts';
import { migrate } from '../../src/db/migrate.ts';
import { A, B, seedFixture } from '../api/fixture.ts';
import { get } from '../api/helpers.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { connectHttp, connectStdio, serveMcp, type ToolResult } from '../helpers/mcp.ts';

/**
 * The MCP server through the SDK's own client, over both transports, on the published fixture
 * generation (test/api/fixture.ts). The expected value of every tool is what the API answers to
 * the same question, read here over HTTP from the API itself; the client checks each
 * structuredContent against the output schema the server lists.
 */

describe.each(backends())('MCP on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let dataDir: string | undefined;
  const clients: Record<'http' | 'stdio', Client> = {} as never;

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture(db.db);
    ({ app, url: base } = await serveMcp(db.db));
    clients.http = await connectHttp(base);

    // stdio: `x402-tally mcp` as an MCP client starts it, on a database holding the same fixture.
    let env: Record<string, string>;
    if (backend === 'pg') {
      env = { DATABASE_URL: db.url! };
    } else {
      dataDir = mkdtempSync(path.join(tmpdir(), 'tally-mcp-'));
      const embedded = await openDatabase({ dataDir, fromTemplate: true }); // unpacked, not initdb: migrate is a no-op
      await migrate(embedded.db);
      await seedFixture(embedded.db);
      await embedded.close();
      env = { DATA_DIR: dataDir };
    }
    clients.stdio = await connectStdio(env);
  });

  afterAll(async () => {
    await clients.http?.close();
    await clients.stdio?.close();
    await app?.close();
    await db?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** The API's own answer to a URL. */
  const api = async (url: string) => {
    const res = await get(app, url);
    expect(res.status, url).toBe(200);
    return { text: res.text, json: res.json };
  };

  for (const transport of ['http', 'stdio'] as const) {
    const call = async (name: string, args: Record<string, unknown>) =>
      (await clients[transport].callTool({ name, arguments: args })) as ToolResult;

    describe(`over ${transport}`, () => {
      it('default: lists the eight tools, each with input and output schemas', async () => {
        const { tools } = await clients[transport].listTools();
        expect(tools.map((t) => t.name).sort()).toEqual([
          'explain_metric',
          'get_seller',
          'list_sellers',
          'market_daily',
          'market_summary',
          'search_listings',
          'status',
          'top_sellers',
        ]);
        for (const t of tools) {
          expect(t.inputSchema.type).toBe('object');
          expect(t.outputSchema?.type).toBe('object');
          expect(t.annotations?.readOnlyHint).toBe(true);
        }
      });

      it('behavior: search_listings answers what /api/v1/sellers?q= answers', async () => {
        for (const [args, url] of [
          [{ query: 'inference' }, '/api/v1/sellers?q=inference'],
          [
            { query: 'example', category: 'inference', verified_only: true, limit: 1 },
            '/api/v1/sellers?q=example&category=inference&tier=verified&limit=1',
          ],
        ] as const) {
          const result = await call('search_listings', args);
          const expected = await api(url);
          expect(result.isError).toBeFalsy();
          expect(result.content[0]!.text).toBe(expected.text);
          expect(result.structuredContent).toEqual(expected.json);
        }
      });

      it('behavior: get_seller, top_sellers, market_daily and list_sellers answer what the API answers', async () => {
        // get_seller with detail: the profile, and the daily series of the same generation under `daily`.
        const seller = await call('get_seller', { address: A.toUpperCase().replace('0X', '0x'), detail: true });
        const profile = await api(`/api/v1/sellers/${A}`);
        const daily = await api(`/api/v1/sellers/${A}/daily?generation=1`);
        expect(seller.structuredContent!.profile).toEqual({ ...profile.json, daily: daily.json.days });
        // without: a card of the same profile's values, in under 2 KB (issue 23), for every seller served
        const p = profile.json;
        expect((await call('get_seller', { address: A })).structuredContent).toEqual({
          generation: 1,
          method_version: '1.0.0',
          seller_address: p.seller_address,
          display_name: p.display_name,
          tier: p.tier,
          evidence_state: p.evidence_state,
          rank: p.rank,
          farm_flag: p.farm_flag,
          farm_reasons: p.farm_reasons,
          values: {
            verified_revenue_30d_micro: p.metrics.verified_revenue_30d_micro.value,
            median_payment_30d_micro: p.metrics.median_payment_30d_micro.value,
            payments_30d: p.metrics.payments_30d.value,
            payers_30d: p.metrics.payers_30d.value,
            external_revenue_30d_micro: null,
            external_payments_30d: null,
            external_payers_30d: null,
          },
          first_payment_at: p.first_payment_at,
          last_payment_at: p.last_payment_at,
          listing_count: p.listing_count,
          listings: p.listings.slice(0, 3).map((l: Record<string, unknown>) => ({
            resource_url: l.resource_url,
            title: l.title,
            category: l.category,
          })),
        });
        const sellers = (await api('/api/v1/rankings?limit=500')).json.rankings as { seller_address: string }[];
        expect(sellers.length).toBeGreaterThan(0);
        for (const { seller_address } of sellers) {
          const card = await call('get_seller', { address: seller_address });
          expect(Buffer.byteLength(card.content[0]!.text), seller_address).toBeLessThan(2048);
        }
        // status: the freshness and generations of /meta
        const meta = (await api('/api/v1/meta')).json;
        const status = (await call('status', {})).structuredContent!;
        expect(status.generations).toEqual(meta.generations);
        expect(status.as_of).toEqual(meta.as_of);
        expect(status.method_version).toBe(meta.method_version);
        expect(Object.keys(status.freshness).sort()).toEqual(['age_seconds', 'as_of_lag_seconds', 'stale']);
        const pairs: [string, Record<string, unknown>, string][] = [
          ['top_sellers', { limit: 1 }, '/api/v1/rankings?limit=1'],
          ['top_sellers', { category: 'inference' }, '/api/v1/rankings?category=inference'],
          [
            'market_daily',
            { from: '2025-12-30', to: '2025-12-31' },
            '/api/v1/market/daily?from=2025-12-30&to=2025-12-31',
          ],
          ['market_daily', {}, '/api/v1/market/daily'],
          ['market_summary', {}, '/api/v1/market/summary'],
          ['list_sellers', { sort: 'payers', limit: 2 }, '/api/v1/directory?sort=payers&limit=2'],
          ['list_sellers', { query: 'example' }, '/api/v1/directory?q=example&limit=20'],
        ];
        for (const [name, args, url] of pairs) {
          const result = await call(name, args);
          const expected = await api(url);
          expect(result.content[0]!.text, name).toBe(expected.text);
          expect(result.structuredContent, name).toEqual(expected.json);
          expect(result.structuredContent!.generation).toBe(1);
          expect(result.structuredContent!.method_version).toBe('1.0.0');
        }
      });

      it('behavior: explain_metric gives the number, its provenance, the payments behind it and the audit command', async () => {
        const result = await call('explain_metric', { address: A, metric: 'verified_revenue_30d_micro' });
        const profile = (await api(`/api/v1/sellers/${A}`)).json;
        const payments = (await api(`/api/v1/sellers/${A}/payments?limit=5`)).json;
        const out = result.structuredContent!;
        expect(out.generation).toBe(1);
        expect(out.method_version).toBe('1.0.0');
        expect(out.provenance).toEqual(profile.metrics.verified_revenue_30d_micro.provenance);
        expect(out.sample_payments).toEqual(payments.payments);
        expect(out.sample_payments).toHaveLength(5);
        expect(out.audit_command).toBe(`npx x402-tally audit --generation 1 --seller ${A}`);
        // 2^53 + 1 micro-USDC (fixture seller A): exact in the text, as the API writes it
        expect(result.content[0]!.text).toContain('"value":9007199254740993,');
        const median = await call('explain_metric', { address: B, metric: 'median_payment_30d_micro' });
        expect(median.structuredContent!.value).toBe(10_000_000);
      });

      it('behavior: generation pins a retained generation; another is a tool error with the API code', async () => {
        expect((await call('top_sellers', { generation: 1 })).structuredContent!.generation).toBe(1);
        const result = await call('top_sellers', { generation: 3 }); // built, never published
        expect(result.isError).toBe(true);
        expect(JSON.parse(result.content[0]!.text).error.code).toBe('generation_not_found');
      });

      it('error: bad arguments are tool errors naming the argument', async () => {
        const cases: [string, Record<string, unknown>, string][] = [
          ['search_listings', { query: '' }, 'query: '],
          ['search_listings', { query: '%%%' }, 'query: '],
          ['search_listings', { query: 'a'.repeat(201) }, 'query: '],
          ['search_listings', {}, 'query: '],
          ['search_listings', { query: 'x', limit: 51 }, 'limit: '],
          ['top_sellers', { limit: 0 }, 'limit: '],
          ['top_sellers', { category: 'nope' }, 'category: '],
          ['get_seller', { address: '0x12' }, 'address: '],
          ['explain_metric', { address: A, metric: 'bogus' }, 'metric: '],
          ['market_daily', { from: '2025-13-01' }, 'from: '],
          ['market_daily', { to: '2025-12-01', from: '2025-12-31' }, 'from: '],
          ['top_sellers', { foo: 1 }, 'foo: '],
          // issue 20: text no database text can hold, a year 0, a cursor far over the API's URL length
          ['search_listings', { query: 'a\0b' }, 'query: '],
          ['search_listings', { query: 'weather\uD800' }, 'query: '],
          ['market_daily', { from: '0000-01-01' }, 'from: '],
          ['market_daily', { to: '0000-02-29' }, 'to: '],
          ['top_sellers', { cursor: 'x'.repeat(10_240) }, 'cursor: '],
          ['get_seller', { address: `0x${'99'.repeat(20)}` }, ''],
        ];
        for (const [name, args, prefix] of cases) {
          const result = await call(name, args);
          expect(result.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
          const body = JSON.parse(result.content[0]!.text);
          expect(body.error.message.startsWith(prefix), body.error.message).toBe(true);
          expect(body.error.code).toMatch(/^(invalid_parameter|seller_not_found)$/);
          expect(result.content[0]!.text).not.toMatch(/\bat .*\.ts:\d+/); // no stack trace
        }
        // The same server still answers.
        expect((await fetch(`${base}/api/v1/meta`)).status).toBe(200);
        expect((await call('market_daily', {})).isError).toBeFalsy();
      });
    });
  }

  it("behavior: /mcp is under the per-client rate limit, and the tools' own reads are not counted", async () => {
    const { app: limited, url } = await serveMcp(db.db, { rateLimitPerMinute: 10 });
    const post = (body: unknown) =>
      fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(body),
      });
    const explain = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'explain_metric', arguments: { address: A, metric: 'payers_30d' } },
    };
    try {
      // 10 requests a minute per client: 10 calls of a tool that reads the API twice each all succeed...
      for (let i = 0; i < 10; i++) {
        const res = await post(explain);
        expect(res.status).toBe(200);
        expect(((await res.json()) as any).result.structuredContent.value).toBe(3);
      }
      // ...and the 11th request of the client is refused.
      const refused = await post(explain);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as any).error.code).toBe('rate_limited');
    } finally {
      await limited.close();
    }
  });
});

describe('llms.txt', () => {
  let db: TestDatabase;
  let app: FastifyInstance;
  beforeAll(async () => {
    db = await freshDatabase('pglite');
    await seedFixture(db.db);
    app = await buildApi(db.db, { rateLimitPerMinute: 1000, cadenceSeconds: 900 });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('default: a plain-text guide that names every endpoint, the MCP endpoint, and how to cite', async () => {
    const res = await get(app, '/llms.txt');
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/plain/);
    expect(res.text.startsWith('# x402-tally\n')).toBe(true);
    const doc = (await get(app, '/api/v1/openapi.json')).json;
    for (const p of Object.keys(doc.paths))
      if (!p.endsWith('/openapi.json') && !p.endsWith('/docs'))
        expect(res.text, p).toContain(p.replace('{slug}', '{address}'));
    for (const words of [
      '/mcp',
      'x402-tally mcp',
      'generation',
      'method_version',
      'micro-USDC',
      'not verified',
      'seller',
    ])
      expect(res.text).toContain(words);
    expect((await get(app, '/llms.txt?x=1')).status).toBe(400);
  });
});

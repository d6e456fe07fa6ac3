import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { A, B, C, D, listingId, seedFixture, sellerEvidence, txHash } from './fixture.ts';
import { DocumentValidator, get, templateOf } from './helpers.ts';

const WINDOW = { start: '2025-12-02T03:00:00.000Z', end: '2026-01-01T03:00:00.000Z' };

// Hand-written rows of the fixture (test/api/fixture.ts explains each number).
const ROW_1 = {
  listing_id: '01'.repeat(32),
  seller_address: A,
  verifiability: 'base_usdc',
  resource_url: 'https://l1.example/api',
  title: 'Alpha inference',
  network: 'base',
  description: 'LLM completions',
  category: 'inference',
  category_source: 'seller_asserted',
  tier: 'verified',
  evidence_state: 'verified',
  verified_revenue_30d_micro: 9007199254740993,
  median_payment_30d_micro: 3000000,
  farm_flag: 0,
  farm_reasons: null,
  sibling_listings: 2,
};
const ROW_6 = {
  listing_id: '06'.repeat(32),
  seller_address: null,
  verifiability: 'other_rail',
  resource_url: 'https://l6.example/api',
  title: null,
  network: 'solana',
  description: null,
  category: 'inference',
  category_source: 'auto',
  tier: 'listed_only',
  evidence_state: 'not_observed',
  verified_revenue_30d_micro: null,
  median_payment_30d_micro: null,
  farm_flag: null,
  farm_reasons: null,
  sibling_listings: 0,
};

describe.each(backends())('API contract on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let validator: DocumentValidator;
  const seen: string[] = [];

  /** GET through the app; every body is checked against the served OpenAPI document. */
  async function call(url: string, headers: Record<string, string> = {}) {
    const res = await get(app, url, headers);
    if (res.status !== 304) {
      expect(validator.check(templateOf(url), res.status, res.json), `${url} -> ${res.status}`).toEqual([]);
    }
    seen.push(templateOf(url));
    return res;
  }

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture(db.db);
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    const doc = await get(app, '/api/v1/openapi.json');
    expect(doc.json.openapi).toBe('3.1.0');
    expect(doc.json.info.version).toBe('1.0.0');
    validator = new DocumentValidator(doc.json);
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('default: /meta describes the published generation', async () => {
    const before = Date.now();
    const res = await call('/api/v1/meta');
    const after = Date.now();
    expect(res.status).toBe(200);
    const generatedMs = Date.parse('2026-01-01T03:10:00Z');
    const { freshness, ...rest } = res.json;
    expect(freshness.age_seconds).toBeGreaterThanOrEqual(Math.floor((before - generatedMs) / 1000));
    expect(freshness.age_seconds).toBeLessThanOrEqual(Math.floor((after - generatedMs) / 1000));
    // as-of block time of the fixture: 2026-01-01T03:00:00Z (AS_OF_TS)
    const asOfMs = Date.parse('2026-01-01T03:00:00Z');
    expect(freshness.as_of_lag_seconds).toBeGreaterThanOrEqual(Math.floor((before - asOfMs) / 1000));
    expect(freshness.as_of_lag_seconds).toBeLessThanOrEqual(Math.floor((after - asOfMs) / 1000));
    expect(freshness.stale).toBe(after - generatedMs > 1_800_000 || after - asOfMs > 1_800_000 + 3_600_000);
    expect(rest).toEqual({
      api_version: '1.0.0',
      method_version: '1.0.0',
      generation: 1,
      generated_at: '2026-01-01T03:10:00.000Z',
      as_of: { block_number: 40000000, block_hash: `0x${'ee'.repeat(32)}`, timestamp: '2026-01-01T03:00:00.000Z' },
      window: { ...WINDOW, seconds: 2592000 },
      cadence: { interval_seconds: 900, next_run_expected_at: '2026-01-01T03:27:00.000Z' },
      // publicChain not given (as on the demo): the chain is not said to be public Base, no explorer
      chain: { chain_id: 8453, public: false, explorer_url: null },
      constants: {
        chain_id: 8453,
        usdc_contract: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
        window_seconds: 2592000,
        evidence_min_payments: 5,
        evidence_min_payers: 3,
        farm_listing_threshold: 50,
        farm_top_payer_share: 0.9,
        farm_top_payer_min_payments: 10,
      },
      classes: null, // method 3.0.0's (test/api/method3.test.ts)
      sources: [
        {
          name: 'catalog',
          source: 'bazaar-catalog-2025-12-31.json',
          fetched_at: '2026-01-01T03:00:05.000Z',
          items: 9,
          listings: 7,
          rejected: 2,
          sha256: 'c5'.repeat(32),
          x402_contract_pay_to: null,
        },
        {
          name: 'base_usdc',
          chain_id: 8453,
          contract: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
          indexed_to_block: 40000000,
          indexed_to_timestamp: '2026-01-01T03:00:00.000Z',
          lag_seconds: 30,
        },
      ],
      digests: { catalog_sha256: 'c5'.repeat(32), evidence_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      generations: { latest: 1, retained: [1] },
    });
  });

  it('behavior: the directory walked with next_cursor returns every listing once, ascending', async () => {
    const ids: string[] = [];
    const pages: number[] = [];
    let url = '/api/v1/sellers?limit=2';
    for (;;) {
      const res = await call(url);
      expect(res.status).toBe(200);
      expect(res.json.count).toBe(res.json.listings.length);
      expect(res.json.generation).toBe(1);
      ids.push(...res.json.listings.map((l: { listing_id: string }) => l.listing_id));
      pages.push(res.json.count);
      if (res.json.next_cursor === null) break;
      expect(res.json.next_cursor).toBe(ids[ids.length - 1]);
      url = `/api/v1/sellers?limit=2&cursor=${res.json.next_cursor}`;
    }
    expect(pages).toEqual([2, 2, 2, 1]);
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7].map(listingId));
    const all = await call('/api/v1/sellers');
    expect(all.json.count).toBe(7);
    expect(all.json.next_cursor).toBeNull();
    expect(all.json.listings[0]).toEqual(ROW_1);
    expect(all.json.listings[5]).toEqual(ROW_6);
    expect(all.json.listings[2].description).toBe('Chat "quoted" \\ text');
  });

  it('behavior: a category page holds only that category', async () => {
    const first = await call('/api/v1/sellers?category=inference&limit=2');
    expect(first.json.listings.map((l: { listing_id: string }) => l.listing_id)).toEqual([listingId(1), listingId(3)]);
    const second = await call(`/api/v1/sellers?category=inference&limit=2&cursor=${first.json.next_cursor}`);
    expect(second.json.listings.map((l: { listing_id: string }) => l.listing_id)).toEqual([listingId(5), listingId(6)]);
    expect(second.json.next_cursor).toBeNull();
    const none = await call('/api/v1/sellers?category=communications');
    expect(none.json).toMatchObject({ count: 0, next_cursor: null, listings: [] });
  });

  it('behavior: a value above 2^53 is written with all its digits', async () => {
    const res = await call('/api/v1/sellers?limit=1');
    expect(res.text).toContain('"verified_revenue_30d_micro":9007199254740993,');
    const market = await call('/api/v1/market/daily?from=2025-12-31');
    expect(market.text).toContain('"volume_micro":9007199254740993,');
  });

  it('default: rankings by rank with a cursor, and by category', async () => {
    const res = await call('/api/v1/rankings?limit=1');
    expect(res.json).toEqual({
      count: 1,
      next_cursor: `01${'0'.repeat(61)}1`,
      generation: 1,
      method_version: '1.0.0',
      window: WINDOW,
      rankings: [
        {
          rank: 1,
          seller_address: A,
          slug: A,
          display_name: 'Alpha inference',
          verified_revenue_30d_micro: 9007199254740993,
          median_payment_30d_micro: 3000000,
          payments_30d: 5,
          payers_30d: 3,
          listing_count: 2,
          categories: ['data-access', 'inference'],
          farm_flag: 0,
          farm_reasons: null,
          external_revenue_30d_micro: null,
          external_payments_30d: null,
          external_payers_30d: null,
        },
      ],
    });
    expect(res.text).toContain('"verified_revenue_30d_micro":9007199254740993,');
    const next = await call(`/api/v1/rankings?limit=1&cursor=${res.json.next_cursor}`);
    expect(next.json.next_cursor).toBeNull();
    expect(next.json.rankings).toEqual([
      {
        rank: 2,
        seller_address: B,
        slug: B,
        display_name: 'Beta',
        verified_revenue_30d_micro: 82000000,
        median_payment_30d_micro: 10000000,
        payments_30d: 10,
        payers_30d: 3,
        listing_count: 1,
        categories: ['inference'],
        farm_flag: 1,
        farm_reasons: '["top_payer_share>0.9"]',
        external_revenue_30d_micro: null,
        external_payments_30d: null,
        external_payers_30d: null,
      },
    ]);
    expect(
      (await call('/api/v1/rankings?category=data-access')).json.rankings.map((r: { rank: number }) => r.rank),
    ).toEqual([1]);
    expect((await call('/api/v1/rankings?category=search-retrieval')).json.count).toBe(0);
  });

  it('default: a seller profile carries per-metric provenance', async () => {
    const res = await call(`/api/v1/sellers/${A.toUpperCase().replace('0X', '0x')}`);
    expect(res.status).toBe(200);
    const provenance = (rule: string) => ({
      rule,
      method_version: '1.0.0',
      source: {
        chain_id: 8453,
        contract: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
        event: 'Transfer+AuthorizationUsed',
      },
      window: WINDOW,
      as_of_block: 40000000,
      inputs: { payments: 5, first_block: 39000001, last_block: 39500000 },
      evidence_sha256: sellerEvidence(A),
    });
    expect(res.json).toEqual({
      // display_name: listing 1's title (listing 2 has none)
      seller_address: A,
      slug: A,
      display_name: 'Alpha inference',
      generation: 1,
      method_version: '1.0.0',
      tier: 'verified',
      evidence_state: 'verified',
      rank: 1,
      listing_count: 2,
      farm_flag: 0,
      farm_reasons: null,
      metrics: {
        verified_revenue_30d_micro: {
          value: 9007199254740993,
          provenance: provenance('revenue.sum_verified_payments'),
        },
        median_payment_30d_micro: { value: 3000000, provenance: provenance('median.lower_median') },
        payments_30d: { value: 5, provenance: provenance('payments.count') },
        payers_30d: { value: 3, provenance: provenance('payers.count_distinct') },
        // method 3.0.0's, null before (test/api/method3.test.ts)
        external_revenue_30d_micro: null,
        external_payments_30d: null,
        external_payers_30d: null,
      },
      by_class: null,
      internal: null,
      // A's listings share no host with another seller's: in no operator group
      operator_group: null,
      // block 39,000,001 is 1,999,999 blocks of 2 s before the as-of time 2026-01-01T03:00:00Z
      first_payment_at: '2025-12-08T23:26:42.000Z',
      last_payment_at: '2025-12-20T13:13:20.000Z',
      listings: [ROW_1, expect.objectContaining({ listing_id: listingId(2), category: 'data-access', title: null })],
    });
    expect(res.text).toContain('"verified_revenue_30d_micro":{"value":9007199254740993,');
    const idle = await call(`/api/v1/sellers/${D}`);
    expect(idle.json).toMatchObject({
      rank: null,
      first_payment_at: null,
      last_payment_at: null,
      evidence_state: 'not_observed',
    });
    expect(idle.json.metrics.median_payment_30d_micro.value).toBeNull();
    expect(idle.json.metrics.median_payment_30d_micro.provenance.inputs).toEqual({
      payments: 0,
      first_block: null,
      last_block: null,
    });
  });

  it('default: a 1.0.0 generation serves its seller periods as none (its digest is the flat 1.0.0 one)', async () => {
    const res = await call(`/api/v1/sellers/${A}/periods`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      generation: 1,
      method_version: '1.0.0',
      seller_address: A,
      slug: A,
      window: WINDOW,
      digest_period_seconds: null,
      evidence_sha256: sellerEvidence(A),
      periods: [],
    });
  });

  it('default: evidence payments newest first, window only, paged', async () => {
    const first = await call(`/api/v1/sellers/${A}/payments?limit=2`);
    expect(first.json.payments).toEqual([
      {
        tx_hash: txHash(5),
        log_index: 1,
        block_number: 39500000,
        block_timestamp: '2025-12-20T13:13:20.000Z',
        payer: `0x${'02'.repeat(20)}`,
        value_micro: 9007199244740993,
        class: null,
        internal_reason: null,
      },
      // 800,000 blocks x 2 s = 1,600,000 s (18 d 12 h 26 min 40 s) before 2026-01-01T03:00:00Z
      {
        tx_hash: txHash(4),
        log_index: 7,
        block_number: 39200000,
        block_timestamp: '2025-12-13T14:33:20.000Z',
        payer: `0x${'01'.repeat(20)}`,
        value_micro: 4000000,
        class: null,
        internal_reason: null,
      },
    ]);
    expect(first.text).toContain('"value_micro":9007199244740993,');
    const txs = first.json.payments.map((p: { tx_hash: string }) => p.tx_hash);
    let cursor = first.json.next_cursor;
    while (cursor) {
      const page = await call(`/api/v1/sellers/${A}/payments?limit=2&cursor=${cursor}`);
      txs.push(...page.json.payments.map((p: { tx_hash: string }) => p.tx_hash));
      cursor = page.json.next_cursor;
    }
    // tx 40 (before the window), 41 (no authorization) and 42 (after the as-of block) are not evidence.
    expect(txs).toEqual([5, 4, 3, 2, 1].map(txHash));
    const c = await call(`/api/v1/sellers/${C}/payments`);
    expect(c.json.payments.map((p: { value_micro: number }) => p.value_micro)).toEqual([200000, 100000]);
    const d = await call(`/api/v1/sellers/${D}/payments`);
    expect(d.json).toMatchObject({ count: 0, next_cursor: null, payments: [] });
  });

  it('default: market days newest first, within from/to', async () => {
    const all = await call('/api/v1/market/daily');
    expect(all.json.days.map((d: { day: string }) => d.day)).toEqual(['2025-12-31', '2025-12-30', '2025-12-29']);
    expect(all.json.days[2]).toEqual({
      day: '2025-12-29',
      payments: 0,
      volume_micro: 0,
      payers: 0,
      sellers_paid: 0,
      median_payment_micro: null,
      tracked_sellers: 4,
      tracked_listings: 5,
      external_volume_micro: null,
    });
    const some = await call('/api/v1/market/daily?from=2025-12-30&to=2025-12-30');
    expect(some.json.days.map((d: { day: string }) => d.day)).toEqual(['2025-12-30']);
  });

  it('default: a generation written without operator groups and summary (as before migration 0038) says so', async () => {
    // (the fixture writes its generation's rows by hand, gen_outputs not among them: test/api/operators.test.ts
    // has the computed ones)
    const ops = await call('/api/v1/operators');
    expect(ops.json).toEqual({
      count: 0,
      next_cursor: null,
      generation: 1,
      method_version: '1.0.0',
      computed: false,
      groups: [],
    });
    const one = await call(`/api/v1/operators/op_${A.slice(2)}`);
    expect([one.status, one.json.error.code]).toEqual([404, 'operator_not_found']);
    const summary = await call('/api/v1/market/summary');
    expect(summary.json).toEqual({
      generation: 1,
      method_version: '1.0.0',
      computed: false,
      periods: { last_7d: null, prev_7d: null, last_30d: null },
      change: { payments: null, volume: null, external_volume: null, payers: null, sellers_paid: null },
    });
  });

  it('args: ?generation pins a retained generation; others are 404 generation_not_found', async () => {
    const latest = await call('/api/v1/sellers?limit=3');
    const pinned = await call('/api/v1/sellers?limit=3&generation=1');
    expect(pinned.json).toEqual(latest.json);
    for (const url of [
      '/api/v1/sellers?generation=3',
      '/api/v1/meta?generation=2',
      `/api/v1/sellers/${A}?generation=3`,
      '/api/v1/rankings?generation=99',
      '/api/v1/market/daily?generation=3',
      `/api/v1/sellers/${A}/payments?generation=3`,
      '/api/v1/operators?generation=3',
      '/api/v1/market/summary?generation=3',
    ]) {
      const res = await call(url);
      expect(res.status, url).toBe(404);
      expect(res.json.error.code).toBe('generation_not_found');
    }
  });

  it('error: unknown seller, bad slug, unknown route', async () => {
    const unknown = await call(`/api/v1/sellers/0x${'99'.repeat(20)}`);
    expect([unknown.status, unknown.json.error.code]).toEqual([404, 'seller_not_found']);
    const bad = await call('/api/v1/sellers/0x123');
    expect([bad.status, bad.json.error.code]).toEqual([400, 'invalid_slug']);
    expect(bad.json.error.message).toMatch(/^slug: /);
    const route = await call('/api/v1/nope');
    expect([route.status, route.json.error.code]).toEqual([404, 'not_found']);
  });

  it('behavior: every documented operation was exercised', () => {
    const documented = [
      '/api/v1/meta',
      '/api/v1/sellers',
      '/api/v1/rankings',
      '/api/v1/sellers/{slug}',
      '/api/v1/sellers/{slug}/payments',
      '/api/v1/market/daily',
      '/api/v1/market/summary',
      '/api/v1/operators',
      '/api/v1/operators/{id}',
    ];
    for (const path of documented) expect(seen).toContain(path);
  });

  it('behavior: HEAD answers like GET without a body; the docs page links the document', async () => {
    const head = await app.inject({ method: 'HEAD', url: '/api/v1/rankings' });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers.etag).toBe((await get(app, '/api/v1/rankings')).headers.etag);
    const docs = await get(app, '/api/v1/docs');
    expect(docs.status).toBe(200);
    expect(docs.headers['content-type']).toMatch(/^text\/html/);
    expect(docs.text).toContain('spec-url="openapi.json"');
  });
});

describe.each(backends())('API before the first publish on $backend', ({ backend }) => {
  it('error: every snapshot endpoint is 503 no_generation', async () => {
    const db = await freshDatabase(backend);
    const app = await buildApi(db.db, { rateLimitPerMinute: 1000, cadenceSeconds: 900 });
    try {
      const validator = new DocumentValidator((await get(app, '/api/v1/openapi.json')).json);
      for (const url of [
        '/api/v1/meta',
        '/api/v1/sellers',
        '/api/v1/rankings',
        `/api/v1/sellers/${A}`,
        `/api/v1/sellers/${A}/payments`,
        '/api/v1/market/daily',
      ]) {
        const res = await get(app, url);
        expect([res.status, res.json.error.code], url).toEqual([503, 'no_generation']);
        expect(res.headers['retry-after']).toBe('60');
        expect(validator.check(templateOf(url), 503, res.json)).toEqual([]);
      }
    } finally {
      await app.close();
      await db.close();
    }
  });
});

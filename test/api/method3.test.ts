import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { AUTHORIZATION_USED_TOPIC, TRANSFER_TOPIC } from '../../src/chain/events.ts';
import { X402_CONTRACTS, X402_TOPIC0 } from '../../src/chain/x402.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { A, B, C, D, listingId, txHash } from './fixture.ts';
import { A_LABELS, E, EXACT_PROXY, EXTERNAL_VOLUME, F, GEN2, GEN3, SELLERS3, seedFixture3 } from './fixture3.ts';
import { DocumentValidator, parseCsv } from './helpers.ts';
import { BASE_USDC as USDC } from '../../src/config/index.ts';

/**
 * Method 3.0.0's published numbers as the API serves them (issue 22), over real HTTP on both
 * backends: a 3.0.0 generation (4, the latest) beside a 2.0.0 one (2), their rows written by
 * hand in test/api/fixture3.ts (the expected values below come from its table, not from the API).
 * The evidence view is the one stand-in: fixture3.ts labels A's payments with a class and an
 * internal reason, as the view of the (separate) 3.0.0 migration does.
 */

const CLASSES = ['eip3009', 'permit2_exact', 'permit2_upto', 'batch_settlement'] as const;

/** A body parsed with every `*_micro` and metric `value` integer kept as its exact digits. */
function exact(text: string): any {
  return JSON.parse(text.replace(/("(?:[a-z0-9_]*_micro|value)":)(\d+)/g, '$1"$2"'));
}

/** The ranked sellers of generation 4 by external revenue, ties in the default (rank) order: computed here. */
function externalOrder(): string[] {
  return SELLERS3.filter((s) => s.rank !== null)
    .sort((x, y) =>
      x.external.revenue === y.external.revenue ? x.rank! - y.rank! : x.external.revenue > y.external.revenue ? -1 : 1,
    )
    .map((s) => s.address);
}

const seller3 = (address: string) => SELLERS3.find((s) => s.address === address)!;

describe.each(backends())('method 3.0.0 in the API on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let validator: DocumentValidator;

  /** GET over HTTP; every JSON body is checked against the served OpenAPI document. */
  async function call(path: string, headers: Record<string, string> = {}) {
    const res = await fetch(base + path, { headers });
    const text = await res.text();
    const template = path
      .split('?')[0]!
      .replace(
        /^\/api\/v1\/sellers\/0x[0-9a-f]{40}(\/payments)?$/,
        (_m, p: string | undefined) => `/api/v1/sellers/{slug}${p ?? ''}`,
      );
    if ((res.headers.get('content-type') ?? '').startsWith('application/json'))
      expect(validator.check(template, res.status, JSON.parse(text)), `${path} -> ${res.status}`).toEqual([]);
    return { status: res.status, text, headers: res.headers, body: text.startsWith('{') ? exact(text) : undefined };
  }

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture3(db.db);
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    validator = new DocumentValidator(JSON.parse(await (await fetch(`${base}/api/v1/openapi.json`)).text()));
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('default: the profile of a 3.0.0 seller has by_class, internal and the external metrics with provenance', async () => {
    const res = await call(`/api/v1/sellers/${A}`);
    expect(res.status).toBe(200);
    const p = res.body;
    expect(p.generation).toBe(GEN3);
    expect(p.method_version).toBe('3.0.0');
    // fixture3.ts's table, written out by hand
    expect(p.by_class).toEqual({
      eip3009: { payments: 2, revenue_micro: '9007199245740993' },
      permit2_exact: { payments: 1, revenue_micro: '2000000' },
      permit2_upto: { payments: 1, revenue_micro: '3000000' },
      batch_settlement: { payments: 1, revenue_micro: '4000000' },
    });
    expect(p.internal).toEqual({
      seller_funded: { payments: 1, revenue_micro: '9007199244740993', payers: 1 },
      same_operator: { payments: 0, revenue_micro: '0', payers: 0 },
    });
    // the classes add up to the totals, and external + internal to the revenue
    const classSum = CLASSES.reduce((sum, c) => sum + BigInt(p.by_class[c].revenue_micro), 0n);
    expect(classSum.toString()).toBe(p.metrics.verified_revenue_30d_micro.value);
    expect(BigInt(p.metrics.external_revenue_30d_micro.value) + BigInt(p.internal.seller_funded.revenue_micro)).toBe(
      BigInt(p.metrics.verified_revenue_30d_micro.value),
    );
    expect(p.metrics.external_revenue_30d_micro.value).toBe('10000000');
    expect(p.metrics.external_payments_30d.value).toBe('4'); // every metric value is read as digits (exact())
    expect(p.metrics.external_payers_30d.value).toBe('3');
    expect(p.metrics.median_payment_30d_micro.value).toBe('2000000');
    expect(p.metrics.external_revenue_30d_micro.provenance.rule).toBe('external.revenue.sum_external_payments');
    expect(p.metrics.external_payments_30d.provenance.rule).toBe('external.payments.count');
    expect(p.metrics.external_payers_30d.provenance.rule).toBe('external.payers.count_distinct');
    // under 3.0.0 the source names every class's contracts and events
    const source = {
      chain_id: 8453,
      contract: USDC,
      event: 'x402_settlement',
      classes: [
        {
          class: 'eip3009',
          contracts: [USDC],
          events: ['Transfer(address,address,uint256)', 'AuthorizationUsed(address,bytes32)'],
        },
        {
          class: 'permit2_exact',
          contracts: ['0x402085c248eea27d92e8b30b2c58ed07f9e20001', USDC],
          events: ['Settled()', 'SettledWithPermit()', 'Transfer(address,address,uint256)'],
        },
        {
          class: 'permit2_upto',
          contracts: ['0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002', USDC],
          events: ['Settled()', 'SettledWithPermit()', 'Transfer(address,address,uint256)'],
        },
        {
          class: 'batch_settlement',
          contracts: ['0x4020074e9df2ce1dee5a9c1b5c3f541d02a10003'],
          events: [
            'Claimed(bytes32,address,uint128,uint128)',
            'ChannelCreated(bytes32,(address,address,address,address,address,uint40,bytes32))',
          ],
        },
      ],
    };
    for (const m of Object.values<any>(p.metrics)) expect(m.provenance.source).toEqual(source);

    const b = (await call(`/api/v1/sellers/${B}`)).body;
    expect(JSON.parse(b.farm_reasons)).toEqual(['top_payer_share>0.9', 'internal_share>0.5']);
    expect(b.internal.same_operator).toEqual({ payments: 8, revenue_micro: '80000000', payers: 1 });
    expect(b.by_class.permit2_exact).toEqual({ payments: 0, revenue_micro: '0' }); // zeros included
  });

  it('behavior: on the 2.0.0 generation every 3.0.0 field of the profile is null', async () => {
    const p = (await call(`/api/v1/sellers/${A}?generation=${GEN2}`)).body;
    expect(p.method_version).toBe('2.0.0');
    expect(p.by_class).toBeNull();
    expect(p.internal).toBeNull();
    expect(p.metrics.external_revenue_30d_micro).toBeNull();
    expect(p.metrics.external_payments_30d).toBeNull();
    expect(p.metrics.external_payers_30d).toBeNull();
    expect(p.metrics.verified_revenue_30d_micro.value).toBe('9007199254740993');
    expect(p.metrics.payments_30d.provenance.source).toEqual({
      chain_id: 8453,
      contract: USDC,
      event: 'Transfer+AuthorizationUsed',
    });
  });

  it('default: ranking rows carry the external numbers; the default order is unchanged', async () => {
    const res = await call('/api/v1/rankings');
    expect(res.body.rankings.map((r: any) => [r.rank, r.seller_address])).toEqual([
      [1, A],
      [2, B],
      [3, E],
      [4, F],
    ]);
    for (const r of res.body.rankings) {
      const s = seller3(r.seller_address);
      expect([r.external_revenue_30d_micro, r.external_payments_30d, r.external_payers_30d]).toEqual([
        s.external.revenue.toString(),
        s.external.payments,
        s.external.payers,
      ]);
    }
    const explicit = await call('/api/v1/rankings?sort=verified_revenue');
    expect(explicit.body.rankings).toEqual(res.body.rankings);
    const old = await call(`/api/v1/rankings?generation=${GEN2}`);
    expect(old.body.rankings.map((r: any) => r.seller_address)).toEqual([A, B]);
    for (const r of old.body.rankings)
      expect([r.external_revenue_30d_micro, r.external_payments_30d, r.external_payers_30d]).toEqual([
        null,
        null,
        null,
      ]);
  });

  it('behavior: sort=external_revenue orders by external revenue, ties in the default order, rank = position', async () => {
    expect(externalOrder()).toEqual([E, A, F, B]); // the independent order agrees with the table
    const res = await call('/api/v1/rankings?sort=external_revenue');
    expect(res.status).toBe(200);
    expect(res.body.rankings.map((r: any) => [r.rank, r.seller_address])).toEqual(
      externalOrder().map((s, i) => [i + 1, s]),
    );
    expect(res.body.next_cursor).toBeNull();
  });

  it('behavior: sort=external_revenue pages with its cursor, and with category keeps the unfiltered ranks', async () => {
    const walk = async (query: string, limit: number) => {
      const rows: [number, string][] = [];
      let cursor: string | null = null;
      do {
        const res: Awaited<ReturnType<typeof call>> = await call(
          `/api/v1/rankings?sort=external_revenue&limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(res.status).toBe(200);
        rows.push(...res.body.rankings.map((r: any): [number, string] => [r.rank, r.seller_address]));
        cursor = res.body.next_cursor;
      } while (cursor !== null);
      return rows;
    };
    const whole = externalOrder().map((s, i): [number, string] => [i + 1, s]);
    expect(await walk('', 1)).toEqual(whole);
    expect(await walk('', 3)).toEqual(whole);
    // inference: A, B, E (F is data-access only): E 1, A 2, B 4; data-access: A 2, F 3
    const inCategory = (c: string) => whole.filter(([, s]) => seller3(s).categories.includes(c));
    expect(inCategory('inference')).toEqual([
      [1, E],
      [2, A],
      [4, B],
    ]);
    expect(await walk('&category=inference', 1)).toEqual(inCategory('inference'));
    expect(await walk('&category=data-access', 1)).toEqual([
      [2, A],
      [3, F],
    ]);
  });

  it('error: a cursor of one order is a 400 naming cursor in the other', async () => {
    const external = await call('/api/v1/rankings?sort=external_revenue&limit=1');
    const verified = await call('/api/v1/rankings?limit=1');
    expect(external.body.next_cursor).not.toBe(verified.body.next_cursor);
    for (const path of [
      `/api/v1/rankings?cursor=${external.body.next_cursor}`,
      `/api/v1/rankings?sort=verified_revenue&cursor=${external.body.next_cursor}`,
      `/api/v1/rankings?sort=external_revenue&cursor=${verified.body.next_cursor}`,
    ]) {
      const res = await call(path);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code).toBe('invalid_cursor');
      expect(res.body.error.message).toMatch(/^cursor: /);
    }
  });

  it('error: sort=external_revenue on a 2.x generation, an empty or unknown sort are 400s naming sort', async () => {
    for (const path of [
      `/api/v1/rankings?sort=external_revenue&generation=${GEN2}`,
      `/api/v1/rankings?sort=external_revenue&generation=${GEN2}&format=csv`,
      '/api/v1/rankings?sort=',
      '/api/v1/rankings?sort=revenue',
      '/api/v1/rankings?sort=EXTERNAL_REVENUE',
      '/api/v1/rankings?sort=external_revenue&sort=external_revenue',
    ]) {
      const res = await call(path);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code).toBe('invalid_parameter');
      expect(res.body.error.message, path).toMatch(/^sort: /);
    }
    const old = await call(`/api/v1/rankings?sort=external_revenue&generation=${GEN2}`);
    expect(old.body.error.message).toContain('2.0.0');
  });

  it('default: the rankings CSV has the external columns, in the order asked for', async () => {
    const res = await call('/api/v1/rankings?format=csv&sort=external_revenue');
    expect(res.status).toBe(200);
    const [header, ...rows] = parseCsv(res.text);
    expect(header!.slice(-3)).toEqual(['external_revenue_30d_micro', 'external_payments_30d', 'external_payers_30d']);
    const at = (name: string) => header!.indexOf(name);
    expect(rows.map((r) => [r[at('rank')], r[at('seller_address')]])).toEqual(
      externalOrder().map((s, i) => [String(i + 1), s]),
    );
    for (const r of rows) {
      const s = seller3(r[at('seller_address')]!);
      expect([
        r[at('external_revenue_30d_micro')],
        r[at('external_payments_30d')],
        r[at('external_payers_30d')],
      ]).toEqual([s.external.revenue.toString(), String(s.external.payments), String(s.external.payers)]);
    }
    const old = parseCsv((await call(`/api/v1/rankings?format=csv&generation=${GEN2}`)).text);
    expect(old[0]).toEqual(header);
    expect(old.slice(1).map((r) => r.slice(-3))).toEqual([
      ['', '', ''],
      ['', '', ''],
    ]);
  });

  it('default: evidence rows carry their class and internal reason; null on 2.x', async () => {
    const res = await call(`/api/v1/sellers/${A}/payments`);
    expect(res.status).toBe(200);
    expect(res.body.payments.map((r: any) => [r.tx_hash, r.class, r.internal_reason])).toEqual(
      [5, 4, 3, 2, 1].map((tx) => [txHash(tx), ...A_LABELS.get(tx)!]), // newest first
    );
    const old = await call(`/api/v1/sellers/${A}/payments?generation=${GEN2}`);
    expect(old.body.payments).toHaveLength(5);
    for (const r of old.body.payments) expect([r.class, r.internal_reason]).toEqual([null, null]);
  });

  it('default: market days carry external_volume_micro; null on 2.x', async () => {
    const res = await call('/api/v1/market/daily');
    expect(res.body.days.map((d: any) => [d.day, d.external_volume_micro])).toEqual(
      [...EXTERNAL_VOLUME].reverse().map(([day, v]) => [day, v.toString()]),
    );
    const old = await call(`/api/v1/market/daily?generation=${GEN2}`);
    expect(old.body.days.map((d: any) => d.external_volume_micro)).toEqual([null, null, null]);
  });

  it('default: /meta lists the classes with their contracts and topic0, the 3.0.0 constants and x402_contract_pay_to', async () => {
    const meta = (await call('/api/v1/meta')).body;
    expect(meta.method_version).toBe('3.0.0');
    const proxyTopics = [X402_TOPIC0.proxySettled, X402_TOPIC0.proxySettledWithPermit, TRANSFER_TOPIC];
    expect(meta.classes).toEqual([
      { class: 'eip3009', contracts: [USDC], topic0: [TRANSFER_TOPIC, AUTHORIZATION_USED_TOPIC] },
      { class: 'permit2_exact', contracts: [X402_CONTRACTS.exactProxy, USDC], topic0: proxyTopics },
      { class: 'permit2_upto', contracts: [X402_CONTRACTS.uptoProxy, USDC], topic0: proxyTopics },
      {
        class: 'batch_settlement',
        contracts: [X402_CONTRACTS.batchSettlement],
        topic0: [X402_TOPIC0.batchClaimed, X402_TOPIC0.batchChannelCreated],
      },
    ]);
    // The same values as SPEC writes them (lowercase hex), not only as src/chain writes them.
    expect(TRANSFER_TOPIC).toBe('0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
    expect(meta.classes[3].topic0[0]).toMatch(/^0x36bd546b/);
    expect(meta.classes[1].contracts[0]).toBe('0x402085c248eea27d92e8b30b2c58ed07f9e20001');
    expect(meta.constants).toMatchObject({
      funding_lookback_seconds: 2592000,
      farm_internal_share: 0.5,
      batch_settlement_deployment_block: 40_218_126, // docs/METHOD.md 2.11: Base's documented lower bound
    });
    // one listing of the catalog (8) is paid to an x402 contract
    expect(meta.sources.find((s: any) => s.name === 'catalog').x402_contract_pay_to).toBe(1);

    const old = (await call(`/api/v1/meta?generation=${GEN2}`)).body;
    expect(old.classes).toBeNull();
    expect(old.constants).not.toHaveProperty('batch_settlement_deployment_block');
    expect(old.sources.find((s: any) => s.name === 'catalog').x402_contract_pay_to).toBeNull();
  });

  it('behavior: a listing paid to an x402 contract is other_rail without seller under 3.0.0 only', async () => {
    const row = async (generation: number) => {
      const page = (await call(`/api/v1/sellers?generation=${generation}&category=inference`)).body;
      return page.listings.find((l: any) => l.listing_id === listingId(8));
    };
    expect(await row(GEN3)).toMatchObject({
      seller_address: null,
      verifiability: 'other_rail',
      tier: 'listed_only',
      evidence_state: 'not_observed',
      verified_revenue_30d_micro: null,
      farm_flag: null,
      sibling_listings: 0,
    });
    expect(await row(GEN2)).toMatchObject({
      seller_address: EXACT_PROXY,
      verifiability: 'base_usdc',
      evidence_state: 'not_observed',
      verified_revenue_30d_micro: '0',
      farm_flag: 0,
      sibling_listings: 1,
    });
    // the other listings keep their sellers
    const all = (await call(`/api/v1/sellers?generation=${GEN3}`)).body.listings;
    expect(all.filter((l: any) => l.verifiability === 'base_usdc').map((l: any) => l.seller_address)).toEqual([
      A,
      A,
      B,
      C,
      D,
      E,
      F,
    ]);
  });
});

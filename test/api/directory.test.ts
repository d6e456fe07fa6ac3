import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { A, B, C, D } from './fixture.ts';
import { E, EXACT_PROXY, F, GEN2, GEN3, insertUnpaidGeneration, seedFixture3 } from './fixture3.ts';
import { DIRECTORY_BY_SORT, DIRECTORY_GEN2 } from './directory-orders.ts';
import { DocumentValidator, parseCsv } from './helpers.ts';

/**
 * GET /api/v1/directory (the seller grain) over real HTTP on both backends, on the hand-written
 * generations of test/api/fixture3.ts: 4 (method 3.0.0, the latest: A, B, E, F ranked, C
 * insufficient, D unpaid) and 2 (2.0.0: A-D as in fixture.ts, and E, F and the Permit2 proxy
 * listed, unpaid), plus generation 5 (3.0.0, pinned only) written below for the null order.
 * Every expected order is worked out by hand from fixture3.ts's table, in the comments.
 */

/** Generation 5: three sellers whose external revenue is 7, 0 and null (a null comes last). */
const GEN5 = 5;
const P = `0x${'11'.repeat(20)}`;
const Q = `0x${'22'.repeat(20)}`;
const R = `0x${'33'.repeat(20)}`;

/** A body parsed with every `*_micro` integer kept as its exact digits. */
function exact(text: string): any {
  return JSON.parse(text.replace(/("[a-z0-9_]*_micro":)(\d+)/g, '$1"$2"'));
}

describe.each(backends())('seller directory on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let validator: DocumentValidator;

  /** GET over HTTP; every JSON body is checked against the served OpenAPI document. */
  async function call(path: string, headers: Record<string, string> = {}) {
    const res = await fetch(base + path, { headers });
    const text = await res.text();
    if ((res.headers.get('content-type') ?? '').startsWith('application/json'))
      expect(validator.check(path.split('?')[0]!, res.status, JSON.parse(text)), path).toEqual([]);
    return { status: res.status, text, headers: res.headers, body: text.startsWith('{') ? exact(text) : undefined };
  }
  const addresses = async (path: string) => {
    const res = await call(path);
    expect(res.status, path).toBe(200);
    return res.body.sellers.map((s: { seller_address: string }) => s.seller_address);
  };
  /** Every seller of a walk with next_cursor, and the page sizes. */
  async function walk(path: string): Promise<{ sellers: string[]; pages: number[]; totals: number[] }> {
    const out = { sellers: [] as string[], pages: [] as number[], totals: [] as number[] };
    let url = path;
    for (;;) {
      const res = await call(url);
      expect(res.status, url).toBe(200);
      out.sellers.push(...res.body.sellers.map((s: { seller_address: string }) => s.seller_address));
      out.pages.push(res.body.count);
      out.totals.push(res.body.total);
      if (res.body.next_cursor === null) return out;
      url = `${path}&cursor=${res.body.next_cursor}`;
    }
  }
  const badRequest = async (path: string, parameter: string, code = 'invalid_parameter') => {
    const res = await call(path);
    expect([res.status, res.body.error.code], path).toEqual([400, code]);
    expect(res.body.error.message.startsWith(`${parameter}: `), `${path}: ${res.body.error.message}`).toBe(true);
  };

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture3(db.db);
    await insertUnpaidGeneration(db.db, GEN5, [
      { address: P, revenue: 5n, external: null },
      { address: Q, revenue: 1n, external: 0n },
      { address: R, revenue: 0n, external: 7n },
    ]);
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    validator = new DocumentValidator(JSON.parse(await (await fetch(`${base}/api/v1/openapi.json`)).text()));
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('default: every seller of the latest generation by verified revenue, with its row', async () => {
    const res = await call('/api/v1/directory');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      count: 6,
      next_cursor: null,
      total: 6,
      generation: GEN3,
      method_version: '3.0.0',
    });
    expect(res.body.sort).toBe('verified_revenue');
    expect(res.body.sellers.map((s: { seller_address: string }) => s.seller_address)).toEqual(
      DIRECTORY_BY_SORT.verified_revenue,
    );
    // B's row, field for field, from fixture3.ts's table
    expect(res.body.sellers[1]).toEqual({
      seller_address: B,
      slug: B,
      display_name: 'Beta',
      tier: 'verified',
      evidence_state: 'verified',
      rank: 2,
      verified_revenue_30d_micro: '82000000',
      external_revenue_30d_micro: '2000000',
      payments_30d: 10,
      payers_30d: 3,
      median_payment_30d_micro: '1000000',
      farm_flag: 1,
      farm_reasons: '["top_payer_share>0.9","internal_share>0.5"]',
      listing_count: 1,
      categories: ['inference'],
      classes: ['eip3009', 'batch_settlement'],
      operator_group: null,
    });
    expect(res.text).toContain('"verified_revenue_30d_micro":9007199254740993,');
    // D: never paid, no class; C: insufficient, unranked
    expect(res.body.sellers[5]).toMatchObject({
      seller_address: D,
      rank: null,
      classes: [],
      median_payment_30d_micro: null,
    });
    expect(res.body.sellers[4]).toMatchObject({ seller_address: C, rank: null, evidence_state: 'insufficient' });
    expect(res.body.sellers.map((s: { classes: string[] }) => s.classes)).toEqual([
      ['eip3009', 'permit2_exact', 'permit2_upto', 'batch_settlement'],
      ['eip3009', 'batch_settlement'],
      ['permit2_exact'],
      ['permit2_upto', 'batch_settlement'],
      ['eip3009'],
      [],
    ]);
  });

  it('args: sort orders, ties by address ascending', async () => {
    for (const sort of ['payments', 'payers', 'external_revenue'] as const)
      expect(await addresses(`/api/v1/directory?sort=${sort}`), sort).toEqual(DIRECTORY_BY_SORT[sort]);
    expect(await addresses(`/api/v1/directory?generation=${GEN2}`)).toEqual(DIRECTORY_GEN2);
    expect(await addresses(`/api/v1/directory?generation=${GEN2}&sort=payers`)).toEqual(DIRECTORY_GEN2);
  });

  it('behavior: a seller without the number comes after all others; ties still by address', async () => {
    // generation 5: external R 7, Q 0, P null; revenue P 5, Q 1, R 0
    expect(await addresses(`/api/v1/directory?generation=${GEN5}&sort=external_revenue`)).toEqual([R, Q, P]);
    expect(await addresses(`/api/v1/directory?generation=${GEN5}`)).toEqual([P, Q, R]);
    const walked = await walk(`/api/v1/directory?generation=${GEN5}&sort=external_revenue&limit=1`);
    expect(walked.sellers).toEqual([R, Q, P]);
    const row = (await call(`/api/v1/directory?generation=${GEN5}&sort=external_revenue&limit=1`)).body;
    expect(row.sellers[0].external_revenue_30d_micro).toBe('7');
  });

  it('args: every filter, alone and together; total counts the filtered sellers', async () => {
    const cases: [string, string[]][] = [
      ['category=inference', [A, B, E, D]],
      ['category=data-access', [A, F]],
      ['category=search-retrieval', [C]],
      ['category=communications', []],
      ['evidence_state=verified', [A, B, E, F]],
      ['evidence_state=insufficient', [C]],
      ['evidence_state=not_observed', [D]],
      ['farm_flag=1', [B]],
      ['farm_flag=0', [A, E, F, C, D]],
      ['class=eip3009', [A, B, C]],
      ['class=permit2_exact', [A, E]],
      ['class=permit2_upto', [A, F]],
      ['class=batch_settlement', [A, B, F]],
      ['category=inference&evidence_state=verified&farm_flag=0', [A, E]],
      ['class=batch_settlement&sort=payments', [B, A, F]],
    ];
    for (const [query, expected] of cases) {
      const res = await call(`/api/v1/directory?${query}`);
      expect(
        res.body.sellers.map((s: { seller_address: string }) => s.seller_address),
        query,
      ).toEqual(expected);
      expect(res.body.total, query).toBe(expected.length);
    }
    // generation 2 has the proxy as a seller (2.x rule), generation 4 not
    expect(await addresses(`/api/v1/directory?generation=${GEN2}&category=inference`)).toEqual([
      A,
      B,
      EXACT_PROXY,
      D,
      E,
    ]);
  });

  it('args: q finds the sellers of the listings the search finds, and an address or its start', async () => {
    const cases: [string, string[]][] = [
      ['alpha', [A]], // listing 1's title
      ['Inference', [A, E]], // titles of listings 1 and 9 ("Echo inference")
      ['idle', [D]], // listing 5's description
      ['completion', [A]], // the singular of listing 1's "completions" (the listing search's plurals)
      ['inferences', [A, E]], // the plural of "inference"
      ['gam', [C]], // a prefix of 3 letters that is no word of the catalog: "Gamma search"
      ['example api', [A, B, E, F, C, D]], // every resource URL (the proxy's listing has no seller in 3.0.0)
      ['nothing-here', []],
      ['ababab', [A]], // the start of A's address, 6 hex digits
      ['0xBCBCBC', [B]], // with 0x, any case
      [C, [C]], // a whole address
      ['0xdede', []], // 4 hex digits: only a word, held by no listing
      ['e5e5e5 foxtrot', []], // not an address: the words e5e5e5 and foxtrot are in no one listing
    ];
    for (const [q, expected] of cases) {
      const res = await call(`/api/v1/directory?q=${encodeURIComponent(q)}`);
      expect(
        res.body.sellers.map((s: { seller_address: string }) => s.seller_address),
        q,
      ).toEqual(expected);
      expect(res.body.total, q).toBe(expected.length);
    }
    expect(await addresses('/api/v1/directory?q=inference&sort=payers')).toEqual([E, A]);
    expect(await addresses('/api/v1/directory?q=example&evidence_state=verified&limit=2')).toEqual([A, B]);
  });

  it('behavior: a cursor walk covers every seller exactly once, in order, for each sort and filter', async () => {
    for (const [path, expected] of [
      ['/api/v1/directory?limit=1', DIRECTORY_BY_SORT.verified_revenue],
      ['/api/v1/directory?sort=payments&limit=3', DIRECTORY_BY_SORT.payments], // the 5-payment tie spans two pages
      ['/api/v1/directory?sort=payers&limit=2', DIRECTORY_BY_SORT.payers], // the 3-payer tie on one page
      ['/api/v1/directory?sort=external_revenue&limit=2', DIRECTORY_BY_SORT.external_revenue],
      ['/api/v1/directory?category=inference&limit=1', [A, B, E, D]],
      ['/api/v1/directory?q=example&farm_flag=0&limit=2', [A, E, F, C, D]],
      [`/api/v1/directory?generation=${GEN2}&limit=2`, DIRECTORY_GEN2],
    ] as const) {
      const walked = await walk(path);
      expect(walked.sellers, path).toEqual(expected);
      expect(new Set(walked.sellers).size, path).toBe(walked.sellers.length);
      expect(
        walked.totals.every((t) => t === expected.length),
        path,
      ).toBe(true);
      // never a cursor to an empty page
      expect(walked.pages.at(-1), path).toBeGreaterThan(0);
    }
  });

  it('error: a cursor of another sort, filter set or endpoint is a 400 naming cursor', async () => {
    const first = (await call('/api/v1/directory?sort=payments&limit=2')).body.next_cursor as string;
    await badRequest(`/api/v1/directory?sort=payers&limit=2&cursor=${first}`, 'cursor', 'invalid_cursor');
    await badRequest(`/api/v1/directory?limit=2&cursor=${first}`, 'cursor', 'invalid_cursor');
    await badRequest(`/api/v1/directory?sort=payments&category=inference&cursor=${first}`, 'cursor', 'invalid_cursor');
    await badRequest(`/api/v1/directory?sort=payments&q=alpha&cursor=${first}`, 'cursor', 'invalid_cursor');
    // the same sort and filters with another limit continue the walk
    expect(await addresses(`/api/v1/directory?sort=payments&limit=10&cursor=${first}`)).toEqual([E, F, C, D]);
    const ranking = (await call('/api/v1/rankings?limit=1')).body.next_cursor as string;
    await badRequest(`/api/v1/directory?cursor=${ranking}`, 'cursor', 'invalid_cursor');
    // a cursor whose seller is not in the generation (its address replaced)
    await badRequest(
      `/api/v1/directory?sort=payments&limit=2&cursor=${first.slice(0, 24)}${'99'.repeat(20)}`,
      'cursor',
      'invalid_cursor',
    );
    await badRequest('/api/v1/directory?cursor=xyz', 'cursor', 'invalid_cursor');
  });

  it('error: a bad parameter is a 400 naming it', async () => {
    await badRequest('/api/v1/directory?sort=revenue', 'sort');
    await badRequest('/api/v1/directory?sort=', 'sort');
    await badRequest('/api/v1/directory?sort=payments&sort=payers', 'sort');
    await badRequest('/api/v1/directory?category=food', 'category');
    await badRequest('/api/v1/directory?evidence_state=unknown', 'evidence_state');
    await badRequest('/api/v1/directory?farm_flag=2', 'farm_flag');
    await badRequest('/api/v1/directory?farm_flag=true', 'farm_flag');
    await badRequest('/api/v1/directory?class=eip712', 'class');
    await badRequest('/api/v1/directory?q=', 'q');
    await badRequest('/api/v1/directory?q=%21%21', 'q');
    await badRequest(`/api/v1/directory?q=${'a'.repeat(201)}`, 'q');
    await badRequest('/api/v1/directory?limit=0', 'limit');
    await badRequest('/api/v1/directory?limit=101', 'limit');
    await badRequest('/api/v1/directory?generation=0', 'generation');
    await badRequest('/api/v1/directory?format=xml', 'format');
    await badRequest('/api/v1/directory?tier=verified', 'tier', 'unknown_parameter');
    // a 2.x generation has no classes and no external revenue
    await badRequest(`/api/v1/directory?generation=${GEN2}&class=eip3009`, 'class');
    await badRequest(`/api/v1/directory?generation=${GEN2}&sort=external_revenue`, 'sort');
    await badRequest(`/api/v1/directory?generation=${GEN2}&sort=external_revenue&format=csv`, 'sort');
    const missing = await call('/api/v1/directory?generation=3');
    expect([missing.status, missing.body.error.code]).toEqual([404, 'generation_not_found']);
    // 100 rows a page at most; 100 is taken
    expect((await call('/api/v1/directory?limit=100')).status).toBe(200);
  });

  it('behavior: a 2.x generation serves external revenue and classes as null', async () => {
    const res = await call(`/api/v1/directory?generation=${GEN2}&limit=2`);
    expect(res.body.method_version).toBe('2.0.0');
    expect(res.body.total).toBe(7);
    for (const s of res.body.sellers) expect([s.external_revenue_30d_micro, s.classes]).toEqual([null, null]);
    expect(res.body.sellers[0]).toMatchObject({ seller_address: A, rank: 1, median_payment_30d_micro: '3000000' });
  });

  it('behavior: the CSV holds the rows of the JSON walk of the same sort and filters, every page', async () => {
    for (const query of [
      'sort=payments',
      'category=inference&sort=payers',
      `generation=${GEN2}`,
      'q=example&class=eip3009',
    ]) {
      const csv = await call(`/api/v1/directory?${query}&format=csv`);
      expect(csv.status, query).toBe(200);
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      const [header, ...rows] = parseCsv(csv.text);
      const json = await call(`/api/v1/directory?${query}&limit=100`);
      expect(header).toEqual(Object.keys(json.body.sellers[0]));
      // the JSON row written as a CSV cell: null empty, a list joined by ;
      const cell = (v: unknown) => (v === null ? '' : Array.isArray(v) ? v.join(';') : String(v));
      expect(rows, query).toEqual(
        json.body.sellers.map((s: Record<string, unknown>) => header!.map((k) => cell(s[k]))),
      );
    }
    const accept = await call('/api/v1/directory?farm_flag=1', { accept: 'text/csv' });
    const parsed = parseCsv(accept.text);
    expect(parsed.length).toBe(2);
    expect(parsed[1]![0]).toBe(B);
    // 2^53 + 1 with all its digits
    expect((await call('/api/v1/directory?format=csv')).text).toContain(
      `${A},${A},Alpha inference,verified,verified,1,9007199254740993,`,
    );
  });
});

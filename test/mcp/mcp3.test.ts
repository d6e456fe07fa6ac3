import { describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { A, B } from '../api/fixture.ts';
import { E, F, GEN2, GEN3, seedFixture3 } from '../api/fixture3.ts';
import { backends } from '../helpers/db.ts';
import { useMcp } from '../helpers/mcp.ts';

/**
 * The MCP tools and /llms.txt on a method 3.0.0 generation beside a 2.0.0 one (test/api/fixture3.ts,
 * whose table gives the expected values), over Streamable HTTP through the SDK's own client. The
 * stdio transport runs the same tools (test/mcp/mcp.test.ts covers it on the 1.0.0 fixture).
 */
describe.each(backends())('MCP and /llms.txt on method 3.0.0 on $backend', ({ backend }) => {
  const mcp = useMcp(backend, seedFixture3);
  const { call, apiText } = mcp;

  it('default: top_sellers takes sort; external_revenue gives the order of the table, as the API does', async () => {
    const { tools } = await mcp.client.listTools();
    const top = tools.find((t) => t.name === 'top_sellers')!;
    expect((top.inputSchema.properties as any).sort.enum).toEqual(['verified_revenue', 'external_revenue']);
    const result = await call('top_sellers', { sort: 'external_revenue' });
    expect(result.isError).toBeFalsy();
    // fixture3.ts: E 50M, A 10M (rank 1), F 10M (rank 4), B 2M
    expect(result.structuredContent!.rankings.map((r: any) => [r.rank, r.seller_address])).toEqual([
      [1, E],
      [2, A],
      [3, F],
      [4, B],
    ]);
    expect(result.content[0]!.text).toBe(await apiText('/api/v1/rankings?sort=external_revenue'));
    const page = await call('top_sellers', { sort: 'external_revenue', limit: 2 });
    const next = await call('top_sellers', { sort: 'external_revenue', cursor: page.structuredContent!.next_cursor });
    expect(next.structuredContent!.rankings.map((r: any) => r.seller_address)).toEqual([F, B]);
  });

  it('error: sort external_revenue on the 2.0.0 generation, or a cursor of the other order, is a tool error naming it', async () => {
    const old = await call('top_sellers', { sort: 'external_revenue', generation: GEN2 });
    expect(old.isError).toBe(true);
    expect(JSON.parse(old.content[0]!.text).error.message).toMatch(/^sort: /);
    const page = await call('top_sellers', { limit: 1 });
    const crossed = await call('top_sellers', {
      sort: 'external_revenue',
      cursor: page.structuredContent!.next_cursor,
    });
    expect(crossed.isError).toBe(true);
    expect(JSON.parse(crossed.content[0]!.text).error.message).toMatch(/^cursor: /);
    const bad = await call('top_sellers', { sort: 'revenue' });
    expect(bad.isError).toBe(true);
    expect(JSON.parse(bad.content[0]!.text).error.message).toMatch(/^sort: /);
  });

  it('default: get_seller carries by_class, internal and the external metrics; null on 2.0.0', async () => {
    const seller = await call('get_seller', { address: B, detail: true });
    const out = seller.structuredContent!.profile;
    expect(out.generation).toBe(GEN3);
    expect(out.by_class.batch_settlement).toEqual({ payments: 8, revenue_micro: 80_000_000 });
    expect(out.internal.same_operator).toEqual({ payments: 8, revenue_micro: 80_000_000, payers: 1 });
    expect(out.metrics.external_revenue_30d_micro.value).toBe(2_000_000);
    expect(seller.structuredContent!.values.external_revenue_30d_micro).toBe(2_000_000);
    const card = (await call('get_seller', { address: B })).structuredContent!;
    expect([card.generation, card.values.external_revenue_30d_micro, card.profile]).toEqual([
      GEN3,
      2_000_000,
      undefined,
    ]);
    const old = (await call('get_seller', { address: B, generation: GEN2, detail: true })).structuredContent!;
    expect([old.profile.by_class, old.profile.internal, old.profile.metrics.external_revenue_30d_micro]).toEqual([
      null,
      null,
      null,
    ]);
    expect(old.values.external_revenue_30d_micro).toBeNull();
  });

  it('behavior: explain_metric explains an external metric under 3.0.0; under 2.0.0 it is a tool error naming metric', async () => {
    const result = await call('explain_metric', { address: A, metric: 'external_revenue_30d_micro' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent!.value).toBe(10_000_000);
    expect(result.structuredContent!.provenance.rule).toBe('external.revenue.sum_external_payments');
    expect(result.structuredContent!.meaning).toMatch(/external/);
    const old = await call('explain_metric', { address: A, metric: 'external_payers_30d', generation: GEN2 });
    expect(old.isError).toBe(true);
    expect(JSON.parse(old.content[0]!.text).error.message).toMatch(/^metric: .*2\.0\.0/);
  });

  it('default: /llms.txt says what the latest generation serves: by_class and external revenue under 3.0.0', async () => {
    const text = await apiText('/llms.txt');
    expect(text).toContain('sort=external_revenue');
    expect(text).toContain('by_class');
    expect(text).toContain(`The latest generation is ${GEN3}, computed by method 3.0.0.`);
    // every endpoint is still named
    const doc = JSON.parse(await apiText('/api/v1/openapi.json'));
    for (const p of Object.keys(doc.paths))
      if (!p.endsWith('/openapi.json') && !p.endsWith('/docs'))
        expect(text, p).toContain(p.replace('{slug}', '{address}'));
    // the same server with the 2.0.0 generation as the latest
    await mcp.db.db.updateTable('published_pointer').set({ generation: GEN2 }).execute();
    const other = await buildApi(mcp.db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    try {
      const res = await other.inject({ method: 'GET', url: '/llms.txt' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain(`The latest generation is ${GEN2}, computed by method 2.0.0.`);
      expect(res.body).toContain('sort=external_revenue is a 400 on it');
    } finally {
      await other.close();
      await mcp.db.db.updateTable('published_pointer').set({ generation: GEN3 }).execute();
    }
  });
});

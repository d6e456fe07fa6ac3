import { describe, expect, it } from 'vitest';
import { GLOSSARY } from '../../src/api/glossary.ts';
import { A, B } from '../api/fixture.ts';
import { E, F, GEN2, GEN3, insertUnpaidGeneration, seedFixture3 } from '../api/fixture3.ts';
import { DIRECTORY_BY_SORT, DIRECTORY_GEN2 } from '../api/directory-orders.ts';
import { backends } from '../helpers/db.ts';
import { useMcp, type ToolResult } from '../helpers/mcp.ts';

/**
 * MCP list_sellers (the seller directory, GET /api/v1/directory) through the official SDK client
 * over Streamable HTTP, on both backends, on test/api/fixture3.ts's generations: 4 (method 3.0.0,
 * the latest: A, B, E, F ranked, C insufficient, D unpaid) and 2 (2.0.0), plus generation 5
 * written below with 25 sellers, more than the tool's default page of 20. Every expected order is
 * worked out by hand from fixture3.ts's table (the same as test/api/directory.test.ts's); each
 * answer is also the API's own text for the same question.
 */
const GEN5 = 5;
/** Generation 5's sellers: 0x0101…, 0x0202…, …, 0x2525…, revenue 25, 24, …, 1 micro-USDC. */
const MANY = Array.from(
  { length: 25 },
  (_, i) =>
    `0x${String(i + 1)
      .padStart(2, '0')
      .repeat(20)}`,
);

describe.each(backends())('MCP list_sellers on $backend', ({ backend }) => {
  const mcp = useMcp(backend, async (db) => {
    await seedFixture3(db);
    await insertUnpaidGeneration(
      db,
      GEN5,
      MANY.map((address, i) => ({ address, revenue: BigInt(25 - i), external: 0n })),
    );
  });
  const call = (args: Record<string, unknown>) => mcp.call('list_sellers', args);
  const { apiText } = mcp;
  const addresses = (r: ToolResult) => r.structuredContent!.sellers.map((s: any) => s.seller_address);

  it('default: every seller of the latest generation by verified revenue, as the API answers it', async () => {
    const result = await call({});
    expect(result.isError).toBeFalsy();
    expect(addresses(result)).toEqual(DIRECTORY_BY_SORT.verified_revenue);
    expect(result.structuredContent).toMatchObject({ total: 6, count: 6, generation: GEN3, next_cursor: null });
    expect(result.content[0]!.text).toBe(await apiText('/api/v1/directory?limit=20'));
    expect(result.content[0]!.text).toContain('"verified_revenue_30d_micro":9007199254740993,');
  });

  it("args: sort, each filter and query are the API's, with the same answers", async () => {
    const cases: [Record<string, unknown>, string, string[]][] = [
      [{ sort: 'payments' }, 'sort=payments', DIRECTORY_BY_SORT.payments],
      [{ sort: 'external_revenue' }, 'sort=external_revenue', DIRECTORY_BY_SORT.external_revenue],
      [{ category: 'data-access' }, 'category=data-access', [A, F]],
      [
        { category: 'inference', evidence_state: 'verified', farm_flag: 0 },
        'category=inference&evidence_state=verified&farm_flag=0',
        [A, E],
      ],
      [{ farm_flag: 1 }, 'farm_flag=1', [B]],
      [{ class: 'batch_settlement', sort: 'payments' }, 'sort=payments&class=batch_settlement', [B, A, F]],
      [{ query: 'inferences' }, 'q=inferences', [A, E]], // the plural of listing 1's and 9's "inference"
      [{ query: '0xBCBCBC' }, 'q=0xBCBCBC', [B]], // the start of B's address, any case
      [{ query: 'nothing-here' }, 'q=nothing-here', []],
      [{ generation: GEN2, sort: 'payers' }, `sort=payers&generation=${GEN2}`, DIRECTORY_GEN2],
    ];
    for (const [args, query, expected] of cases) {
      const result = await call(args);
      const label = JSON.stringify(args);
      expect(result.isError, label).toBeFalsy();
      expect(addresses(result), label).toEqual(expected);
      expect(result.structuredContent!.total, label).toBe(expected.length);
      expect(result.content[0]!.text, label).toBe(await apiText(`/api/v1/directory?${query}&limit=20`));
    }
  });

  it('behavior: 20 sellers a page by default; the cursor walks the rest, and a walk of limit 2 covers all once', async () => {
    const first = await call({ generation: GEN5 });
    expect(addresses(first)).toEqual(MANY.slice(0, 20));
    expect(first.structuredContent!.total).toBe(25);
    const rest = await call({ generation: GEN5, cursor: first.structuredContent!.next_cursor });
    expect(addresses(rest)).toEqual(MANY.slice(20));
    expect(rest.structuredContent!.next_cursor).toBeNull();
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call({ sort: 'payers', limit: 2, ...(cursor ? { cursor } : {}) });
      walked.push(...addresses(page));
      cursor = page.structuredContent!.next_cursor ?? undefined;
    } while (cursor);
    expect(walked).toEqual(DIRECTORY_BY_SORT.payers);
  });

  it('error: a bad argument, or one the generation cannot take, is a tool error naming it', async () => {
    const page = await call({ limit: 1 });
    const cases: [Record<string, unknown>, string][] = [
      [{ sort: 'external_revenue', generation: GEN2 }, 'sort: '],
      [{ class: 'eip3009', generation: GEN2 }, 'class: '],
      [{ sort: 'payments', cursor: page.structuredContent!.next_cursor }, 'cursor: '],
      [{ query: '%%%' }, 'query: '],
      [{ query: 'a'.repeat(201) }, 'query: '],
      [{ farm_flag: 2 }, 'farm_flag: '],
      [{ limit: 51 }, 'limit: '],
      [{ evidence_state: 'ranked' }, 'evidence_state: '],
      [{ tier: 'verified' }, 'tier: '],
    ];
    for (const [args, prefix] of cases) {
      const result = await call(args);
      const label = JSON.stringify(args);
      expect(result.isError, label).toBe(true);
      const message = JSON.parse(result.content[0]!.text).error.message as string;
      expect(message.startsWith(prefix), `${label}: ${message}`).toBe(true);
    }
  });

  it("default: its arguments are described with the glossary's texts", async () => {
    const tool = (await mcp.client.listTools()).tools.find((t) => t.name === 'list_sellers')!;
    const properties = tool.inputSchema.properties as Record<string, { description: string }>;
    expect(properties.evidence_state!.description).toContain(GLOSSARY.evidence_state.text);
    expect(properties.farm_flag!.description).toContain(GLOSSARY.farm_flag.text);
    expect(properties.class!.description).toContain(GLOSSARY['class.batch_settlement'].text);
    expect(properties.sort!.description).toContain(GLOSSARY.external_revenue.text);
    expect(tool.description).toContain(GLOSSARY.operator_group.text);
    expect(tool.annotations?.readOnlyHint).toBe(true);
  });
});

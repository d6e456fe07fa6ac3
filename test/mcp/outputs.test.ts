import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { A, B } from '../api/fixture.ts';
import { E, GEN2, seedFixture3 } from '../api/fixture3.ts';
import { closeObjects } from '../api/helpers.ts';
import { backends } from '../helpers/db.ts';
import { useMcp } from '../helpers/mcp.ts';

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

/**
 * Every MCP tool's output against the output schema it declares in tools/list, strictly (issue
 * 23): through the official SDK client over Streamable HTTP, on the 3.0.0 and 2.0.0 generations
 * of test/api/fixture3.ts, each structuredContent is validated with every object closed
 * (closeObjects: no property the schema does not name), its text content is the same JSON, and a
 * tool error carries no structuredContent and an Error body (`{"error":{"code","message"}}`).
 */
/** Arguments for each tool: every tool is called at least once, with its options. */
const CALLS: [string, Record<string, unknown>][] = [
  ['status', {}],
  ['search_listings', { query: 'inference' }],
  ['search_listings', { query: 'example', verified_only: true, limit: 1, generation: GEN2 }],
  ['list_sellers', {}],
  ['list_sellers', { sort: 'external_revenue', class: 'eip3009', query: 'example', limit: 2 }],
  ['list_sellers', { farm_flag: 0, evidence_state: 'verified', category: 'inference', generation: GEN2 }],
  ['get_seller', { address: A }],
  ['get_seller', { address: B, detail: true }],
  ['get_seller', { address: A, detail: true, generation: GEN2 }],
  ['top_sellers', { sort: 'external_revenue', limit: 2 }],
  ['top_sellers', { category: 'inference', generation: GEN2 }],
  ['market_daily', { from: '2025-12-30' }],
  ['market_summary', {}],
  ['market_summary', { generation: GEN2 }],
  ['explain_metric', { address: E, metric: 'external_revenue_30d_micro' }],
  ['explain_metric', { address: A, metric: 'median_payment_30d_micro', generation: GEN2 }],
];

describe.each(backends())('MCP outputs on $backend', ({ backend }) => {
  const mcp = useMcp(backend, seedFixture3);
  const validators = new Map<string, ReturnType<Ajv2020['compile']>>();

  beforeAll(async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const tool of (await mcp.client.listTools()).tools) {
      expect(tool.outputSchema, tool.name).toBeDefined();
      validators.set(tool.name, ajv.compile(closeObjects(tool.outputSchema!)));
    }
  });

  it('default: every tool is called here', () => {
    expect([...new Set(CALLS.map(([name]) => name))].sort()).toEqual([...validators.keys()].sort());
  });

  it('behavior: every structuredContent matches its declared output schema strictly, and equals its text', async () => {
    for (const [name, args] of CALLS) {
      const result = (await mcp.client.callTool({ name, arguments: args })) as {
        isError?: boolean;
        content: { type: string; text: string }[];
        structuredContent?: unknown;
      };
      const label = `${name} ${JSON.stringify(args)}`;
      expect(result.isError, label).toBeFalsy();
      const validate = validators.get(name)!;
      expect(validate(result.structuredContent) ? [] : validate.errors, label).toEqual([]);
      // the text is the same JSON (its integers exact; both read here the same lossy way)
      expect(JSON.parse(result.content[0]!.text), label).toEqual(result.structuredContent);
    }
  });

  it('error: a tool error has no structuredContent and an Error body', async () => {
    for (const [name, args] of [
      ['get_seller', { address: `0x${'99'.repeat(20)}` }],
      ['top_sellers', { sort: 'external_revenue', generation: GEN2 }],
      ['explain_metric', { address: A, metric: 'external_revenue_30d_micro', generation: GEN2 }],
      ['search_listings', { query: 'x', bogus: 1 }],
      ['list_sellers', { class: 'eip3009', generation: GEN2 }],
    ] as const) {
      const result = (await mcp.client.callTool({ name, arguments: args })) as {
        isError?: boolean;
        content: { text: string }[];
        structuredContent?: unknown;
      };
      expect(result.isError, name).toBe(true);
      expect(result.structuredContent, name).toBeUndefined();
      const body = JSON.parse(result.content[0]!.text);
      expect(Object.keys(body), name).toEqual(['error']);
      expect(Object.keys(body.error).sort(), name).toEqual(['code', 'message']);
      expect(body.error.code, name).toMatch(/^[a-z][a-z0-9_]*$/);
    }
  });
});

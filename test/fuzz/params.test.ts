import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/api/endpoints.ts';
import { MAX_URL_LENGTH } from '../../src/api/handlers/errors.ts';
import { seedFixture } from '../api/fixture.ts';
import { DocumentValidator } from '../api/helpers.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { connectHttp, serveMcp } from '../helpers/mcp.ts';
import {
  BOUNDARIES,
  DEFAULTS,
  NOT_STORABLE,
  TAKES,
  badTextOf,
  hostile,
  percentEncode,
  poisoned,
  rarely,
  seldom,
  textsOf,
} from './values.ts';

/**
 * Fuzzing every parameter a client can set (issue 20, "Faults that reach users"): every query and
 * path parameter of every route (the ENDPOINTS entries, and the other routes of the served
 * OpenAPI document: the bundle files, ...) over real HTTP, and every argument of every MCP tool
 * that tools/list describes, over the SDK's Streamable HTTP client; on the fixture generation
 * (test/api/fixture.ts) on each backend. First a sweep: each parameter and argument alone with
 * each boundary value (./values.ts); then random requests: values the parameters take, mostly one
 * replaced by a bad one (poisoned with U+0000 or an unpaired surrogate, or hostile text).
 *
 * No answer may be a 5xx; a value no database text can hold is a 400; a 400 names a parameter
 * given. No tool call may end in a protocol error but -32602, an internal_error or an answer to
 * such a value; a tool error names an argument. The server still serves /meta at the end.
 *
 * FUZZ_SEED (fixed by default) and FUZZ_RUNS (random requests per surface) run it longer or
 * otherwise; a failure prints fast-check's seed and path, which replay it (docs/development.md).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_101);
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
/**
 * The suite's 240 s a test (vitest.config.ts), and more for a long run (FUZZ_RUNS in the
 * thousands): a bound on a hang, never below what the suite gives every other test.
 */
const RANDOM_TIMEOUT_MS = 240_000 + RUNS * 200;

interface Route {
  /** OpenAPI form, e.g. /api/v1/sellers/{slug}. */
  path: string;
  query: string[];
  params: string[];
}
type Property = { enum?: string[]; type?: string };

/** Any JSON value, for any tool argument. */
const json: fc.Arbitrary<unknown> = fc.oneof(
  hostile,
  fc.constantFrom(-1, 0, 1, 5, 2 ** 31 - 1, 2 ** 31, 2 ** 53, 2 ** 63, 1.5, -0, 1e308, true, false, null),
  fc.constant([]),
  fc.constant({}),
  fc.array(hostile, { maxLength: 2 }),
);
const JSON_BOUNDARIES: unknown[] = [-1, 0, 2 ** 31 - 1, 2 ** 31, 2 ** 53, 2 ** 63, 1.5, 1e308, true, null, [], {}];

/** What a tool argument takes, from its JSON Schema and, for text and integers, TAKES. */
const takes = (name: string, schema: Property): fc.Arbitrary<unknown> =>
  schema.enum
    ? fc.constantFrom(...schema.enum)
    : schema.type === 'integer'
      ? (TAKES[name] ?? fc.constant('1')).map(Number)
      : schema.type === 'boolean'
        ? fc.boolean()
        : (TAKES[name] ?? hostile);

describe.each(backends())('fuzzing every parameter on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let mcp: Client;
  let routes: Route[];
  let tools: Tool[];
  let validator: DocumentValidator;

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture(db.db);
    ({ app, url: base } = await serveMcp(db.db, { rateLimitPerMinute: 1_000_000 }));
    mcp = await connectHttp(base, 'fuzz');
    tools = (await mcp.listTools()).tools;

    const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as any;
    validator = new DocumentValidator(doc);
    // The snapshot endpoints from their data, so a new entry is fuzzed without a change here...
    routes = ENDPOINTS.map((e) => ({
      path: e.path,
      query: Object.keys(e.query.shape),
      params: e.params ? Object.keys(e.params.shape) : [],
    }));
    // ...and every other route of the served document (the bundle files, openapi.json, docs).
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      if (routes.some((r) => r.path === path)) continue;
      const parameters: { name: string; in: string }[] = item.get?.parameters ?? [];
      routes.push({
        path,
        query: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        params: parameters.filter((p) => p.in === 'path').map((p) => p.name),
      });
    }
  });
  afterAll(async () => {
    await mcp?.close();
    await app?.close();
    await db?.close();
  });

  /** The server, after everything thrown at it, still serves /meta. */
  async function expectMetaServed() {
    const res = await fetch(`${base}/api/v1/meta`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { generation: number }).generation).toBe(1);
  }

  /**
   * GETs `route` with `values` (a path parameter's last value goes in the path, query parameters
   * are given once per value) and an optional unknown parameter; what is wrong with the answer.
   */
  async function apiFaults(
    route: Route,
    values: Map<string, string[]>,
    unknown?: readonly [string, string],
    accept = 'application/json',
  ): Promise<string[]> {
    let path = route.path;
    for (const name of route.params)
      path = path.replace(`{${name}}`, percentEncode(values.get(name)?.at(-1) ?? DEFAULTS[name] ?? 'x'));
    const pairs = route.query.flatMap((name) => (values.get(name) ?? []).map((v) => [name, v] as const));
    if (unknown) pairs.push(unknown);
    const qs = pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&');
    const url = `${path}${qs ? `?${qs}` : ''}`;

    const res = await fetch(base + url, { headers: { accept } });
    const text = await res.text();
    const said = `${url.slice(0, 300)} -> ${res.status} ${text.slice(0, 200)}`;
    if (res.status >= 500) return [said];
    if (res.status === 414 || res.status === 431) return url.length > MAX_URL_LENGTH ? [] : [said];
    const faults: string[] = [];
    // A value no database text can hold is never answered as if it were another string.
    if ([...values.values()].flat().some((v) => NOT_STORABLE.test(v)) && res.status !== 400)
      faults.push(`${said}: not a 400`);
    if (res.status < 400) return faults;
    const body = JSON.parse(text);
    faults.push(...validator.check('/', res.status, body).map((e) => `${said}: ${e}`));
    if (res.status === 400) {
      const names = [...route.params, ...pairs.map(([k]) => k)];
      if (!names.some((n) => body.error.message.startsWith(`${n}: `))) faults.push(`${said}: names no parameter`);
    } else if (res.status !== 404) faults.push(`${said}: neither 400 nor 404`);
    return faults;
  }

  /** Calls `tool` with `given`; what is wrong with the result. */
  async function mcpFaults(tool: Tool, given: Record<string, unknown>): Promise<string[]> {
    // An error may name an argument given or a required one left out.
    const names = [...Object.keys(given), ...Object.keys(tool.inputSchema.properties ?? {})];
    const call = `${tool.name} ${JSON.stringify(given).slice(0, 300)}`;
    let result: Awaited<ReturnType<Client['callTool']>>;
    try {
      result = await mcp.callTool({ name: tool.name, arguments: given });
    } catch (error) {
      // The one protocol error allowed: invalid params, naming an argument.
      const ok =
        error instanceof McpError &&
        error.code === ErrorCode.InvalidParams &&
        names.some((n) => error.message.includes(n));
      return ok ? [] : [`${call} threw ${String(error)}`];
    }
    const text = (result.content as { text: string }[])[0]?.text ?? '';
    if (!result.isError) {
      const unheld = textsOf(given).filter((t) => NOT_STORABLE.test(t));
      return unheld.length ? [`${call}: answered although ${JSON.stringify(unheld)} cannot be held`] : [];
    }
    const { code, message } = JSON.parse(text).error as { code: string; message: string };
    const said = `${call} -> ${code}: ${message.slice(0, 200)}`;
    if (/^(invalid|unknown)_/.test(code))
      return names.some((n) => message.startsWith(`${n}: `)) ? [] : [`${said}: names no argument`];
    return /^(generation_not_found|seller_not_found)$/.test(code) ? [] : [said];
  }

  it('default: every route of ENDPOINTS and the bundle route are fuzzed with their parameters', () => {
    const byPath = new Map(routes.map((r) => [r.path, r]));
    for (const e of ENDPOINTS) expect(byPath.has(e.path), e.path).toBe(true);
    expect(byPath.get('/api/v1/generations/{generation}/bundle/{file}')?.params).toEqual(['generation', 'file']);
    expect(byPath.get('/api/v1/sellers')?.query.sort()).toEqual(
      ['category', 'cursor', 'format', 'generation', 'limit', 'q', 'tier'].sort(),
    );
    expect(byPath.get('/api/v1/market/daily')?.query.sort()).toEqual(['from', 'generation', 'to']);
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
  });

  it('error: the faults of issue 20 are 400s naming the parameter, and the boundary days are served', async () => {
    const storable = 'must not contain U+0000 or an unpaired surrogate';
    const encoded = 'must be valid percent-encoded UTF-8';
    const day = 'must be a date from 0001-01-01 to 9999-12-31';
    for (const [url, code, message] of [
      ['/api/v1/sellers?q=a%00b', 'invalid_parameter', `q: ${storable}`],
      ['/api/v1/sellers?q=inference&cursor=%00', 'invalid_cursor', `cursor: ${storable}`],
      ['/api/v1/market/daily?from=0000-01-01', 'invalid_parameter', `from: ${day}`],
      ['/api/v1/market/daily?to=0000-02-29', 'invalid_parameter', `to: ${day}`],
      ['/api/v1/market/daily?from=10000-01-01', 'invalid_parameter', 'from: must be a date YYYY-MM-DD'],
      ['/api/v1/sellers?q=ab%ED%A0%80', 'invalid_parameter', `q: ${encoded}`],
      ['/api/v1/rankings?category=%ED%A0%80', 'invalid_parameter', `category: ${encoded}`],
      [`/api/v1/sellers/%ED%A0%80/payments`, 'invalid_slug', `slug: ${encoded}`],
      ['/api/v1/generations/1/bundle/%00', 'invalid_parameter', `file: ${storable}`],
      ['/api/v1/generations/1/bundle/x%ED%A0%80', 'invalid_parameter', `file: ${encoded}`],
      ['/api/v1/generations/%ED%A0%80/bundle/manifest.json', 'invalid_parameter', `generation: ${encoded}`],
    ] as const) {
      const res = await fetch(base + url);
      expect(res.status, url).toBe(400);
      expect(await res.json(), url).toEqual({ error: { code, message } });
    }
    // The first and the last day a `from`/`to` may name: the fixture's days lie between them.
    const all = (await (await fetch(`${base}/api/v1/market/daily`)).json()) as { days: unknown[] };
    const wide = await fetch(`${base}/api/v1/market/daily?from=0001-01-01&to=9999-12-31`);
    expect(wide.status).toBe(200);
    expect(((await wide.json()) as { days: unknown[] }).days).toEqual(all.days);
    expect(all.days.length).toBeGreaterThan(0);
    await expectMetaServed();
  });

  it('behavior: each API parameter alone with each boundary value: no 5xx, a 400 names it', async () => {
    const faults: string[] = [];
    const names = [...new Set(routes.flatMap((r) => [...r.params, ...r.query]))];
    for (const name of names) {
      const having = routes.filter((r) => r.params.includes(name) || r.query.includes(name));
      for (const [i, value] of BOUNDARIES.entries())
        faults.push(...(await apiFaults(having[i % having.length]!, new Map([[name, [value]]]))));
    }
    expect(faults).toEqual([]);
    await expectMetaServed();
  });

  it(
    'behavior: random API requests with a bad value: no 5xx, a 400 names a parameter given',
    async () => {
      // Values the route's parameters take (query ones optional), mostly one of them replaced by a
      // bad value (rarely given twice), rarely an unknown parameter.
      const request = fc.integer({ min: 0, max: routes.length - 1 }).chain((i) => {
        const route = routes[i]!;
        const names = [...route.params, ...route.query];
        return fc.record({
          route: fc.constant(route),
          params: fc.tuple(...route.params.map((n) => TAKES[n] ?? hostile)),
          query: fc.tuple(...route.query.map((n) => fc.option(TAKES[n] ?? hostile, { nil: undefined, freq: 2 }))),
          bad: names.length
            ? fc.option(
                fc
                  .integer({ min: 0, max: names.length - 1 })
                  .chain((k) =>
                    fc.record({ name: fc.constant(names[k]!), value: badTextOf(names[k]!), twice: rarely }),
                  ),
                { nil: undefined, freq: 2 },
              )
            : fc.constant(undefined),
          unknown: seldom(fc.tuple(fc.stringMatching(/^[a-z_]{1,12}$/), hostile)),
          accept: fc.constantFrom('application/json', 'text/csv', '*/*'),
        });
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ route, params, query, bad, unknown, accept }) => {
          const values = new Map<string, string[]>();
          route.params.forEach((name, k) => values.set(name, [params[k]!]));
          route.query.forEach((name, k) => query[k] !== undefined && values.set(name, [query[k]!]));
          if (bad) values.set(bad.name, bad.twice ? [...(values.get(bad.name) ?? []), bad.value] : [bad.value]);
          expect(await apiFaults(route, values, unknown, accept)).toEqual([]);
        }),
        { seed: SEED, numRuns: RUNS },
      );
      await expectMetaServed();
    },
    RANDOM_TIMEOUT_MS,
  );

  /** The arguments a call must give while another one is tried: the required ones. */
  const requiredOf = (tool: Tool, but: string) =>
    Object.fromEntries(
      (tool.inputSchema.required ?? [])
        .filter((n) => n !== but)
        .map((n) => {
          const schema = (tool.inputSchema.properties?.[n] ?? {}) as Property;
          return [n, schema.enum?.[0] ?? DEFAULTS[n] ?? 'x'];
        }),
    );

  it('behavior: each MCP argument alone with each boundary value: no protocol or internal error, a tool error names it', async () => {
    const faults: string[] = [];
    const names = [...new Set(tools.flatMap((t) => Object.keys(t.inputSchema.properties ?? {})))];
    for (const name of names) {
      const having = tools.filter((t) => name in (t.inputSchema.properties ?? {}));
      for (const [i, value] of [...BOUNDARIES, ...JSON_BOUNDARIES].entries()) {
        const tool = having[i % having.length]!;
        faults.push(...(await mcpFaults(tool, { ...requiredOf(tool, name), [name]: value })));
      }
    }
    expect(faults).toEqual([]);
    await expectMetaServed();
  });

  it(
    'behavior: random MCP calls with a bad value: no protocol or internal error, a tool error names an argument',
    async () => {
      // Values the tool's arguments take (required ones mostly given), mostly one of them replaced
      // by a bad value (text poisoned, or any JSON value), rarely an unknown argument.
      const call = fc.integer({ min: 0, max: tools.length - 1 }).chain((i) => {
        const tool = tools[i]!;
        const properties = Object.entries((tool.inputSchema.properties ?? {}) as Record<string, Property>);
        const required = new Set(tool.inputSchema.required ?? []);
        return fc.record({
          tool: fc.constant(tool),
          args: fc.tuple(
            ...properties.map(([name, schema]) =>
              fc.option(takes(name, schema), { nil: undefined, freq: required.has(name) ? 10 : 2 }),
            ),
          ),
          bad: properties.length
            ? fc.option(
                fc.integer({ min: 0, max: properties.length - 1 }).chain((k) => {
                  const [name, schema] = properties[k]!;
                  const text = schema.type === 'string' && !schema.enum;
                  return fc.record({
                    name: fc.constant(name),
                    value: text
                      ? fc.oneof(
                          { weight: 2, arbitrary: poisoned(takes(name, schema) as fc.Arbitrary<string>) },
                          { weight: 1, arbitrary: json },
                        )
                      : json,
                  });
                }),
                { nil: undefined, freq: 2 },
              )
            : fc.constant(undefined),
          unknown: seldom(fc.tuple(fc.stringMatching(/^[a-z_]{1,12}$/), json)),
        });
      });
      await fc.assert(
        fc.asyncProperty(call, async ({ tool, args, bad, unknown }) => {
          const given: Record<string, unknown> = {};
          Object.keys(tool.inputSchema.properties ?? {}).forEach((name, k) => {
            if (args[k] !== undefined) given[name] = args[k];
          });
          if (bad) given[bad.name] = bad.value;
          if (unknown && !(unknown[0] in given)) given[unknown[0]] = unknown[1];
          expect(await mcpFaults(tool, given)).toEqual([]);
        }),
        { seed: SEED, numRuns: RUNS },
      );
      await expectMetaServed();
    },
    RANDOM_TIMEOUT_MS,
  );
});

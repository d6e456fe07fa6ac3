import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { A, B, seedFixture } from './fixture.ts';
import { DocumentValidator, get, type ServedResponse } from './helpers.ts';

/**
 * The strict OpenAPI check (issue 23): every operation of the served document, with every
 * status it declares, answered for real and checked by the strict validator (test/api/helpers.ts:
 * the status must be declared, the body must match its schema with no undeclared property, a
 * 304 has no body, a non-JSON answer has a declared media type). Each status comes from a real
 * cause: a bad or unknown parameter (400), an unknown generation or file (404), a POST (405), a
 * long URL (414), a rate limit of 1 a minute (429), a database whose `generations` table is gone
 * (500: a real Postgres/PGlite error, not a fake), a database with nothing published (503).
 */

/** The id of the operator group seedGroup adds (op_ + its lowest member address without 0x). */
const GROUP = `op_${A.slice(2)}`;

/** A concrete URL of each path template of the document. */
const URLS: Record<string, string> = {
  '/api/v1/meta': '/api/v1/meta',
  '/api/v1/sellers': '/api/v1/sellers',
  '/api/v1/directory': '/api/v1/directory',
  '/api/v1/rankings': '/api/v1/rankings',
  '/api/v1/sellers/{slug}': `/api/v1/sellers/${A}`,
  '/api/v1/sellers/{slug}/payments': `/api/v1/sellers/${A}/payments`,
  '/api/v1/sellers/{slug}/periods': `/api/v1/sellers/${A}/periods`,
  '/api/v1/sellers/{slug}/daily': `/api/v1/sellers/${A}/daily`,
  '/api/v1/market/daily': '/api/v1/market/daily',
  '/api/v1/market/summary': '/api/v1/market/summary',
  '/api/v1/operators': '/api/v1/operators',
  '/api/v1/operators/{id}': `/api/v1/operators/${GROUP}`,
  '/api/v1/generations/{generation}/bundle/{file}': '/api/v1/generations/1/bundle/manifest.json',
  '/api/v1/openapi.json': '/api/v1/openapi.json',
  '/api/v1/docs': '/api/v1/docs',
};

/** An operator group of A and B in the fixture's published generation (the fixture has none). */
async function seedGroup(db: TestDatabase) {
  const { generation: g } = await db.db.selectFrom('published_pointer').select('generation').executeTakeFirstOrThrow();
  await db.db
    .insertInto('gen_outputs')
    .values(['operator_groups', 'market_summary'].map((output) => ({ generation: g, output })))
    .execute();
  await db.db
    .insertInto('gen_operator_groups')
    .values({
      generation: g,
      group_id: GROUP,
      seller_count: 2,
      seller_addresses: [A, B],
      hosts: ['a.example'],
      payments_30d: 2,
      payers_30d: 2,
      verified_revenue_30d_micro: 30n,
      external_revenue_30d_micro: null,
    })
    .execute();
  await db.db
    .insertInto('gen_operator_members')
    .values([A, B].map((seller_address) => ({ generation: g, seller_address, group_id: GROUP })))
    .execute();
}

/** The URL that answers 404 on each path: an unknown generation, or an unknown file. */
const NOT_FOUND: Record<string, string> = {
  '/api/v1/generations/{generation}/bundle/{file}': '/api/v1/generations/1/bundle/nope.ndjson',
};

describe.each(backends())('strict OpenAPI contract on $backend', ({ backend }) => {
  const dbs: TestDatabase[] = [];
  const apps: FastifyInstance[] = [];
  let app: FastifyInstance;
  let validator: DocumentValidator;
  let paths: string[];
  /** Every (path, status) answered and checked. */
  const answered = new Set<string>();

  async function database(seed: 'fixture' | 'empty' | 'broken' | 'unavailable') {
    const db = await freshDatabase(backend);
    dbs.push(db);
    if (seed !== 'empty') {
      await seedFixture(db.db);
      await seedGroup(db);
    }
    // a real fault: the table every read starts from is gone
    if (seed === 'broken') await sql`alter table generations rename to generations_gone`.execute(db.db);
    // a real database error of a temporary kind: reading the generations raises SQLSTATE 57P01
    // (admin_shutdown: what a terminated backend reports), as test/api/csv-faults.test.ts does
    if (seed === 'unavailable') {
      await sql`alter table generations rename to generations_rows`.execute(db.db);
      await sql
        .raw(
          `create function shut_down() returns boolean language plpgsql as $$
           begin raise exception 'injected shutdown' using errcode = '57P01'; end $$`,
        )
        .execute(db.db);
      await sql`create view generations as select * from generations_rows where shut_down()`.execute(db.db);
    }
    return db;
  }
  async function api(db: TestDatabase, rateLimitPerMinute = 100_000) {
    const built = await buildApi(db.db, { rateLimitPerMinute, cadenceSeconds: 900 });
    apps.push(built);
    return built;
  }
  /** Checks one answer of `path` strictly and records its status. */
  function checked(path: string, res: ServedResponse, method = 'get') {
    const type = String(res.headers['content-type'] ?? '');
    const json = type.startsWith('application/json');
    const errors = json || res.status === 304 ? validator.check(path, res.status, res.json, method) : [];
    if (!json && res.status !== 304) {
      // a non-JSON answer: its status and media type are declared
      if (!validator.statuses(path, method).includes(res.status)) errors.push(`${path} does not declare ${res.status}`);
    }
    expect(errors, `${method.toUpperCase()} ${path} -> ${res.status} ${type}`).toEqual([]);
    answered.add(`${path} ${res.status}`);
    return res;
  }

  beforeAll(async () => {
    app = await api(await database('fixture'));
    const doc = (await get(app, '/api/v1/openapi.json')).json;
    validator = new DocumentValidator(doc);
    paths = Object.keys(doc.paths);
  });
  afterAll(async () => {
    for (const a of apps) await a.close();
    for (const db of dbs) await db.close();
  });

  it('default: the document names a concrete URL here for every path', () => {
    expect(paths.sort()).toEqual(Object.keys(URLS).sort());
  });

  it('behavior: 200, 304, 400, 404, 405 and 414 on every path that declares them', async () => {
    for (const path of paths) {
      const url = URLS[path]!;
      const statuses = validator.statuses(path);
      const ok = checked(path, await get(app, url));
      expect(ok.status, url).toBe(200);
      if (statuses.includes(304)) {
        // /meta's tag is taken from its body, whose age_seconds changes every second: ask again
        // with a fresh tag until a request lands within the same second (the first, nearly always)
        let again: ServedResponse | undefined;
        for (let i = 0; i < 10 && again?.status !== 304; i++) {
          const tag = i === 0 ? ok.headers.etag : (await get(app, url)).headers.etag;
          again = checked(path, await get(app, url, { 'if-none-match': String(tag) }));
        }
        expect(again!.status, url).toBe(304);
      }
      const unknown = checked(path, await get(app, `${url}?zz=1`));
      expect([unknown.status, unknown.json.error.code], url).toEqual([400, 'unknown_parameter']);
      if (statuses.includes(404)) {
        const missing = checked(path, await get(app, NOT_FOUND[path] ?? `${url}?generation=99`));
        expect(missing.status, url).toBe(404);
      }
      // (the document describes GET operations; each declares the 405 every other method gets)
      const post = checked(path, await get(app, url, {}, 'POST'));
      expect([post.status, post.headers.allow], url).toEqual([405, 'GET, HEAD, OPTIONS']);
      if (statuses.includes(414)) {
        const long = checked(path, await get(app, `${url}?q=${'a'.repeat(2100)}`));
        expect(long.status, url).toBe(414);
      }
    }
  });

  it('behavior: 429 on every path, past the rate limit', async () => {
    const limited = await api(dbs[0]!, 1);
    await get(limited, '/api/v1/meta');
    for (const path of paths) {
      const res = checked(path, await get(limited, URLS[path]!));
      expect([res.status, res.json.error.code], path).toEqual([429, 'rate_limited']);
    }
  });

  it('behavior: 500 on every path that declares it, when the database fails', async () => {
    const broken = await api(await database('broken'));
    for (const path of paths.filter((p) => validator.statuses(p).includes(500))) {
      const res = checked(path, await get(broken, URLS[path]!));
      expect([res.status, res.json.error.code], path).toEqual([500, 'internal_error']);
    }
  });

  it('behavior: 503 on every path that declares it, before the first publish or when the database is unavailable', async () => {
    const empty = await api(await database('empty'));
    const unavailable = await api(await database('unavailable'));
    for (const path of paths.filter((p) => validator.statuses(p).includes(503))) {
      const res = checked(path, await get(unavailable, URLS[path]!));
      expect([res.status, res.json.error.code, res.headers['retry-after']], path).toEqual([503, 'unavailable', '5']);
      if (path.startsWith('/api/v1/generations/')) continue; // a bundle of no generation is a 404
      const none = checked(path, await get(empty, URLS[path]!));
      expect([none.status, none.json.error.code], path).toEqual([503, 'no_generation']);
    }
  });

  it('behavior: every declared status of every path was answered and checked', () => {
    const missing = paths.flatMap((p) =>
      validator
        .statuses(p)
        .filter((s) => !answered.has(`${p} ${s}`))
        .map((s) => `${p} ${s}`),
    );
    expect(missing).toEqual([]);
  });

  it('error: the strict validator rejects an undeclared property and an undeclared status', () => {
    const row = { error: { code: 'not_found', message: 'x' } };
    expect(validator.check('/api/v1/meta', 404, row)).toEqual([]);
    expect(validator.check('/api/v1/meta', 404, { error: { ...row.error, stack: 'at x' } })).not.toEqual([]);
    expect(validator.check('/api/v1/meta', 418, row)).toEqual(['GET /api/v1/meta does not declare status 418']);
    expect(validator.check('/api/v1/meta', 304, { a: 1 })).toEqual(['a 304 has a body']);
  });
});

import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { LISTINGS, listingId, seedFixture } from './fixture.ts';
import { parseCsv } from './helpers.ts';

/**
 * Faults while a CSV download streams (issue 20), over real HTTP on a listening server: a failure
 * of the row reader must never end the process. Before the first row it is the API's normal JSON
 * error; after it the download is cut (no final chunk), so the client's read fails. Logged both
 * ways, and the same server answers /api/v1/meta afterwards.
 *
 * The failures are real database errors raised inside the reader's own query: the fixture's
 * generation 1 gets EXTRA listings more (so the CSV reads two pages of 1,000), and its table
 * gen_listings_fixed is replaced by a view of the same rows whose title column goes through
 * csv_fault(). That function raises the SQLSTATE planned in csv_fault_plan for every listing at or
 * after `from_listing`; the action `terminate` (Postgres) makes the backend terminate itself with
 * pg_terminate_backend, as an operator or a failover would, so the driver sees a real 57P01 and a
 * dead connection. Declared expensive, the column is computed only for the rows a page returns
 * (Postgres computes costly output columns after ORDER BY ... LIMIT), so a fault at a listing of
 * page 2 fails exactly page 2 (and if a plan ever computed it earlier, the tests would fail, not pass).
 */
const EXTRA = 1100;
/** Listing ids of the extra rows: f000...0001 to f000...044c, after every fixture id (01.., 02.., ...). */
const extraId = (i: number) => `f${i.toString(16).padStart(63, '0')}`;
/** Every listing id of generation 1 in CSV (listing_id) order. */
const ALL_IDS = [...LISTINGS.map(([n]) => listingId(n)), ...Array.from({ length: EXTRA }, (_, i) => extraId(i + 1))];
/** Page 1 holds the first 1,000 rows; the fault starts inside page 2. */
const FAULT_FROM = ALL_IDS[1024]!;

const HEADER_LINE =
  'listing_id,seller_address,verifiability,resource_url,title,network,description,category,category_source,' +
  'tier,evidence_state,verified_revenue_30d_micro,median_payment_30d_micro,farm_flag,farm_reasons,sibling_listings';

describe.each(backends())('CSV faults on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let logs: { level: number; msg: string; err?: { code?: string } }[] = [];

  /** Plans a fault: every listing from `from` on raises `action` (a SQLSTATE, or `terminate`). */
  const planFault = async (from: string, action: string) => {
    await sql`delete from csv_fault_plan`.execute(db.db);
    await sql`insert into csv_fault_plan values (${from}, ${action})`.execute(db.db);
  };
  /** The SQLSTATE a terminated backend reports: the real one on Postgres, raised as such on PGlite (one in-process backend). */
  const terminate = backend === 'pg' ? 'terminate' : '57P01';

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture(db.db);
    await sql`
      insert into gen_listings_fixed
      select 1, 'f' || lpad(to_hex(i), 63, '0'), null, 'other_rail', 'https://x' || i || '.example/api', 'Extra ' || i,
             'solana', null, 'inference', 'auto', 'listed_only', 'not_observed', null, null, null, null, 0
        from generate_series(1, ${EXTRA}) i`.execute(db.db);
    await sql`create table csv_fault_plan (from_listing text not null, action text not null)`.execute(db.db);
    await sql
      .raw(
        `create function csv_fault(id text, title text) returns text language plpgsql stable cost 10000 as $$
         declare planned text;
         begin
           select action into planned from csv_fault_plan where id >= from_listing limit 1;
           if planned = 'terminate' then
             perform pg_terminate_backend(pg_backend_pid());
             perform pg_sleep(10); -- the termination is delivered here
           elsif planned is not null then
             raise exception 'injected fault at listing %', id using errcode = planned;
           end if;
           return title;
         end $$`,
      )
      .execute(db.db);
    await sql`alter table gen_listings_fixed rename to gen_listings_fixed_rows`.execute(db.db);
    await sql`
      create view gen_listings_fixed as
      select generation, listing_id, seller_address, verifiability, resource_url, csv_fault(listing_id, title) as title,
             network, description, category, category_source, tier, evidence_state, verified_revenue_30d_micro,
             median_payment_30d_micro, farm_flag, farm_reasons, sibling_listings
        from gen_listings_fixed_rows`.execute(db.db);
    const log = pino({ level: 'info', base: undefined }, { write: (line: string) => void logs.push(JSON.parse(line)) });
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900, log });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });
  beforeEach(async () => {
    logs = [];
    if (db) await sql`delete from csv_fault_plan`.execute(db.db);
  });

  /** The same server still answers: every fault test ends with this. */
  async function expectStillServing() {
    const meta = await fetch(`${base}/api/v1/meta`);
    expect(meta.status).toBe(200);
    expect(((await meta.json()) as { generation: number }).generation).toBe(1);
  }

  /** Reads a body to its end; returns what arrived and the error that cut it (undefined when complete). */
  async function readAll(res: Response): Promise<{ text: string; error: unknown }> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read())
        text += decoder.decode(r.value, { stream: true });
      return { text, error: undefined };
    } catch (error) {
      return { text, error };
    }
  }

  const CSV_REQUESTS: [string, string, Record<string, string>][] = [
    ['?format=csv', '/api/v1/sellers?format=csv', {}],
    ['Accept: text/csv', '/api/v1/sellers', { accept: 'text/csv' }],
  ];

  it('default: without a fault the download is complete (two pages, every listing once, in order)', async () => {
    const res = await fetch(`${base}/api/v1/sellers?format=csv`);
    expect(res.status).toBe(200);
    const [header, ...rows] = parseCsv(await res.text());
    expect(header!.join(',')).toBe(HEADER_LINE);
    expect(rows.map((r) => r[0])).toEqual(ALL_IDS);
    expect(rows.at(-1)![4]).toBe(`Extra ${EXTRA}`);
  });

  it.each(CSV_REQUESTS)(
    'error: a database error on the first page (%s) is the JSON 500 of the API, logged',
    async (_name, path, headers) => {
      await planFault('', '22021'); // the SQLSTATE a NUL in a text parameter gets
      const res = await fetch(`${base}${path}`, { headers });
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('content-disposition')).toBeNull();
      expect(await res.json()).toEqual({
        error: { code: 'internal_error', message: 'internal error; it has been logged' },
      });
      expect(logs.filter((l) => l.msg === 'request failed').map((l) => l.err?.code)).toEqual(['22021']);
      await expectStillServing();
    },
  );

  it('error: a backend terminated on the first page is the 503 unavailable of the API, logged', async () => {
    await planFault('', terminate);
    const res = await fetch(`${base}/api/v1/sellers?format=csv`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unavailable');
    expect(logs.filter((l) => l.msg === 'database unavailable').map((l) => l.err?.code)).toEqual(['57P01']);
    await expectStillServing();
  });

  it.each([
    ['a database error', '22021', '22021'],
    ['a terminated backend', terminate, '57P01'],
  ])('error: %s after the first row cuts the download: the read fails, no final chunk', async (_n, action, code) => {
    await planFault(FAULT_FROM, action);
    // Uncompressed, so the bytes that arrived can be read back.
    const res = await fetch(`${base}/api/v1/sellers?format=csv`, { headers: { 'accept-encoding': 'identity' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-encoding')).toBeNull();
    const { text, error } = await readAll(res);
    expect(error).toBeInstanceOf(Error); // the connection closed before the terminating chunk
    expect(text.startsWith(`${HEADER_LINE}\n${ALL_IDS[0]},`)).toBe(true);
    // What arrived is a prefix of the rows (the last line may be cut), all before the fault.
    const ids = parseCsv(text)
      .slice(1, -1)
      .map((r) => r[0]);
    expect(ids).toEqual(ALL_IDS.slice(0, ids.length));
    expect(ids.length).toBeLessThan(ALL_IDS.indexOf(FAULT_FROM));
    expect(logs.filter((l) => l.msg === 'CSV download aborted after its first row').map((l) => l.err?.code)).toEqual([
      code,
    ]);
    await expectStillServing();
  });

  it('error: a compressed download cut after the first row fails on the client too', async () => {
    await planFault(FAULT_FROM, '22021');
    const download = async () => {
      const res = await fetch(`${base}/api/v1/sellers?format=csv`, {
        headers: { 'accept-encoding': 'gzip' },
      });
      // The first compressed bytes may still sit in the compressor when the fault comes: then
      // the connection closes before the status line, and fetch itself fails.
      expect(res.status).toBe(200);
      expect(res.headers.get('content-encoding')).toBe('gzip');
      return res.arrayBuffer();
    };
    await expect(download()).rejects.toThrow();
    expect(logs.filter((l) => l.msg === 'CSV download aborted after its first row')).toHaveLength(1);
    await expectStillServing();
  });

  it('behavior: after the faults, the next download is complete again', async () => {
    await planFault(FAULT_FROM, terminate);
    await readAll(await fetch(`${base}/api/v1/sellers?format=csv`));
    await sql`delete from csv_fault_plan`.execute(db.db);
    const rows = parseCsv(await (await fetch(`${base}/api/v1/sellers`, { headers: { accept: 'text/csv' } })).text());
    expect(rows.slice(1).map((r) => r[0])).toEqual(ALL_IDS);
    await expectStillServing();
  });

  it.each(CSV_REQUESTS)(
    'error: a NUL in q (%s) is answered as the JSON directory answers it, never by a crash',
    async (_name, path, headers) => {
      const q = `${path.includes('?') ? '&' : '?'}q=a%00b`;
      const csv = await fetch(`${base}${path}${q}`, { headers });
      const json = await fetch(`${base}/api/v1/sellers?q=a%00b`);
      expect(csv.status).toBeGreaterThanOrEqual(400);
      expect(csv.status).toBe(json.status);
      expect(csv.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await csv.json()).toEqual(await json.json());
      await expectStillServing();
    },
  );

  it('error: a bad parameter of a CSV download is a 400 naming it', async () => {
    const res = await fetch(`${base}/api/v1/sellers?format=csv&category=nope`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^category: /);
    await expectStillServing();
  });
});

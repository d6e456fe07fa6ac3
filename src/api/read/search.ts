import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../db/schema.ts';
import { decodeSearchCursor, encodeSearchCursor } from '../cursor.ts';
import type { GenerationRow } from './generation.ts';
import {
  addressSearch,
  bandWalk,
  combinations,
  ginSearch,
  oneWord,
  type ListingRowOf,
  type SearchWord,
} from './search-paths.ts';

/**
 * Search (`GET /api/v1/sellers?q=`, docs/api.md "Search"): which listings a `q` finds and in what
 * order. The strategies are the named functions below:
 * - address (addressPrefix): a `q` of 6 to 40 hex digits, with or without `0x`, finds the listings
 *   of the sellers whose address starts with them, by seller address, then listing_id;
 * - words (searchWords): otherwise q is cut into words exactly as the listings are (the SQL
 *   function search_words, migration 0039), and a listing must match every word;
 * - plural (pluralForms): a word matches its singular and plural forms (video/videos,
 *   query/queries);
 * - prefix (prefixWords): a word of 3 letters or more that is no word of the catalog in any of
 *   those forms is a word being typed, and matches the catalog's words that begin with it
 *   (`vid` finds `video`).
 * Results of words: by descending score, then ascending listing_id. A listing's score is, per
 * word of q, 4 when its title holds a matching word, + 2 when its description does, + 1 when its
 * resource URL does (the SQL function search_score).
 */

/** The tuning of search, passed in through ApiOptions.search (defaults: DEFAULT_SEARCH_TUNING). */
export interface SearchTuning {
  /** Letters a word needs before it is matched as a prefix (default 3). */
  prefixMinLength: number;
  /** The catalog words a prefix matches at most, those held by the most listings first (default 64). */
  prefixMaxWords: number;
  /** Hex digits an address prefix needs (default 6). */
  addressMinDigits: number;
  /**
   * Which path a search of words that each match a single catalog word takes (each gives the
   * same rows in the same order: test/api/search.test.ts runs its cases on each). The band walk
   * (bandWalk) is taken when the words have at most `bandWalkMaxCombinations` combinations of
   * bands and the page ends within the first `bandWalkMaxRows` results, and then:
   * - several words: when about `bandWalkMinMatches` listings or more hold them all (estimated
   *   from the band sizes as if the words were independent). Fewer matches are cheaper to score
   *   one by one through the GIN index than the walk's combinations are to read;
   * - one word: never by default (`bandWalkOneWord`): the word's postings read in score order
   *   (oneWord) are the same work in one index scan ('filtered' walks it when a `category` or
   *   `tier` is given, 'always' always).
   * A word that matches several catalog words (a plural, a prefix) is searched through the GIN
   * index (ginSearch).
   */
  bandWalkMinMatches: number;
  bandWalkOneWord: 'filtered' | 'always' | 'never';
  bandWalkMaxCombinations: number;
  bandWalkMaxRows: number;
}

export const DEFAULT_SEARCH_TUNING: Readonly<SearchTuning> = Object.freeze({
  prefixMinLength: 3,
  prefixMaxWords: 64,
  addressMinDigits: 6,
  bandWalkMinMatches: 1000,
  bandWalkOneWord: 'never',
  bandWalkMaxCombinations: 64,
  bandWalkMaxRows: 500,
});

export interface SearchParams {
  /** The search text (1 to 200 characters, checked by the API's query schema). */
  q: string;
  /** A position from a previous page's nextCursor. */
  cursor?: string | undefined;
  category?: string | undefined;
  tier?: 'verified' | 'listed_only' | undefined;
  /** Rows of the page. */
  limit: number;
}

export interface SearchPage {
  /** The listing rows of the page (the columns of gen_listings), in result order. */
  rows: ListingRowOf[];
  /** The position after the page, or null when it is the last. */
  nextCursor: string | null;
}

/**
 * The address strategy: the lowercase `0x` prefix a q of hex digits stands for, or null. A q of
 * letters a-f only (`facade`) is also a word: `alsoWord` says so, and the caller reads it as an
 * address only when some seller's address starts with it.
 */
export function addressPrefix(q: string, minDigits: number): { prefix: string; alsoWord: boolean } | null {
  const m = /^(0x)?([0-9a-f]+)$/i.exec(q.trim());
  if (!m || m[2]!.length < minDigits || m[2]!.length > 40) return null;
  const hex = m[2]!.toLowerCase();
  return { prefix: `0x${hex}`, alsoWord: !m[1] && !/[0-9]/.test(hex) };
}

/** Words whose final s does not make a plural: nobody's plural (test/api/search-labels/README.md). */
const NOT_PLURAL = new Set(
  'news series species gas bus plus status analysis basis always this has was is its us yes less across'.split(' '),
);

/** English plurals of a word: + s; + es after s, x, z, ch, sh or o; consonant + y -> ies. */
function plurals(w: string): string[] {
  const forms = [`${w}s`];
  if (/(s|x|z|ch|sh|o)$/.test(w)) forms.push(`${w}es`);
  if (/[^aeiou]y$/.test(w)) forms.push(`${w.slice(0, -1)}ies`);
  return forms;
}

/**
 * The plural strategy: the forms a word matches, itself first, then its plurals and its
 * singulars (the words whose plural it is), a word of NOT_PLURAL being no plural.
 */
export function pluralForms(word: string): string[] {
  const forms = [word];
  for (const p of plurals(word)) if (!NOT_PLURAL.has(p)) forms.push(p);
  if (!NOT_PLURAL.has(word))
    for (const s of [word.slice(0, -1), word.slice(0, -2), `${word.slice(0, -3)}y`])
      if (s.length > 0 && plurals(s).includes(word) && !forms.includes(s)) forms.push(s);
  return forms;
}

/** One word of q with the catalog words it matches (terms) and their bands in the snapshot. */
interface QueryWord {
  word: string;
  terms: SearchWord[];
}

/**
 * The words strategy: q cut into words by the SQL function search_words (the listings' own
 * cut, so a search and a document are never cut two ways), distinct, in byte order. With each
 * word, the catalog words of its plural forms that the generation's snapshot holds, with their
 * bands (catalog_word_bands, migration 0019), and the snapshot's listing count. One statement:
 * the candidate forms of the SQL array are a superset that pluralForms narrows.
 */
async function searchWords(
  db: Kysely<Schema>,
  g: GenerationRow,
  q: string,
): Promise<{ words: QueryWord[]; listings: number }> {
  const { rows } = await sql<{
    word: string;
    form: string | null;
    score: number | null;
    listings: number | null;
    total: number | null;
  }>`
    select w.word, b.word as form, b.score, b.listings,
           (select s.listings_count from catalog_snapshots s where s.snapshot_id = ${g.catalog_snapshot_id}) as total
      from unnest(tsvector_to_array(search_words(${q}))) with ordinality as w(word, n)
      left join lateral (
        select c.word, c.score, c.listings
          from catalog_word_bands c
         where c.snapshot_id = ${g.catalog_snapshot_id}
           and c.word in (w.word, w.word || 's', w.word || 'es', left(w.word, -1) || 'ies',
                          left(w.word, -1), left(w.word, -2), left(w.word, -3) || 'y')) b on true
     order by w.n, b.word, b.score desc`.execute(db);
  const words: QueryWord[] = [];
  for (const r of rows) {
    if (words.at(-1)?.word !== r.word) words.push({ word: r.word, terms: [] });
    const w = words.at(-1)!;
    if (r.form === null || r.score === null || r.listings === null || !pluralForms(r.word).includes(r.form)) continue;
    if (w.terms.at(-1)?.word !== r.form) w.terms.push({ word: r.form, bands: [] });
    w.terms.at(-1)!.bands.push({ score: r.score, listings: r.listings });
  }
  return { words, listings: rows[0]?.total ?? 0 };
}

/**
 * The prefix strategy: the snapshot's words that begin with `prefix`, with their bands, at most
 * `max` of them, those held by the most listings first (then in byte order).
 */
async function prefixWords(db: Kysely<Schema>, g: GenerationRow, prefix: string, max: number): Promise<SearchWord[]> {
  const { rows } = await sql<{ word: string; score: number; listings: number }>`
    select word, score, listings
      from catalog_word_bands
     where snapshot_id = ${g.catalog_snapshot_id} and word like ${`${prefix}%`}
     order by word, score desc`.execute(db);
  const byWord = new Map<string, SearchWord>();
  for (const r of rows) {
    if (!r.word.startsWith(prefix)) continue; // (only letters and digits: no LIKE wildcard in a word)
    const w = byWord.get(r.word) ?? { word: r.word, bands: [] };
    w.bands.push({ score: r.score, listings: r.listings });
    byWord.set(r.word, w);
  }
  const total = (w: SearchWord) => w.bands.reduce((sum, b) => sum + b.listings, 0);
  return [...byWord.values()]
    .sort((a, b) => total(b) - total(a) || (a.word < b.word ? -1 : 1))
    .slice(0, max)
    .sort((a, b) => (a.word < b.word ? -1 : 1));
}

/**
 * One page of a search in generation `g` (the entry point of the listing search: the API's
 * `/api/v1/sellers?q=` and any other reader of it). The cursor is the position in the result
 * order: the results of a generation never change, so its pages neither skip nor repeat a row.
 */
export async function searchListings(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: SearchParams,
  tuning: SearchTuning = DEFAULT_SEARCH_TUNING,
): Promise<SearchPage> {
  const offset = p.cursor === undefined ? 0 : decodeSearchCursor(p.cursor);
  const rows = await searchRows(db, g, p, offset, tuning);
  const page = rows.slice(0, p.limit);
  return { rows: page, nextCursor: rows.length > p.limit ? encodeSearchCursor(offset + page.length) : null };
}

/**
 * The words of q (words and prefix strategies) with the catalog words each matches, words that
 * match the same catalog words counted once ('video videos'). A listing is found when, for every
 * word, its document holds one of that word's catalog words; a word with none finds nothing.
 */
async function matchedWords(
  db: Kysely<Schema>,
  g: GenerationRow,
  q: string,
  t: SearchTuning,
): Promise<{ words: QueryWord[]; listings: number }> {
  const found = await searchWords(db, g, q);
  for (const w of found.words)
    if (w.terms.length === 0 && w.word.length >= t.prefixMinLength)
      w.terms = await prefixWords(db, g, w.word, t.prefixMaxWords);
  const seen = new Set<string>();
  const words = found.words.filter((w) => {
    const key = w.terms.map((x) => x.word).join(' ');
    return !seen.has(key) && seen.add(key);
  });
  return { words, listings: found.listings };
}

/**
 * The match rule of the words strategies as a list, per word of q, of the catalog words it
 * matches (the listing search's own: searchListings finds exactly the listings whose document
 * holds one of each list), for a reader that needs the set of matches rather than a page of
 * them, such as the seller directory (./search-match.ts). Null when q has no word or a word
 * matches no catalog word: nothing is found.
 */
export async function matchTerms(
  db: Kysely<Schema>,
  g: GenerationRow,
  q: string,
  tuning: SearchTuning = DEFAULT_SEARCH_TUNING,
): Promise<string[][] | null> {
  const { words } = await matchedWords(db, g, q, tuning);
  if (words.length === 0 || words.some((w) => w.terms.length === 0)) return null;
  return words.map((w) => w.terms.map((x) => x.word));
}

/** The rows of a page and one more, if any (it tells whether more follow). */
async function searchRows(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: SearchParams,
  offset: number,
  t: SearchTuning,
): Promise<ListingRowOf[]> {
  const address = addressPrefix(p.q, t.addressMinDigits);
  if (address) {
    const rows = await addressSearch(
      db,
      g,
      address.prefix,
      p,
      address.alsoWord ? 0 : offset,
      address.alsoWord ? 1 : p.limit + 1,
    );
    if (!address.alsoWord) return rows;
    if (rows.length > 0) return addressSearch(db, g, address.prefix, p, offset, p.limit + 1);
  }
  const { words, listings } = await matchedWords(db, g, p.q, t);
  if (words.length === 0 || words.some((w) => w.terms.length === 0)) return [];
  if (words.some((w) => w.terms.length > 1))
    return ginSearch(
      db,
      g,
      words.map((w) => w.terms.map((x) => x.word)),
      p,
      offset,
    );
  const single = words.map((w) => w.terms[0]!);
  // Listings expected to hold every word, were the words independent.
  const matches = single.reduce(
    (m, w) => (m * w.bands.reduce((sum, b) => sum + b.listings, 0)) / Math.max(1, listings),
    listings,
  );
  const combos = combinations(single, t.bandWalkMaxCombinations);
  const filtered = p.category !== undefined || p.tier !== undefined;
  const walk =
    (single.length > 1
      ? matches >= t.bandWalkMinMatches
      : t.bandWalkOneWord === 'always' || (t.bandWalkOneWord === 'filtered' && filtered)) &&
    combos.length > 0 && // (none when there are more than bandWalkMaxCombinations)
    offset + p.limit + 1 <= t.bandWalkMaxRows;
  if (walk) return bandWalk(db, g, combos, p, offset);
  if (single.length === 1) return oneWord(db, g, single[0]!.word, p, offset);
  return ginSearch(
    db,
    g,
    single.map((w) => [w.word]),
    p,
    offset,
  );
}

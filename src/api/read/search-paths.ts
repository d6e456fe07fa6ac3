import { sql, type Kysely, type Selectable } from 'kysely';
import { GEN_LISTING_COLUMNS, type GenListingsTable, type Schema } from '../../db/schema.ts';
import type { GenerationRow } from './generation.ts';
import { generationListings } from './listings.ts';

/**
 * The ways a search reads the database (src/api/read/search.ts chooses one): a word's postings in
 * score order (oneWord), the walk through score bands (bandWalk), the GIN index (ginSearch), and
 * a seller address prefix (addressSearch). Each returns the rows of the page and one more.
 */

/** A listing row of a generation: the columns of gen_listings. */
export type ListingRowOf = Selectable<GenListingsTable>;

/** The filters and page size a search path reads. */
export interface SearchFilters {
  category?: string | undefined;
  tier?: 'verified' | 'listed_only' | undefined;
  limit: number;
}

export interface SearchWord {
  word: string;
  /** The word's postings in the snapshot per score (catalog_word_bands, migration 0019). */
  bands: { score: number; listings: number }[];
}

/** One combination of bands, one per word: its score (their sum) and its words, the smallest band first. */
export interface Combination {
  score: number;
  words: { word: string; score: number; listings: number }[];
}

/**
 * Every combination of the words' bands, best score first (ties in a fixed order); none when there
 * are more than `max` (a q of 200 characters can hold dozens of words of several bands each: their
 * combinations would run into the billions, and building them ran the API out of memory).
 */
export function combinations(words: SearchWord[], max: number): Combination[] {
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
export function oneWord(db: Kysely<Schema>, g: GenerationRow, word: string, p: SearchFilters, offset: number) {
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

export async function bandWalk(
  db: Kysely<Schema>,
  g: GenerationRow,
  combos: Combination[],
  p: SearchFilters,
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
  const { rows: found } = await sql<ListingRowOf>`
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
function memberOf(db: Kysely<Schema>, g: GenerationRow, p: SearchFilters, alias: 'c' | 'd') {
  let q = db
    .selectFrom(generationListings(db, g).as('l'))
    .select(sql`true`.as('yes'))
    .where(sql<boolean>`l.listing_id = ${sql.ref(`${alias}.listing_id`)}`);
  if (p.category !== undefined) q = q.where('l.category', '=', p.category);
  if (p.tier !== undefined) q = q.where('l.tier', '=', p.tier);
  return q;
}

/**
 * A search through the GIN index, for words that may each match several catalog words (`terms`:
 * per word of q, the catalog words it matches). Every listing of the snapshot that holds, for
 * each word, one of its catalog words is scored (the tsquery is a constant of the statement:
 * parsed once, not once per row) and checked against the generation and the filters; only the
 * rows of the page are read from the generation. A listing's score per word is search_score
 * (migration 0039) of the weights of all its matching words together: 4 when one is in the
 * title, + 2 in the description, + 1 in the resource URL.
 */
export async function ginSearch(
  db: Kysely<Schema>,
  g: GenerationRow,
  terms: string[][],
  p: SearchFilters,
  offset: number,
) {
  const query = termsQuery(terms);
  const termList = terms.flat();
  const wordOf = terms.flatMap((ts, k) => ts.map(() => k));
  const { rows } = await sql<ListingRowOf>`
    select ${sql.join(GEN_LISTING_COLUMNS.map((c) => sql.ref(`l.${c}`)))}
      from (select c.listing_id,
                   (select sum(z.s)::int from (
                      select bit_or(search_score(x.weights)) as s
                        from unnest(c.search_doc) x
                        join unnest(${termList}::text[], ${wordOf}::int[]) as t(term, k) on t.term = x.lexeme
                       group by t.k) z) as score
              from catalog_listings c
             where c.snapshot_id = ${g.catalog_snapshot_id}
               and ${SERIAL}
               and c.search_doc @@ ${query}::tsquery
               and (${memberOf(db, g, p, 'c').limit(1)})
             order by score desc, c.listing_id
             offset ${offset}::int limit ${p.limit + 1}::int) m
     cross join lateral (select * from (${generationListings(db, g)}) gl where gl.listing_id = m.listing_id limit 1) l
     order by m.score desc, m.listing_id`.execute(db);
  return rows;
}

/** A tsquery literal of one word (only letters and digits: nothing to escape but a quote). */
const lexeme = (word: string) => `'${word.replaceAll("'", "''")}'`;

/** The tsquery text of the words' catalog words: one of each word's, for every word. */
export const termsQuery = (terms: string[][]) => terms.map((ts) => `(${ts.map(lexeme).join(' | ')})`).join(' & ');

/**
 * The listings of the sellers whose address starts with `prefix` (lowercase, `0x` and 1 to 40 hex
 * digits), by seller address, then listing_id. The range finds them through the snapshot's
 * seller index; starts_with keeps the exact prefix whatever the collation.
 */
export async function addressSearch(
  db: Kysely<Schema>,
  g: GenerationRow,
  prefix: string,
  p: SearchFilters,
  offset: number,
  rows: number,
) {
  let q = db
    .selectFrom(generationListings(db, g).as('l'))
    .select(GEN_LISTING_COLUMNS)
    .where('seller_address', '>=', prefix)
    .where('seller_address', '<', `${prefix}g`)
    .where(sql<boolean>`starts_with(seller_address, ${prefix})`);
  if (p.category !== undefined) q = q.where('category', '=', p.category);
  if (p.tier !== undefined) q = q.where('tier', '=', p.tier);
  return q.orderBy('seller_address').orderBy('listing_id').offset(offset).limit(rows).execute();
}

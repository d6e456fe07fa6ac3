import { sql, type Kysely, type Selectable } from 'kysely';
import { GEN_LISTING_COLUMNS, type GenListingsTable, type Schema } from '../../db/schema.ts';
import type { z } from 'zod';
import { decodeSearchCursor, encodeSearchCursor } from '../cursor.ts';
import type { DirectoryPage, ListingRow } from '../schemas/responses.ts';
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
 */
export function generationListings(db: Kysely<Schema>, g: GenerationRow) {
  if (!g.listings_derived) {
    return db.selectFrom('gen_listings_fixed').select(GEN_LISTING_COLUMNS).where('generation', '=', g.generation);
  }
  return db
    .selectFrom('catalog_listings as c')
    .leftJoin('gen_sellers as s', (join) =>
      join.on('s.generation', '=', g.generation).onRef('s.seller_address', '=', 'c.seller_address'),
    )
    .where('c.snapshot_id', '=', g.catalog_snapshot_id)
    .select([
      sql<number>`${g.generation}::int`.as('generation'),
      'c.listing_id',
      'c.seller_address',
      'c.verifiability',
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
 * The words of a search as the search documents hold them (migrations 0014 and 0017): lowercased and cut at
 * every character that is not a letter or a digit, by the same SQL expression as the documents,
 * so a search and a document are never cut into words two ways. Distinct, in byte order.
 */
async function searchWords(db: Kysely<Schema>, q: string): Promise<string[]> {
  const { rows } = await sql<{ words: string[] }>`
    select tsvector_to_array(to_tsvector('simple'::regconfig, regexp_replace(lower(${q}), '[^[:alnum:]]+', ' ', 'g'))) as words`.execute(
    db,
  );
  return rows[0]?.words ?? [];
}

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
    .where('w.word', '=', word);
  if (p.category !== undefined) q = q.where('l.category', '=', p.category);
  if (p.tier !== undefined) q = q.where('l.tier', '=', p.tier);
  return q
    .orderBy('w.score', 'desc')
    .orderBy('w.listing_id')
    .offset(offset)
    .limit(p.limit + 1)
    .execute();
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
  const words = await searchWords(db, p.q);
  // The per-word tsqueries are constants of the statement: parsed once, not once per row.
  const score = sql.join(
    words.map(
      (w) =>
        sql`4 * (c.search_doc @@ ${lexeme(w, 'A')}::tsquery)::int + 2 * (c.search_doc @@ ${lexeme(w, 'B')}::tsquery)::int + (c.search_doc @@ ${lexeme(w, 'C')}::tsquery)::int`,
    ),
    sql` + `,
  );
  // The words are the catalog snapshot's (catalog_listings.search_doc), the numbers the generation's.
  let q = db
    .selectFrom('catalog_listings as c')
    .innerJoin(generationListings(db, g).as('l'), 'l.listing_id', 'c.listing_id')
    .select(GEN_LISTING_COLUMNS.map((col) => `l.${col}` as const))
    .where('c.snapshot_id', '=', g.catalog_snapshot_id)
    .where(sql<boolean>`c.search_doc @@ ${words.map((w) => lexeme(w)).join(' & ')}::tsquery`);
  if (p.category !== undefined) q = q.where('l.category', '=', p.category);
  if (p.tier !== undefined) q = q.where('l.tier', '=', p.tier);
  const rows =
    words.length === 0
      ? []
      : words.length === 1
        ? await oneWord(db, g, words[0]!, p, offset)
        : await q
            .orderBy(sql`${score}`, 'desc')
            .orderBy('l.listing_id')
            .offset(offset)
            .limit(p.limit + 1)
            .execute();
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

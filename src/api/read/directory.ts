import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { z } from 'zod';
import type { GenSellersTable, Schema } from '../../db/schema.ts';
import { decodeDirectoryCursor, directoryFilterDigest, encodeDirectoryCursor, type DirectorySort } from '../cursor.ts';
import { badParameter } from '../errors.ts';
import type { SellerDirectoryPage } from '../schemas/directory.ts';
import { CLASSES, hasClasses, type EvidenceClass } from './classes.ts';
import { displayNames } from './display-name.ts';
import type { GenerationRow } from './generation.ts';
import { listingSearchSellers } from './search-match.ts';
import { hasOutput } from './operators.ts';
import { matchTerms, type SearchTuning } from './search.ts';

export interface SellerDirectoryParams {
  sort?: DirectorySort | undefined;
  category?: string | undefined;
  evidence_state?: 'verified' | 'insufficient' | 'not_observed' | undefined;
  farm_flag?: number | undefined;
  class?: EvidenceClass | undefined;
  q?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

type Page = z.input<typeof SellerDirectoryPage>;
type Row = Page['sellers'][number];

/**
 * Each order's key, descending, as the order's index holds it (the same expression, so a page is
 * read from the index in order), and the type a cursor's key is compared as. A null external
 * revenue (1.x and 2.x) is -1: after every revenue. Ties are broken by seller_no, the seller's
 * number in address order within its generation (migration 0043: the indexes are (generation,
 * key desc, seller_no)), which orders the generation's sellers as seller_address does.
 */
const KEYS: Record<DirectorySort, { key: RawBuilder<unknown>; type: RawBuilder<unknown> }> = {
  verified_revenue: { key: sql`s.verified_revenue_30d_micro`, type: sql`numeric` },
  external_revenue: { key: sql`coalesce(s.external_revenue_30d_micro, '-1'::numeric)`, type: sql`numeric` },
  payments: { key: sql`s.payments_30d`, type: sql`int4` },
  payers: { key: sql`s.payers_30d`, type: sql`int4` },
};

/** An address or its start: 6 to 40 hex digits, with or without 0x (a q the address search takes). */
const ADDRESS_PREFIX = /^(?:0x)?([0-9a-f]{6,40})$/i;

/**
 * The conditions of the filters on gen_sellers `s` of generation g. `terms`: matchTerms' answer
 * for q (null: q's words find no one).
 */
function filters(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: SellerDirectoryParams,
  terms: string[][] | null,
): RawBuilder<boolean>[] {
  const out: RawBuilder<boolean>[] = [sql`s.generation = ${g.generation}`];
  if (p.category !== undefined) out.push(sql`${p.category} = any(s.categories)`);
  if (p.evidence_state !== undefined) out.push(sql`s.evidence_state = ${p.evidence_state}`);
  if (p.farm_flag !== undefined) out.push(sql`s.farm_flag = ${p.farm_flag}`);
  if (p.class !== undefined) out.push(sql`s.class_payments_30d[${CLASSES.indexOf(p.class) + 1}::int] > 0`);
  if (p.q !== undefined) {
    const found = terms
      ? sql<boolean>`s.seller_address in (${listingSearchSellers(db, g, terms)})`
      : sql<boolean>`false`;
    const prefix = ADDRESS_PREFIX.exec(p.q.trim())?.[1];
    out.push(prefix ? sql`(starts_with(s.seller_address, ${`0x${prefix.toLowerCase()}`}) or ${found})` : found);
  }
  return out;
}

/**
 * The operator group of each given seller (gen_operator_members, sql/method/02b_operator_groups.sql),
 * in one query: a seller in no group, or a generation computed before groups were published, has
 * none (null).
 */
async function operatorGroups(
  db: Kysely<Schema>,
  g: GenerationRow,
  sellers: readonly string[],
): Promise<Map<string, string>> {
  if (sellers.length === 0 || !(await hasOutput(db, g, 'operator_groups'))) return new Map();
  const rows = await db
    .selectFrom('gen_operator_members')
    .select(['seller_address', 'group_id'])
    .where('generation', '=', g.generation)
    .where('seller_address', 'in', sellers)
    .execute();
  return new Map(rows.map((r) => [r.seller_address, r.group_id]));
}

/**
 * A page of the seller directory: every seller of the generation (one row per seller address of
 * a base_usdc listing, verified or not) that passes the filters, in `sort` order (descending,
 * ties by seller_address ascending, a null key last), after the cursor's seller. `total` counts
 * every seller that passes the filters. A page is read from the order's index from the cursor's
 * place on (a keyset: the key of the cursor's seller, then its seller number), never sorted whole; the
 * page and `total` are one statement. Several statements in all (q's words, the cursor's key, the
 * names and groups): run it in one repeatable-read transaction (the endpoint's `reads`).
 */
export async function readSellerDirectory(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: SellerDirectoryParams,
  tuning?: SearchTuning,
): Promise<Page> {
  const sort = p.sort ?? 'verified_revenue';
  const v3 = hasClasses(g);
  if (!v3 && sort === 'external_revenue')
    throw badParameter(
      'sort',
      `external_revenue needs a generation of method 3.0.0 or later; generation ${g.generation} is method ${g.method_version}`,
    );
  if (!v3 && p.class !== undefined)
    throw badParameter(
      'class',
      `generation ${g.generation} is method ${g.method_version}, which has no evidence classes (method 3.0.0 or later)`,
    );
  const digest = directoryFilterDigest(sort, {
    category: p.category,
    evidence_state: p.evidence_state,
    farm_flag: p.farm_flag,
    class: p.class,
    q: p.q,
  });
  const { key, type } = KEYS[sort];
  // (q's words and the catalog words each matches, looked up once for the page and the count)
  const terms = p.q !== undefined ? await matchTerms(db, g, p.q, tuning) : null;
  const where = sql.join(filters(db, g, p, terms), sql` and `);

  /** The rows after the cursor's seller, on a row whose order key is `k` and seller number `n`. */
  let after = (_k: RawBuilder<unknown>, _a: RawBuilder<unknown>) => sql<boolean>`true`;
  if (p.cursor !== undefined) {
    const cursorSeller = decodeDirectoryCursor(p.cursor, sort, digest);
    const at = await db
      .selectFrom('gen_sellers as s')
      .select([sql<string>`${key}::text`.as('k'), 's.seller_no'])
      .where('s.generation', '=', g.generation)
      .where('s.seller_address', '=', cursorSeller)
      .executeTakeFirst();
    if (!at)
      throw badParameter(
        'cursor',
        `names a seller that is not in generation ${g.generation}; continue with the generation of the page that gave it (generation=N), or start again`,
        'invalid_cursor',
      );
    const at_k = sql`${at.k}::${type}`;
    // (key <= k) lets the index scan start at the cursor; the rest skips the ties already served.
    after = (k, n) => sql<boolean>`${k} <= ${at_k} and (${k} < ${at_k} or ${n} > ${at.seller_no})`;
  }

  // One statement for the page and `total`; the total's row comes back alone (its page columns
  // null) when the page is empty. Without q, the page is read from the order's index from the
  // cursor on. With q, the sellers that pass (q's listing match, seconds when nearly every listing
  // holds q's words, joined to the sellers) are taken once, into the CTE `hits` (address and key)
  // that the count and the page both read; the page's rows are then fetched by their address.
  const { rows: read } =
    p.q === undefined
      ? await sql<Selectable<GenSellersTable> & { total: number }>`
    select t.total, p.*
      from (select count(*)::int as total from gen_sellers s where ${where}) t
      left join (select s.*, ${key} as sort_key from gen_sellers s
                  where ${where} and ${after(key, sql`s.seller_no`)}
                  order by ${key} desc, s.seller_no
                  limit ${p.limit + 1}) p on true
     order by p.sort_key desc, p.seller_no`.execute(db)
      : await sql<Selectable<GenSellersTable> & { total: number }>`
    with hits as materialized (select s.seller_address, s.seller_no, ${key} as sort_key from gen_sellers s where ${where})
    select t.total, s.*
      from (select count(*)::int as total from hits) t
      left join (select h.* from hits h
                  where ${after(sql`h.sort_key`, sql`h.seller_no`)}
                  order by h.sort_key desc, h.seller_no
                  limit ${p.limit + 1}) p on true
      left join gen_sellers s on s.generation = ${g.generation} and s.seller_address = p.seller_address
     order by p.sort_key desc, p.seller_no`.execute(db);
  const total = read[0]!.total;
  const rows = read.filter((r) => r.seller_address !== null);

  const shown = rows.slice(0, p.limit);
  const addresses = shown.map((r) => r.seller_address);
  const names = await displayNames(db, g.generation, addresses);
  const groups = await operatorGroups(db, g, addresses);
  return {
    count: shown.length,
    next_cursor: rows.length > p.limit ? encodeDirectoryCursor(sort, digest, shown.at(-1)!.seller_address) : null,
    total,
    generation: g.generation,
    method_version: g.method_version,
    sort,
    sellers: shown.map((r): Row => ({
      seller_address: r.seller_address,
      slug: r.seller_address,
      display_name: names.get(r.seller_address) ?? null,
      tier: r.tier,
      evidence_state: r.evidence_state,
      rank: r.rank,
      verified_revenue_30d_micro: r.verified_revenue_30d_micro,
      external_revenue_30d_micro: v3 ? r.external_revenue_30d_micro : null,
      payments_30d: r.payments_30d,
      payers_30d: r.payers_30d,
      median_payment_30d_micro: r.median_payment_30d_micro,
      farm_flag: r.farm_flag as 0 | 1,
      farm_reasons: r.farm_reasons,
      listing_count: r.listing_count,
      categories: r.categories as Row['categories'],
      classes: v3 ? CLASSES.filter((_, i) => (r.class_payments_30d?.[i] ?? 0) > 0) : null,
      operator_group: groups.get(r.seller_address) ?? null,
    })),
  };
}

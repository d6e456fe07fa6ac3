import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Schema } from '../db/schema.ts';
import type { GenerationRow } from './read/generation.ts';
import { readSellerDirectory } from './read/directory.ts';
import { readDirectory } from './read/listings.ts';
import type { SearchTuning } from './read/search.ts';
import { readMarketDaily } from './read/market.ts';
import { readMarketSummary, readOperator, readOperators } from './read/operators.ts';
import { readPayments } from './read/payments.ts';
import { readSellerPeriods } from './read/periods.ts';
import { readRankings } from './read/rankings.ts';
import { readProfile } from './read/seller.ts';
import { readSellerDaily } from './read/seller-daily.ts';
import {
  DirectoryQuery,
  GenerationQuery,
  MarketQuery,
  OperatorParams,
  OperatorsQuery,
  PaymentsQuery,
  RankingsQuery,
  SellerDirectoryQuery,
  SlugParams,
} from './schemas/query.ts';
import {
  DirectoryPage,
  DirectorySeller,
  ListingRow,
  RankingRow,
  RankingsPage,
  SellerDirectoryPage,
} from './schemas/directory.ts';
import { MarketDaily, SellerDaily, Meta, PaymentsPage, SellerPeriods, SellerProfile } from './schemas/responses.ts';
import { MarketSummary, OperatorGroupDetail, OperatorsPage } from './schemas/groups.ts';
import { badParameter } from './errors.ts';

/**
 * The snapshot endpoints as data: one entry is the route, its parameters, its response schema
 * and its reader. index.ts registers these routes and openapi.ts documents the same entries, so
 * what is served and what is documented cannot drift apart.
 */
export interface Endpoint {
  readonly operationId: string;
  /** OpenAPI form, e.g. /api/v1/sellers/{slug}. */
  readonly path: string;
  readonly summary: string;
  readonly description: string;
  readonly query: z.ZodObject;
  readonly params?: typeof SlugParams | typeof OperatorParams;
  readonly response: z.ZodType;
  /** Component id of the response schema. */
  readonly responseId: string;
  /** Error statuses besides the common 400/404/414/429/500/503. */
  readonly notFound: readonly string[];
  /** Reads the body of one published generation; undefined for /meta. */
  readonly load?: (
    db: Kysely<Schema>,
    g: GenerationRow,
    query: any,
    params: any,
    reading: ReadOptions,
  ) => Promise<unknown>;
  /**
   * How the read stays consistent with a concurrent prune: 'statement' = one SQL statement (an
   * empty result is re-checked against the generation), 'transaction' = several statements in
   * one read-only repeatable-read transaction.
   */
  readonly reads?: 'statement' | 'transaction';
  /** CSV of every row of the generation (`?format=csv` or `Accept: text/csv`): file name, columns, rows read page by page. */
  readonly csv?: {
    readonly filename: (g: GenerationRow) => string;
    readonly columns: readonly string[];
    /** Columns of catalog text, neutralised against formula injection in the CSV (src/api/csv.ts). */
    readonly catalogText: readonly string[];
    readonly rows: (
      db: Kysely<Schema>,
      g: GenerationRow,
      query: any,
      reading: ReadOptions,
    ) => AsyncIterable<Record<string, unknown>>;
  };
}

/** Every row of a paged reader, page after page (CSV). */
async function* allRows<P extends { next_cursor: string | null }>(
  read: (cursor: string | undefined) => Promise<P>,
  rowsOf: (page: P) => Record<string, unknown>[],
) {
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    yield* rowsOf(page);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
}

/** What the API's options tell the readers (ApiOptions). */
export interface ReadOptions {
  /** The tuning of search (ApiOptions.search over DEFAULT_SEARCH_TUNING). */
  readonly search: SearchTuning;
}

export const BASE = '/api/v1';

/** The reader's parameters of a directory request. */
function directoryParams(q: z.output<typeof SellerDirectoryQuery>, limit: number) {
  const { sort, category, evidence_state, farm_flag, class: cls, q: text, cursor } = q;
  return { sort, category, evidence_state, farm_flag, class: cls, q: text, cursor, limit };
}

export const ENDPOINTS: readonly Endpoint[] = [
  {
    operationId: 'getMeta',
    path: `${BASE}/meta`,
    summary: 'Generation, method, constants, sources and freshness',
    description:
      'What the served generation was computed from: as-of block, window, method constants, per-source freshness and digests; cadence and freshness describe the latest published generation.',
    query: GenerationQuery,
    response: Meta,
    responseId: 'Meta',
    notFound: ['generation_not_found'],
  },
  {
    operationId: 'listSellers',
    path: `${BASE}/sellers`,
    summary: 'The directory: one row per listing',
    description:
      'Listings by ascending listing_id, up to 50 per page. Follow next_cursor until it is null; every listing appears exactly once. ' +
      'With q: the listings matching the search, best match first, then by listing_id.',
    query: DirectoryQuery,
    response: DirectoryPage,
    responseId: 'DirectoryPage',
    notFound: ['generation_not_found'],
    load: (db, g, q: z.output<typeof DirectoryQuery>, _params, reading) =>
      readDirectory(
        db,
        g,
        { cursor: q.cursor, category: q.category, tier: q.tier, q: q.q, limit: q.limit ?? 50 },
        reading.search,
      ),
    csv: {
      filename: (g) => `x402-tally-sellers-g${g.generation}.csv`,
      columns: Object.keys(ListingRow.shape),
      catalogText: ['resource_url', 'title', 'network', 'description', 'category'],
      rows: (db, g, q: z.output<typeof DirectoryQuery>, reading) =>
        allRows(
          (cursor) =>
            readDirectory(db, g, { cursor, category: q.category, tier: q.tier, q: q.q, limit: 1000 }, reading.search),
          (p) => p.listings as Record<string, unknown>[],
        ),
    },
  },
  {
    operationId: 'listDirectory',
    path: `${BASE}/directory`,
    summary: 'The seller directory: every seller, sorted and filtered',
    description:
      'Every seller of the generation (one row per seller address of a base_usdc listing, verified or not), by the chosen sort ' +
      '(descending, ties by seller_address ascending), up to 100 per page; total counts the sellers that pass the filters. ' +
      'Follow next_cursor (with the same sort and filters) until it is null: every seller that passes the filters appears exactly once.',
    query: SellerDirectoryQuery,
    response: SellerDirectoryPage,
    responseId: 'SellerDirectoryPage',
    notFound: ['generation_not_found'],
    reads: 'transaction',
    load: (db, g, q: z.output<typeof SellerDirectoryQuery>, _params, reading) =>
      readSellerDirectory(db, g, directoryParams(q, q.limit ?? 50), reading.search),
    csv: {
      filename: (g) => `x402-tally-directory-g${g.generation}.csv`,
      columns: Object.keys(DirectorySeller.shape),
      catalogText: ['display_name', 'categories'],
      rows: (db, g, q: z.output<typeof SellerDirectoryQuery>, reading) =>
        allRows(
          (cursor) => readSellerDirectory(db, g, { ...directoryParams(q, 1000), cursor }, reading.search),
          (p) => p.sellers as Record<string, unknown>[],
        ),
    },
  },
  {
    operationId: 'getRankings',
    path: `${BASE}/rankings`,
    summary: 'Verified sellers ranked by 30-day verified revenue (or external revenue)',
    description:
      'Sellers of tier verified by verified_revenue_30d_micro descending, then seller_address ascending; next_cursor continues after the last rank of the page. ' +
      'With sort=external_revenue (method 3.x generations): by external_revenue_30d_micro descending, ties in the default order, rank being the position in that order.',
    query: RankingsQuery,
    response: RankingsPage,
    responseId: 'RankingsPage',
    notFound: ['generation_not_found'],
    load: (db, g, q: z.output<typeof RankingsQuery>) =>
      readRankings(db, g, { cursor: q.cursor, category: q.category, sort: q.sort, limit: q.limit ?? 100 }),
    csv: {
      filename: (g) => `x402-tally-rankings-g${g.generation}.csv`,
      columns: Object.keys(RankingRow.shape),
      catalogText: ['display_name', 'categories'],
      rows: (db, g, q: z.output<typeof RankingsQuery>) =>
        allRows(
          (cursor) => readRankings(db, g, { cursor, category: q.category, sort: q.sort, limit: 1000 }),
          (p) => p.rankings as Record<string, unknown>[],
        ),
    },
  },
  {
    operationId: 'getSeller',
    path: `${BASE}/sellers/{slug}`,
    summary: 'Seller profile with per-metric provenance',
    description:
      "The seller's metrics, each with the rule, inputs and evidence digest needed to recompute it, and the seller's listings by listing_id.",
    query: GenerationQuery,
    params: SlugParams,
    response: SellerProfile,
    responseId: 'SellerProfile',
    notFound: ['generation_not_found', 'seller_not_found'],
    reads: 'transaction',
    load: (db, g, _q, p: z.output<typeof SlugParams>) => readProfile(db, g, p.slug),
  },
  {
    operationId: 'getSellerPayments',
    path: `${BASE}/sellers/{slug}/payments`,
    summary: "The verified payments behind a seller's numbers (evidence)",
    description: 'Verified payments in the window, newest first by block number then log index, descending.',
    query: PaymentsQuery,
    params: SlugParams,
    response: PaymentsPage,
    responseId: 'PaymentsPage',
    notFound: ['generation_not_found', 'seller_not_found'],
    reads: 'transaction',
    load: (db, g, q: z.output<typeof PaymentsQuery>, p: z.output<typeof SlugParams>) =>
      readPayments(db, g, p.slug, { cursor: q.cursor, limit: q.limit ?? 100 }),
  },
  {
    operationId: 'getSellerPeriods',
    path: `${BASE}/sellers/{slug}/periods`,
    summary: "The period digests behind a seller's evidence digest (method 2.0.0)",
    description:
      'One row per digest period with a verified payment in the window, oldest first; evidence_sha256 is the sha256 of their lines period_start_unix:payments:sha256. Empty under method 1.0.0.',
    query: GenerationQuery,
    params: SlugParams,
    response: SellerPeriods,
    responseId: 'SellerPeriods',
    notFound: ['generation_not_found', 'seller_not_found'],
    reads: 'transaction',
    load: (db, g, _q, p: z.output<typeof SlugParams>) => readSellerPeriods(db, g, p.slug),
  },
  {
    operationId: 'getSellerDaily',
    path: `${BASE}/sellers/{slug}/daily`,
    summary: "The seller's daily series",
    description:
      'One row per UTC day of the window with at least one verified payment, oldest first: payments, revenue_micro, distinct payers. ' +
      'Computed by the method with the generation (docs/METHOD.md, "Daily series"); the first and last days are partial.',
    query: GenerationQuery,
    params: SlugParams,
    response: SellerDaily,
    responseId: 'SellerDaily',
    notFound: ['generation_not_found', 'seller_not_found'],
    reads: 'transaction',
    load: (db, g, _q, p: z.output<typeof SlugParams>) => readSellerDaily(db, g, p.slug),
  },
  {
    operationId: 'getMarketDaily',
    path: `${BASE}/market/daily`,
    summary: 'Daily market aggregate',
    description: 'One row per publishable UTC day, newest first; [] until the first publishable day.',
    query: MarketQuery,
    response: MarketDaily,
    responseId: 'MarketDaily',
    notFound: ['generation_not_found'],
    load: (db, g, q: z.output<typeof MarketQuery>) => {
      if (q.from !== undefined && q.to !== undefined && q.from > q.to)
        throw badParameter('from', 'must not be after to');
      return readMarketDaily(db, g, q);
    },
  },
  {
    operationId: 'getMarketSummary',
    path: `${BASE}/market/summary`,
    summary: 'Market summary: the last 7 days, the 7 before, the last 30, and the change',
    description:
      'Over the publishable UTC days of the generation (those of /market/daily): payments, volume, external volume (3.x), and the distinct payers and sellers paid ' +
      'of each period (distinct over the whole period, not a sum of days), with the change of the last 7 days against the 7 before. ' +
      'Computed by the method with the generation (docs/METHOD.md 2.12.2); computed is false for a generation made before it existed.',
    query: GenerationQuery,
    response: MarketSummary,
    responseId: 'MarketSummary',
    notFound: ['generation_not_found'],
    reads: 'transaction',
    load: (db, g) => readMarketSummary(db, g),
  },
  {
    operationId: 'listOperators',
    path: `${BASE}/operators`,
    summary: 'Operator groups: sellers linked by a shared resource host',
    description:
      'Groups of two or more sellers linked transitively by a shared resource host (the same_operator relation), by verified_revenue_30d_micro descending, then id. ' +
      'Follow next_cursor until it is null. computed is false for a generation made before groups existed (docs/METHOD.md 2.12.1).',
    query: OperatorsQuery,
    response: OperatorsPage,
    responseId: 'OperatorsPage',
    notFound: ['generation_not_found'],
    reads: 'transaction',
    load: (db, g, q: z.output<typeof OperatorsQuery>) =>
      readOperators(db, g, { cursor: q.cursor, limit: q.limit ?? 100 }),
  },
  {
    operationId: 'getOperator',
    path: `${BASE}/operators/{id}`,
    summary: 'One operator group with its members',
    description: "The group's sums and each member's own numbers, by seller_address.",
    query: GenerationQuery,
    params: OperatorParams,
    response: OperatorGroupDetail,
    responseId: 'OperatorGroupDetail',
    notFound: ['generation_not_found', 'operator_not_found'],
    reads: 'transaction',
    load: (db, g, _q, p: z.output<typeof OperatorParams>) => readOperator(db, g, p.id),
  },
];

/** Fastify's form of an OpenAPI path: {slug} -> :slug. */
export function routePath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

const PATTERNS = [
  ...ENDPOINTS.map((e) => e.path),
  `${BASE}/openapi.json`,
  `${BASE}/docs`,
  `${BASE}/generations/{generation}/bundle/{file}`,
  '/llms.txt',
  '/',
  '/web/{file}',
  '/vendor/uplot.esm.js',
  '/vendor/uplot.min.css',
  '/vendor/redoc.standalone.js',
].map((p) => new RegExp(`^${p.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`));

/** Whether a URL path (no query) names a route of the API, whatever the method (405 vs 404). */
export function isKnownPath(pathname: string): boolean {
  return PATTERNS.some((re) => re.test(pathname));
}

/**
 * The path parameter of a route whose text in `pathname` (as sent, percent-encoded) does not
 * decode as UTF-8, if any: the router refuses such a URL before any handler can name it.
 */
export function undecodableParameter(pathname: string): string | undefined {
  for (const re of PATTERNS) {
    for (const [name, raw] of Object.entries(re.exec(pathname)?.groups ?? {})) {
      try {
        decodeURIComponent(raw);
      } catch {
        return name;
      }
    }
  }
  return undefined;
}

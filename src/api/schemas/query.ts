import { z } from 'zod';
import { CATEGORIES } from '../../lib/categories.ts';
import { DIRECTORY_SORTS } from '../cursor.ts';

/**
 * Request parameters. Query objects are strict (an unknown parameter is a 400); every value
 * arrives as text and is given once. The `pipe` output side is what the OpenAPI document shows.
 */

/**
 * Text a Postgres parameter can carry as given: no U+0000 (a `text` value cannot hold it; the
 * statement fails) and no lone UTF-16 surrogate (not encodable as UTF-8: the pg driver and PGlite
 * would send U+FFFD in its place, so the database would answer for another string).
 */
export function isStorableText(s: string): boolean {
  return !/\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}
export const NOT_STORABLE = 'must not contain U+0000 or an unpaired surrogate';

/** Every text parameter: given once, and storable (checked first, so its message wins). */
const text = (what: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : `must be given once, as ${what}`) })
    .refine(isStorableText, NOT_STORABLE);

/** An integer parameter in [min, max], written in decimal without sign or leading zeros. */
function integer(min: number, max: number) {
  const why = `must be an integer from ${min} to ${max}`;
  return text('an integer')
    .regex(/^(0|[1-9][0-9]{0,9})$/, why)
    .transform(Number)
    .pipe(z.int().min(min, why).max(max, why));
}

export const INT4_MAX = 2_147_483_647;

export const generation = integer(1, INT4_MAX)
  .optional()
  .meta({ description: 'pin a retained published generation (default: the latest published)' });
/** A page cursor's shape (what it means is checked by its endpoint, ../cursor.ts), on a string schema. */
export function cursorOf(s: z.ZodString) {
  return s.regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits, as given in next_cursor');
}
export const cursor = cursorOf(text('64 lowercase hex digits'))
  .optional()
  .meta({ description: 'next_cursor of the previous page' });
export const category = z
  .enum(CATEGORIES, {
    error: (issue) => (Array.isArray(issue.input) ? 'must be given once' : `must be one of ${CATEGORIES.join(', ')}`),
  })
  .optional()
  .meta({ description: 'only rows of this category' });
/** The days a `from`/`to` may name: Postgres has no year 0 (`date '0000-01-01'` is an error). */
export const DAY_MIN = '0001-01-01';
export const DAY_MAX = '9999-12-31';
/** A calendar day YYYY-MM-DD from DAY_MIN to DAY_MAX, on a string schema (the API's or the MCP tools'). */
export function dayOf(s: z.ZodString) {
  return s
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
    .pipe(z.iso.date('must be a valid date YYYY-MM-DD'))
    .refine((d) => d >= DAY_MIN, `must be a date from ${DAY_MIN} to ${DAY_MAX}`);
}
const day = dayOf(text('a date'));

/** The longest search accepted, in characters. */
export const SEARCH_MAX_CHARS = 200;

export const format = z
  .enum(['json', 'csv'], {
    error: (issue) => (Array.isArray(issue.input) ? 'must be given once' : 'must be json or csv'),
  })
  .optional()
  .meta({
    description:
      'csv: every row of the generation as CSV (not one page), with a header line; also chosen by Accept: text/csv. ' +
      "A catalog text cell (title, description, resource_url, network, category, display_name, categories) that begins with = + - @ tab or CR gets a leading ' so spreadsheets show it as text; JSON is unchanged. " +
      'An error before the first row is a JSON error; one after it closes the connection without the final chunk (a failed download).',
  });

export const GenerationQuery = z.strictObject({ generation });
export const DirectoryQuery = z.strictObject({
  format,
  cursor,
  category,
  tier: z
    .enum(['verified', 'listed_only'], {
      error: (issue) => (Array.isArray(issue.input) ? 'must be given once' : 'must be one of verified, listed_only'),
    })
    .optional()
    .meta({ description: 'only listings of sellers of this tier' }),
  q: text('text')
    .refine((s) => /[\p{L}\p{N}]/u.test(s), 'must contain at least one letter or digit')
    .refine((s) => [...s].length <= SEARCH_MAX_CHARS, `must be at most ${SEARCH_MAX_CHARS} characters`)
    .optional()
    .meta({
      description:
        'search over title, description and resource URL: the listings that match every word of q (words are cut at anything ' +
        'that is not a letter or a digit; case-insensitive; a word also matches its plural and singular, and a word of 3 ' +
        'letters or more that is no word of the catalog matches the words that begin with it), by descending score (per word ' +
        'of q: 4 if matched in the title, +2 in the description, +1 in the resource URL), then by listing_id. A q of 6 to 40 ' +
        'hex digits, with or without 0x, finds the listings of the sellers whose address starts with it, by seller address, ' +
        'then listing_id. At most 200 characters; no U+0000.',
    }),
  limit: integer(1, 50).optional().meta({ description: 'rows per page, 1..50, default 50' }),
  generation,
});
/** The orders of the ranking (SPEC "Method 3.0.0"). */
export const RANKING_SORTS = ['verified_revenue', 'external_revenue'] as const;
export const sort = z
  .enum(RANKING_SORTS, {
    error: (issue) =>
      Array.isArray(issue.input) ? 'must be given once' : `must be one of ${RANKING_SORTS.join(', ')}`,
  })
  .optional()
  .meta({
    description:
      'verified_revenue (default): by verified_revenue_30d_micro descending, then seller_address. external_revenue (method 3.x ' +
      'generations only; a 400 on older ones): by external_revenue_30d_micro descending, ties in the default order; rank is ' +
      'then the position in that order, and next_cursor continues it (a cursor of one order is a 400 in the other).',
  });

export const RankingsQuery = z.strictObject({
  format,
  sort,
  cursor,
  category: category.meta({ description: 'only sellers with at least one listing in this category' }),
  limit: integer(1, 500).optional().meta({ description: 'rows per page, 1..500, default 100' }),
  generation,
});
/** A choice among fixed values, given once; the message lists them. */
function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, {
    error: (issue) => (Array.isArray(issue.input) ? 'must be given once' : `must be one of ${values.join(', ')}`),
  });
}

/** GET /api/v1/directory: every seller of the generation (seller grain). */
export const SellerDirectoryQuery = z.strictObject({
  format,
  sort: oneOf(DIRECTORY_SORTS)
    .optional()
    .meta({
      description:
        'the order, descending, ties by seller_address ascending: verified_revenue (default: verified_revenue_30d_micro), ' +
        'external_revenue (external_revenue_30d_micro; method 3.x generations only, a 400 on older ones), payments ' +
        '(payments_30d) or payers (payers_30d). A seller without the number (null) comes after all others.',
    }),
  category: category.meta({ description: 'only sellers with at least one listing in this category' }),
  evidence_state: oneOf(['verified', 'insufficient', 'not_observed'])
    .optional()
    .meta({ description: 'only sellers in this evidence state' }),
  farm_flag: oneOf(['0', '1'])
    .transform(Number)
    .optional()
    .meta({ description: '1: only sellers flagged as a possible farm; 0: only sellers not flagged' }),
  class: oneOf(['eip3009', 'permit2_exact', 'permit2_upto', 'batch_settlement'])
    .optional()
    .meta({
      description:
        'only sellers with at least one verified payment of this evidence class in the window (method 3.x generations only; a ' +
        '400 on older ones, which have no classes)',
    }),
  q: text('text')
    .refine((s) => /[\p{L}\p{N}]/u.test(s), 'must contain at least one letter or digit')
    .refine((s) => [...s].length <= SEARCH_MAX_CHARS, `must be at most ${SEARCH_MAX_CHARS} characters`)
    .optional()
    .meta({
      description:
        'search: the sellers with at least one listing that the listing search (q of /api/v1/sellers) finds for q, and, when q ' +
        'is an address or the start of one (6 to 40 hex digits, with or without 0x, any case), the sellers whose address starts ' +
        'with it. The order stays the one of sort. At most 200 characters; no U+0000.',
    }),
  cursor: cursor.meta({
    description:
      'next_cursor of the previous page, with the same sort and filters (another sort or filter set is a 400)',
  }),
  limit: integer(1, 100).optional().meta({ description: 'rows per page, 1..100, default 50' }),
  generation,
});

export const PaymentsQuery = z.strictObject({
  cursor,
  limit: integer(1, 500).optional().meta({ description: 'rows per page, 1..500, default 100' }),
  generation,
});
export const MarketQuery = z.strictObject({
  from: day.optional().meta({ description: `first day, inclusive (YYYY-MM-DD, ${DAY_MIN} to ${DAY_MAX})` }),
  to: day.optional().meta({ description: `last day, inclusive (YYYY-MM-DD, ${DAY_MIN} to ${DAY_MAX})` }),
  generation,
});

export const SlugParams = z.strictObject({
  slug: text('an address')
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a seller address: 0x followed by 40 hex digits')
    .transform((s) => s.toLowerCase())
    .meta({ description: 'the seller address, case-insensitive' }),
});

/** GET /api/v1/operators: a page of the generation's operator groups. */
export const OperatorsQuery = z.strictObject({
  cursor,
  limit: integer(1, 500).optional().meta({ description: 'groups per page, 1..500, default 100' }),
  generation,
});

/** GET /api/v1/operators/{id}: an operator group's id, `op_` + 40 hex digits (case-insensitive). */
export const OperatorParams = z.strictObject({
  id: text('an operator group id')
    .regex(/^op_[0-9a-fA-F]{40}$/, 'must be an operator group id: op_ followed by 40 hex digits')
    .transform((s) => s.toLowerCase())
    .meta({ description: 'the group id: op_ + its lowest member address without 0x, case-insensitive' }),
});

/** GET /api/v1/generations/{generation}/bundle/{file} (../bundle-route.ts; documented in ../openapi.ts). */
export const BundleParams = z.strictObject({
  generation: integer(1, INT4_MAX),
  // Any text: a name that is not a file of the bundle is a 404 naming the files.
  file: text('a file name'),
});

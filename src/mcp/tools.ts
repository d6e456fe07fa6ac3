import { z } from 'zod';
import {
  cursorOf,
  DAY_MAX,
  DAY_MIN,
  dayOf,
  isStorableText,
  NOT_STORABLE,
  RANKING_SORTS,
  SEARCH_MAX_CHARS,
} from '../api/schemas/query.ts';
import { Address, Category, Count, Micro, Window } from '../api/schemas/common.ts';
import { DirectoryPage, RankingsPage } from '../api/schemas/directory.ts';
import { MarketDaily, Meta, PaymentRow, Provenance, SellerProfile } from '../api/schemas/responses.ts';
import { MarketSummary } from '../api/schemas/groups.ts';
import { explain, GLOSSARY } from '../api/glossary.ts';
import { parseJsonLossless } from '../lib/json.ts';
import type { ApiClient } from './client.ts';
import { TallyError } from '../lib/errors.ts';

/**
 * The tools of the MCP server. Each one reads the public API (through an ApiClient) and returns
 * what it answered: the server computes no number of its own. Inputs are zod schemas of JSON
 * values built from the API's own parameter rules; outputs are the API's response schemas.
 */

/** A failure a tool reports to its caller: the API's error code and a message naming the argument. */
export class ToolFailure extends TallyError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const INT4_MAX = 2_147_483_647;
const generation = z
  .int()
  .min(1)
  .max(INT4_MAX)
  .optional()
  .describe(
    'a retained published generation to read (default: the latest published); see generations.retained of /api/v1/meta',
  );
const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a seller address: 0x followed by 40 hex digits')
  .describe('the seller: the address it is paid at, 0x + 40 hex digits, any case');
const category = Category.optional().describe('only this category of the catalog');
const limit = (max: number, fallback: number) =>
  z.int().min(1).max(max).optional().describe(`rows, 1..${max}, default ${fallback}`);
const day = dayOf(z.string());
const cursor = cursorOf(z.string()).optional().describe('next_cursor of the previous result');

export const METRICS = [
  'verified_revenue_30d_micro',
  'median_payment_30d_micro',
  'payments_30d',
  'payers_30d',
  'external_revenue_30d_micro',
  'external_payments_30d',
  'external_payers_30d',
] as const;
type MetricName = (typeof METRICS)[number];

/** In micro-USDC, for an agent: the page's texts (the glossary) speak in USDC. */
const MICRO = ' In micro-USDC (1 USDC = 1,000,000).';

/** What each metric means: the glossary's text (src/api/glossary.ts), the one the web page shows. */
const MEANING: Record<MetricName, string> = {
  verified_revenue_30d_micro: GLOSSARY.verified_revenue.text + MICRO,
  median_payment_30d_micro: GLOSSARY.median_payment.text + MICRO,
  payments_30d: GLOSSARY.payments.text,
  payers_30d: GLOSSARY.payers.text,
  external_revenue_30d_micro: GLOSSARY.external_revenue.text + MICRO,
  external_payments_30d: `Method 3.0.0: the external payments. ${GLOSSARY.payments.text}`,
  external_payers_30d: `Method 3.0.0: distinct payers among the external payments. ${GLOSSARY.payers.text}`,
};

/** The labels of a seller, as get_seller's and top_sellers' descriptions explain them. */
const SELLER_LABELS = ` ${explain('evidence_state')} ${explain('tier')} ${explain('farm_flag')}`;

const SellerDay = z.strictObject({ day: z.iso.date(), payments: Count, revenue_micro: Micro, payers: Count });

/** get_seller's default answer is a card an agent can hold in its context: under 2 KB (test/mcp). */
const CARD_LISTINGS = 3;
/** Catalog text in a card (titles, URLs, a display name) is cut to this many characters, with `…`. */
const CARD_TEXT_CHARS = 100;
const cut = (text: string | null) =>
  text === null || text.length <= CARD_TEXT_CHARS ? text : `${text.slice(0, CARD_TEXT_CHARS - 1)}…`;

const FullProfile = SellerProfile.extend({
  daily: z.array(SellerDay).optional().meta({ description: 'one row per UTC day of the window with payments' }),
});
const SellerCard = z.strictObject({
  generation: SellerProfile.shape.generation,
  method_version: SellerProfile.shape.method_version,
  seller_address: Address,
  display_name: z
    .string()
    .nullable()
    .meta({ description: `the profile's display_name, cut to ${CARD_TEXT_CHARS} characters` }),
  tier: SellerProfile.shape.tier,
  evidence_state: SellerProfile.shape.evidence_state,
  rank: SellerProfile.shape.rank,
  farm_flag: SellerProfile.shape.farm_flag,
  farm_reasons: SellerProfile.shape.farm_reasons,
  values: z
    .strictObject({
      verified_revenue_30d_micro: Micro,
      median_payment_30d_micro: Micro.nullable(),
      payments_30d: Count,
      payers_30d: Count,
      external_revenue_30d_micro: Micro.nullable(),
      external_payments_30d: Count.nullable(),
      external_payers_30d: Count.nullable(),
    })
    .meta({
      description: "the metrics' values (external ones null before method 3.0.0); their provenance is in detail",
    }),
  first_payment_at: SellerProfile.shape.first_payment_at,
  last_payment_at: SellerProfile.shape.last_payment_at,
  listing_count: Count,
  listings: z
    .array(
      z.strictObject({
        resource_url: z.string(),
        title: z.string().nullable(),
        category: Category,
      }),
    )
    .meta({
      description: `its first ${CARD_LISTINGS} listings (the profile's order), text cut to ${CARD_TEXT_CHARS} characters`,
    }),
  profile: FullProfile.optional().meta({
    description:
      'with detail: true, the whole profile: provenance of each metric, by_class, internal, every listing, the daily series',
  }),
});

const Explanation = z.strictObject({
  generation: z.int().positive(),
  method_version: z.string(),
  seller_address: Address,
  metric: z.enum(METRICS),
  meaning: z.string(),
  value: Micro.nullable(),
  evidence_state: SellerProfile.shape.evidence_state,
  tier: SellerProfile.shape.tier,
  provenance: Provenance,
  window: Window,
  sample_payments: z
    .array(PaymentRow)
    .meta({ description: "the seller's newest verified payments of the window (up to 5)" }),
  audit_command: z.string().meta({
    description:
      "the command that recomputes this seller's numbers from the chain: run it in a checkout of x402-tally (after npm install), with RPC_URL set to a Base node",
  }),
});

/** The card of a profile the API served (SellerProfile): values without provenance, a few listings. */
function sellerCard(profile: Record<string, any>): Record<string, unknown> {
  const metrics = profile.metrics as Record<MetricName, { value: unknown } | null>;
  return {
    generation: profile.generation,
    method_version: profile.method_version,
    seller_address: profile.seller_address,
    display_name: cut(profile.display_name),
    tier: profile.tier,
    evidence_state: profile.evidence_state,
    rank: profile.rank,
    farm_flag: profile.farm_flag,
    farm_reasons: profile.farm_reasons,
    values: Object.fromEntries(METRICS.map((m) => [m, metrics[m] === null ? null : metrics[m].value])),
    first_payment_at: profile.first_payment_at,
    last_payment_at: profile.last_payment_at,
    listing_count: profile.listing_count,
    listings: (profile.listings as Record<string, any>[]).slice(0, CARD_LISTINGS).map((l) => ({
      resource_url: cut(l.resource_url),
      title: cut(l.title),
      category: l.category,
    })),
  };
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodObject;
  readonly output: z.ZodObject;
  /** Returns the result as exact JSON values (bigint above 2^53). */
  readonly call: (api: ApiClient, args: any) => Promise<Record<string, unknown>>;
}

/** The tool argument behind each API parameter whose name differs (a 400 names the parameter). */
const ARGUMENT_OF = new Map([
  ['q', 'query'],
  ['tier', 'verified_only'],
  ['slug', 'address'],
]);

/**
 * GETs one API URL; an API error becomes a ToolFailure with the API's code and message, the
 * parameter a 400 names put in the words of the tool's arguments (`q: ...` -> `query: ...`).
 */
async function read(
  api: ApiClient,
  path: string,
  query: Record<string, string | number | undefined> = {},
): Promise<Record<string, any>> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  const answer = await api(`/api/v1${path}${qs ? `?${qs}` : ''}`);
  const body = parseJsonLossless(answer.text) as Record<string, any>;
  if (answer.status !== 200) {
    const error = body?.error ?? { code: 'internal_error', message: `the API answered ${answer.status}` };
    const message = String(error.message);
    const named = answer.status === 400 ? /^(\w+): ([\s\S]*)$/.exec(message) : null;
    const argument = named ? ARGUMENT_OF.get(named[1]!) : undefined;
    throw new ToolFailure(String(error.code), argument ? `${argument}: ${named![2]}` : message);
  }
  return body;
}

export const TOOLS: readonly Tool[] = [
  {
    name: 'search_listings',
    description:
      'Full-text search of the x402 Bazaar listings (title, description, resource URL): listings holding every word of query, best ' +
      "match first. Each row carries its seller's verified 30-day numbers (seller-attributed). Use verified_only to keep sellers " +
      'whose revenue is verified on chain.',
    input: z.strictObject({
      query: z
        .string()
        .refine(isStorableText, NOT_STORABLE)
        // UTF-16 units, not characters as the API counts (q): at most 200 * 9 characters percent-encoded, so
        // the API's URL stays under its 2048 (200 characters of 4 UTF-8 bytes would be a 414 there).
        .max(SEARCH_MAX_CHARS, `must be at most ${SEARCH_MAX_CHARS} characters`)
        .refine((s) => /[\p{L}\p{N}]/u.test(s), 'must contain at least one letter or digit')
        .describe('words to search for; a listing must hold all of them'),
      category,
      verified_only: z.boolean().optional().describe('only listings of sellers of tier verified'),
      limit: limit(50, 50),
      cursor,
      generation,
    }),
    output: DirectoryPage,
    call: (api, a) =>
      read(api, '/sellers', {
        q: a.query,
        category: a.category,
        tier: a.verified_only ? 'verified' : undefined,
        limit: a.limit,
        cursor: a.cursor,
        generation: a.generation,
      }),
  },
  {
    name: 'get_seller',
    description:
      'A seller at a glance: its verified 30-day revenue, median payment, payments and payers (under method 3.0.0 also its external ' +
      'revenue, payments and payers: what buyers other than the seller itself paid), evidence state, tier, farm flags, rank and first ' +
      'listings, in under 2 KB. With detail: true, also the whole profile: the provenance to recompute each number, its figures per ' +
      'evidence class (by_class), its internal payments per reason, every listing, and its daily series when the generation has one.' +
      SELLER_LABELS,
    input: z.strictObject({
      address,
      detail: z
        .boolean()
        .optional()
        .describe(
          'true: add the whole profile (provenance, by_class, internal, every listing, daily series); default false',
        ),
      generation,
    }),
    output: SellerCard,
    call: async (api, a) => {
      const slug = String(a.address).toLowerCase();
      const profile = await read(api, `/sellers/${slug}`, { generation: a.generation });
      const card = sellerCard(profile);
      if (!a.detail) return card;
      // The daily series is read from the same generation as the profile.
      const daily = await read(api, `/sellers/${slug}/daily`, { generation: profile.generation }).catch(
        (error: unknown) => {
          if (error instanceof ToolFailure && error.code === 'not_found') return undefined; // an API without the daily series
          throw error;
        },
      );
      return { ...card, profile: daily ? { ...profile, daily: daily.days } : profile };
    },
  },
  {
    name: 'status',
    description:
      'How current the numbers are: the latest published generation, its method version, as-of block and window, its age and whether ' +
      'it is stale, the cadence of runs and when the next is expected, and the retained generations any tool can be pinned to.',
    input: z.strictObject({}),
    output: Meta.pick({
      generation: true,
      method_version: true,
      generated_at: true,
      as_of: true,
      window: true,
      cadence: true,
      freshness: true,
      generations: true,
    }),
    call: async (api) => {
      const meta = await read(api, '/meta');
      const { generation, method_version, generated_at, as_of, window, cadence, freshness, generations } = meta;
      return { generation, method_version, generated_at, as_of, window, cadence, freshness, generations };
    },
  },
  {
    name: 'top_sellers',
    description:
      'Verified sellers ranked by verified 30-day revenue (descending), optionally within one category; with sort external_revenue ' +
      '(method 3.0.0 generations), by external revenue: what buyers other than the seller itself paid.',
    input: z.strictObject({
      sort: z
        .enum(RANKING_SORTS)
        .optional()
        .describe(
          'verified_revenue (default) or external_revenue (method 3.0.0 generations only): the order, and the rank given; ' +
            'a cursor continues only the order it came from',
        ),
      category,
      limit: limit(500, 100),
      cursor,
      generation,
    }),
    output: RankingsPage,
    call: (api, a) =>
      read(api, '/rankings', {
        sort: a.sort,
        category: a.category,
        limit: a.limit,
        cursor: a.cursor,
        generation: a.generation,
      }),
  },
  {
    name: 'market_daily',
    description:
      'The daily market aggregate of verified x402 payments: volume, payments, payers, sellers paid, median payment; newest day first.',
    input: z.strictObject({
      from: day.optional().describe(`first day, inclusive (YYYY-MM-DD, ${DAY_MIN} to ${DAY_MAX})`),
      to: day.optional().describe(`last day, inclusive (YYYY-MM-DD, ${DAY_MIN} to ${DAY_MAX})`),
      generation,
    }),
    output: MarketDaily,
    call: (api, a) => read(api, '/market/daily', { from: a.from, to: a.to, generation: a.generation }),
  },
  {
    name: 'market_summary',
    description:
      'The market over the last 7 publishable days, the 7 before and the last 30: payments, volume, distinct payers and sellers paid (distinct over each period), and the change of the last 7 days against the 7 before. computed is false for a generation made before the summary existed.',
    input: z.strictObject({ generation }),
    output: MarketSummary,
    call: (api, a) => read(api, '/market/summary', { generation: a.generation }),
  },
  {
    name: 'explain_metric',
    description:
      "One metric of a seller: its value, what it means, its provenance (rule, window, as-of block, evidence digest), the seller's " +
      'newest payments behind it, and the x402-tally audit command that recomputes it from the chain.',
    input: z.strictObject({ address, metric: z.enum(METRICS).describe('the metric to explain'), generation }),
    output: Explanation,
    call: async (api, a) => {
      const slug = String(a.address).toLowerCase();
      const profile = await read(api, `/sellers/${slug}`, { generation: a.generation });
      const payments = await read(api, `/sellers/${slug}/payments`, { limit: 5, generation: profile.generation });
      const metric = profile.metrics[a.metric as MetricName];
      // The external metrics are method 3.0.0's: an older generation has none (null).
      if (metric === null)
        throw new ToolFailure(
          'invalid_parameter',
          `metric: ${a.metric} is not computed by method ${profile.method_version} (generation ${profile.generation}); it needs method 3.0.0 or later`,
        );
      return {
        generation: profile.generation,
        method_version: profile.method_version,
        seller_address: profile.seller_address,
        metric: a.metric,
        meaning: MEANING[a.metric as MetricName],
        value: metric.value,
        evidence_state: profile.evidence_state,
        tier: profile.tier,
        provenance: metric.provenance,
        window: payments.window,
        sample_payments: payments.payments,
        audit_command: `npx x402-tally audit --generation ${profile.generation} --seller ${profile.seller_address}`,
      };
    },
  },
];

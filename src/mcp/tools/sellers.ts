import { z } from 'zod';
import { Address, Category, Count, Micro, Window } from '../../api/schemas/common.ts';
import { PaymentRow, Provenance, SellerProfile } from '../../api/schemas/responses.ts';
import { GLOSSARY } from '../../api/glossary.ts';
import { address, generation, read, SELLER_LABELS, ToolFailure, type Tool } from './common.ts';

/** The tools about one seller: get_seller (its card or whole profile) and explain_metric. */

const METRICS = [
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

export const getSeller: Tool = {
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
};

export const explainMetric: Tool = {
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
};

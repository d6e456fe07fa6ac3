/**
 * What each label a person meets means, in one place: the web page shows these texts on hover
 * and on keyboard focus of a label (served to it as /web/glossary.json, src/api/web.ts), and the
 * MCP tools (src/mcp/tools/*.ts) use the same texts in their descriptions and in explain_metric.
 * The words follow docs/METHOD.md; a text says what a value is, not how the page draws it.
 */
export interface GlossaryEntry {
  /** The label as the page shows it. */
  readonly label: string;
  /** What it means, in one or two sentences. */
  readonly text: string;
}

const entries = {
  verified_revenue: {
    label: 'Revenue',
    text:
      "The sum of the seller's verified payments in the 30-day window, in USDC: Base USDC transfers to the seller's address " +
      'that an x402 settlement made (method 3.0.0: EIP-3009, the Permit2 proxies, batch-settlement claims; before: EIP-3009 only).',
  },
  external_revenue: {
    label: 'External revenue',
    text:
      'Method 3.0.0: the part of the verified revenue paid by external payments, those that are neither seller-funded (the seller ' +
      'had paid the payer in USDC shortly before) nor from the same operator (the payer is a seller on a host of this seller).',
  },
  median_payment: {
    label: 'Median payment',
    text: "The lower median of the values of the seller's verified payments in the window, in USDC; none without payments.",
  },
  payments: {
    label: 'Payments',
    text: 'The number of verified payments in the 30-day window (external payments: those of them that are external).',
  },
  payers: {
    label: 'Payers',
    text: 'The number of distinct payer addresses among those payments: a payer that pays ten times counts once.',
  },
  rank: {
    label: 'Rank',
    text: 'The place among verified sellers by 30-day verified revenue (then by address); sellers that are not verified have none.',
  },
  evidence_state: {
    label: 'Evidence',
    text:
      'How much on-chain evidence the seller has in the window: verified (enough payments from enough distinct payers to rank), ' +
      'insufficient (some payments, too few to rank on), not observed (no verified payment).',
  },
  'evidence_state.verified': {
    label: 'verified',
    text: 'At least the minimum number of payments, from at least the minimum number of distinct payers, in the window.',
  },
  'evidence_state.insufficient': {
    label: 'insufficient',
    text: 'Some verified payments in the window, but fewer than the minimum (or from too few payers): real, too few to rank on.',
  },
  'evidence_state.not_observed': {
    label: 'not observed',
    text: 'No verified payment to this seller in the window: listed in the catalog, revenue not seen on chain.',
  },
  tier: {
    label: 'Tier',
    text: "verified: the seller's evidence state is verified, and it is ranked; listed only: anything else (listed in the catalog).",
  },
  'tier.verified': { label: 'verified', text: "The seller's evidence state is verified: its revenue is ranked." },
  'tier.listed_only': {
    label: 'listed only',
    text: 'Listed in the catalog; its revenue is not verified (too few payments, or none).',
  },
  farm_flag: {
    label: 'Farm flags',
    text:
      'A warning, not a verdict: the seller may be a farm (many listings, revenue mostly from one payer, or mostly paid by ' +
      'itself). Its numbers are still shown; the reasons say which rule fired.',
  },
  'farm_reason.listing_count': {
    label: 'many listings',
    text: 'listing_count>N: the seller has more than N listings in the catalog.',
  },
  'farm_reason.top_payer_share': {
    label: 'one payer',
    text: 'top_payer_share>S: one payer paid more than this share of the revenue (given enough payments).',
  },
  'farm_reason.internal_share': {
    label: 'mostly internal',
    text: 'internal_share>S (method 3.0.0): internal payments (seller-funded or same operator) are more than this share of the revenue.',
  },
  class: {
    label: 'Class',
    text: 'The evidence class of a payment (method 3.0.0): which kind of x402 settlement moved the USDC.',
  },
  'class.eip3009': { label: 'EIP-3009', text: 'A USDC transferWithAuthorization signed by the payer (EIP-3009).' },
  'class.permit2_exact': {
    label: 'Permit2 exact',
    text: 'A settlement through the canonical x402 Permit2 exact proxy.',
  },
  'class.permit2_upto': {
    label: 'Permit2 upto',
    text: 'A settlement through the canonical x402 Permit2 upto proxy: the value charged, which may be below the listed price.',
  },
  'class.batch_settlement': {
    label: 'Batch settlement (claims)',
    text: 'A claim of a batch-settlement payment channel; one claim counts as one payment.',
  },
  'internal.seller_funded': {
    label: 'seller-funded',
    text: 'The payer had been paid USDC by the seller shortly before (within the funding lookback): the seller may pay itself.',
  },
  'internal.same_operator': {
    label: 'same operator',
    text: "The payer is itself a seller of a listing on a host of one of this seller's listings.",
  },
  operator_group: {
    label: 'Operator group',
    text: 'Sellers linked by a shared resource host (transitively): likely one operator with several payment addresses.',
  },
  volume: { label: 'Volume', text: 'The sum of the verified payments of all tracked sellers, in USDC.' },
  external_volume: {
    label: 'External volume',
    text: 'Method 3.0.0: the part of the volume paid by external payments (neither seller-funded nor same operator).',
  },
  sellers_paid: { label: 'Sellers paid', text: 'Tracked sellers with at least one verified payment in the period.' },
  change_7d: {
    label: 'Change',
    text: 'The last 7 days against the 7 days before them, as a percentage; none when the 7 days before had nothing.',
  },
  categories: {
    label: 'Categories',
    text: "The categories of the seller's listings: claims of the catalog or assigned from their words, not verified.",
  },
} as const satisfies Record<string, GlossaryEntry>;

export type GlossaryKey = keyof typeof entries;

/** Every label and its meaning, by key (see the module comment). */
export const GLOSSARY: Readonly<Record<GlossaryKey, GlossaryEntry>> = entries;

/** "Label: text." of a key, for a description that explains a label. */
export function explain(key: GlossaryKey): string {
  const e = GLOSSARY[key];
  return `${e.label}: ${e.text}`;
}

import type { Kysely, Selectable } from 'kysely';
import type { z } from 'zod';
import { GEN_LISTING_COLUMNS, type GenSellersTable, type Schema } from '../../db/schema.ts';
import { sellerNotFound } from '../errors.ts';
import type { Provenance, SellerProfile } from '../schemas/responses.ts';
import { CLASSES, hasClasses, provenanceClasses } from './classes.ts';
import { isoFromUnix, servedWindow, type GenerationRow } from './generation.ts';
import { displayNameOf } from './display-name.ts';
import { generationListings, listingRow } from './listings.ts';
import { operatorGroupOf } from './operators.ts';

/**
 * Stable rule ids, one per served metric (docs/METHOD.md, docs/api.md): method 1.0.0's four, and
 * method 3.0.0's external ones.
 */
export const RULES = {
  verified_revenue_30d_micro: 'revenue.sum_verified_payments',
  median_payment_30d_micro: 'median.lower_median',
  payments_30d: 'payments.count',
  payers_30d: 'payers.count_distinct',
  external_revenue_30d_micro: 'external.revenue.sum_external_payments',
  external_payments_30d: 'external.payments.count',
  external_payers_30d: 'external.payers.count_distinct',
} as const;

/** The seller's gen_sellers row, or a 404 seller_not_found. */
export async function readSeller(
  db: Kysely<Schema>,
  g: GenerationRow,
  address: string,
): Promise<Selectable<GenSellersTable>> {
  const row = await db
    .selectFrom('gen_sellers')
    .selectAll()
    .where('generation', '=', g.generation)
    .where('seller_address', '=', address)
    .executeTakeFirst();
  if (!row) throw sellerNotFound(address);
  return row;
}

/**
 * The chain, contracts and events the generation's payments come from, from its recorded
 * constants: USDC's Transfer + AuthorizationUsed under methods 1.x and 2.x; under 3.0.0 every
 * class, each with its contracts and events (SPEC "Versions side by side").
 */
export function sourceOf(g: GenerationRow): z.input<typeof Provenance>['source'] {
  const c = g.constants as { chain_id: number; usdc_contract: string };
  if (!hasClasses(g)) return { chain_id: c.chain_id, contract: c.usdc_contract, event: 'Transfer+AuthorizationUsed' };
  return {
    chain_id: c.chain_id,
    contract: c.usdc_contract,
    event: 'x402_settlement',
    classes: provenanceClasses(c.usdc_contract),
  };
}

type Seller = Selectable<GenSellersTable>;
type Profile = z.input<typeof SellerProfile>;

/** `by_class` of a 3.0.0 seller: every class, zeros included, from the per-class arrays. */
function byClass(s: Seller): Profile['by_class'] {
  const payments = s.class_payments_30d;
  const revenue = s.class_revenue_30d_micro;
  if (payments === null || revenue === null) return null;
  const figures = (i: number) => ({ payments: payments[i] ?? 0, revenue_micro: BigInt(revenue[i] ?? 0) });
  return {
    eip3009: figures(CLASSES.indexOf('eip3009')),
    permit2_exact: figures(CLASSES.indexOf('permit2_exact')),
    permit2_upto: figures(CLASSES.indexOf('permit2_upto')),
    batch_settlement: figures(CLASSES.indexOf('batch_settlement')),
  };
}

/** `internal` of a 3.0.0 seller: its payments of each internal reason. */
function internalOf(s: Seller): Profile['internal'] {
  if (s.internal_seller_funded_payments_30d === null || s.internal_same_operator_payments_30d === null) return null;
  return {
    seller_funded: {
      payments: s.internal_seller_funded_payments_30d,
      revenue_micro: s.internal_seller_funded_revenue_30d_micro ?? 0n,
      payers: s.internal_seller_funded_payers_30d ?? 0,
    },
    same_operator: {
      payments: s.internal_same_operator_payments_30d,
      revenue_micro: s.internal_same_operator_revenue_30d_micro ?? 0n,
      payers: s.internal_same_operator_payers_30d ?? 0,
    },
  };
}

/** The seller profile: metrics with per-metric provenance, and its listings by listing_id. */
export async function readProfile(
  db: Kysely<Schema>,
  g: GenerationRow,
  address: string,
): Promise<z.input<typeof SellerProfile>> {
  const s = await readSeller(db, g, address);
  const v3 = hasClasses(g);
  const listings = await db
    .selectFrom(generationListings(db, g).as('l'))
    .select(GEN_LISTING_COLUMNS)
    .where('seller_address', '=', address)
    .orderBy('listing_id')
    .execute();
  const provenance = (rule: string): z.input<typeof Provenance> => ({
    rule,
    method_version: g.method_version,
    source: sourceOf(g),
    window: servedWindow(g),
    as_of_block: g.as_of_block,
    inputs: { payments: s.payments_30d, first_block: s.first_block, last_block: s.last_block },
    evidence_sha256: s.evidence_sha256,
    ...(g.method_version === '1.0.0'
      ? {}
      : { evidence_periods: `/api/v1/sellers/${s.seller_address}/periods?generation=${g.generation}` }),
  });
  // A 3.0.0 metric with its provenance; null on an older generation, which has no such rule.
  const external = <T>(value: T | null, rule: string) =>
    v3 && value !== null ? { value, provenance: provenance(rule) } : null;
  return {
    seller_address: s.seller_address,
    slug: s.seller_address,
    display_name: displayNameOf(listings),
    generation: g.generation,
    method_version: g.method_version,
    tier: s.tier,
    evidence_state: s.evidence_state,
    rank: s.rank,
    listing_count: s.listing_count,
    farm_flag: s.farm_flag as 0 | 1,
    farm_reasons: s.farm_reasons,
    metrics: {
      verified_revenue_30d_micro: {
        value: s.verified_revenue_30d_micro,
        provenance: provenance(RULES.verified_revenue_30d_micro),
      },
      median_payment_30d_micro: {
        value: s.median_payment_30d_micro,
        provenance: provenance(RULES.median_payment_30d_micro),
      },
      payments_30d: { value: s.payments_30d, provenance: provenance(RULES.payments_30d) },
      payers_30d: { value: s.payers_30d, provenance: provenance(RULES.payers_30d) },
      external_revenue_30d_micro: external(s.external_revenue_30d_micro, RULES.external_revenue_30d_micro),
      external_payments_30d: external(s.external_payments_30d, RULES.external_payments_30d),
      external_payers_30d: external(s.external_payers_30d, RULES.external_payers_30d),
    },
    by_class: v3 ? byClass(s) : null,
    internal: v3 ? internalOf(s) : null,
    operator_group: await operatorGroupOf(db, g, s.seller_address),
    first_payment_at: s.first_payment_ts === null ? null : isoFromUnix(s.first_payment_ts),
    last_payment_at: s.last_payment_ts === null ? null : isoFromUnix(s.last_payment_ts),
    listings: listings.map(listingRow),
  };
}

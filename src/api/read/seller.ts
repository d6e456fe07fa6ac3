import type { Kysely, Selectable } from 'kysely';
import type { z } from 'zod';
import { GEN_LISTING_COLUMNS, type GenSellersTable, type Schema } from '../../db/schema.ts';
import { sellerNotFound } from '../errors.ts';
import type { Provenance, SellerProfile } from '../schemas/responses.ts';
import { isoFromUnix, windowOf, type GenerationRow } from './generation.ts';
import { displayNameOf } from './display-name.ts';
import { generationListings, listingRow } from './listings.ts';

/** Stable rule ids of method 1.0.0, one per served metric (docs/METHOD.md, docs/api.md). */
export const RULES = {
  verified_revenue_30d_micro: 'revenue.sum_verified_payments',
  median_payment_30d_micro: 'median.lower_median',
  payments_30d: 'payments.count',
  payers_30d: 'payers.count_distinct',
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

/** The chain and contract the generation read, from its recorded constants. */
export function sourceOf(g: GenerationRow): {
  chain_id: number;
  contract: string;
  event: 'Transfer+AuthorizationUsed';
} {
  const c = g.constants as { chain_id: number; usdc_contract: string };
  return { chain_id: c.chain_id, contract: c.usdc_contract, event: 'Transfer+AuthorizationUsed' };
}

/** The seller profile: metrics with per-metric provenance, and its listings by listing_id. */
export async function readProfile(
  db: Kysely<Schema>,
  g: GenerationRow,
  address: string,
): Promise<z.input<typeof SellerProfile>> {
  const s = await readSeller(db, g, address);
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
    window: windowOf(g),
    as_of_block: g.as_of_block,
    inputs: { payments: s.payments_30d, first_block: s.first_block, last_block: s.last_block },
    evidence_sha256: s.evidence_sha256,
    ...(g.method_version === '1.0.0'
      ? {}
      : { evidence_periods: `/api/v1/sellers/${s.seller_address}/periods?generation=${g.generation}` }),
  });
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
    },
    first_payment_at: s.first_payment_ts === null ? null : isoFromUnix(s.first_payment_ts),
    last_payment_at: s.last_payment_ts === null ? null : isoFromUnix(s.last_payment_ts),
    listings: listings.map(listingRow),
  };
}

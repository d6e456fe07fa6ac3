import { z } from 'zod';
import {
  Address,
  Category,
  components,
  Count,
  EvidenceClass,
  Hex64,
  Micro,
  NextCursor,
  Snapshot,
  Window,
} from './common.ts';

/**
 * The bodies that list sellers or listings a page at a time (SPEC section 4, field for field;
 * objects are strict): the listing directory and its search (/api/v1/sellers), the rankings
 * (/api/v1/rankings) and the seller directory (/api/v1/directory). The other bodies are in
 * ./responses.ts (SPEC 4) and ./groups.ts (operator groups, market summary). This module is
 * evaluated before ./responses.ts, which imports it: its components keep their place in the
 * OpenAPI document.
 */

export const ListingRow = z.strictObject({
  listing_id: Hex64,
  seller_address: Address.nullable(),
  verifiability: z.enum(['base_usdc', 'other_rail']),
  resource_url: z.string(),
  title: z.string().nullable(),
  network: z.string(),
  description: z.string().nullable(),
  category: Category,
  category_source: z.enum(['auto', 'seller_asserted']),
  tier: z.enum(['verified', 'listed_only']),
  evidence_state: z.enum(['verified', 'insufficient', 'not_observed']),
  verified_revenue_30d_micro: Micro.nullable(),
  median_payment_30d_micro: Micro.nullable(),
  farm_flag: z.literal([0, 1]).nullable(),
  farm_reasons: z
    .string()
    .nullable()
    .meta({ description: 'a JSON array encoded as a text string, e.g. "[\\"listing_count>50\\"]"' }),
  sibling_listings: Count,
});
components.add(ListingRow, { id: 'ListingRow' });

export const DirectoryPage = z.strictObject({
  count: Count,
  next_cursor: NextCursor,
  note: z.string(),
  ...Snapshot,
  listings: z.array(ListingRow),
});
components.add(DirectoryPage, { id: 'DirectoryPage' });

/** SPEC 4, additions for people: a name to show for a seller, claimed by the catalog. */
export const DisplayName = z
  .string()
  .nullable()
  .meta({
    description:
      "a name for people: the seller's first non-null listing title (in listing_id order), else the host of its first resource URL. " +
      'A claim of the catalog, like title: not verified.',
  });

export const RankingRow = z.strictObject({
  rank: z.int().positive(),
  seller_address: Address,
  slug: Address,
  display_name: DisplayName,
  verified_revenue_30d_micro: Micro,
  median_payment_30d_micro: Micro.nullable(),
  payments_30d: Count,
  payers_30d: Count,
  listing_count: Count,
  categories: z.array(Category),
  farm_flag: z.literal([0, 1]),
  farm_reasons: z.string().nullable(),
  // Method 3.0.0 (null on 1.x and 2.x generations); last, so that CSV columns keep their places.
  external_revenue_30d_micro: Micro.nullable(),
  external_payments_30d: Count.nullable(),
  external_payers_30d: Count.nullable(),
});
components.add(RankingRow, { id: 'RankingRow' });

export const RankingsPage = z.strictObject({
  count: Count,
  next_cursor: NextCursor,
  ...Snapshot,
  window: Window,
  rankings: z.array(RankingRow),
});
components.add(RankingsPage, { id: 'RankingsPage' });

/** One seller of the seller directory (GET /api/v1/directory). */
export const DirectorySeller = z.strictObject({
  seller_address: Address,
  slug: Address,
  display_name: DisplayName,
  tier: z.enum(['verified', 'listed_only']),
  evidence_state: z.enum(['verified', 'insufficient', 'not_observed']),
  rank: z.int().positive().nullable(),
  verified_revenue_30d_micro: Micro,
  // Method 3.0.0 (null on 1.x and 2.x generations).
  external_revenue_30d_micro: Micro.nullable(),
  payments_30d: Count,
  payers_30d: Count,
  median_payment_30d_micro: Micro.nullable(),
  farm_flag: z.literal([0, 1]),
  farm_reasons: z.string().nullable(),
  listing_count: Count,
  categories: z.array(Category),
  classes: z.array(EvidenceClass).nullable(),
  operator_group: z.string().nullable(),
});
components.add(DirectorySeller, { id: 'DirectorySeller' });

export const SellerDirectoryPage = z.strictObject({
  count: Count,
  next_cursor: NextCursor,
  total: Count,
  ...Snapshot,
  sort: z.enum(['verified_revenue', 'external_revenue', 'payments', 'payers']),
  sellers: z.array(DirectorySeller),
});
components.add(SellerDirectoryPage, { id: 'SellerDirectoryPage' });

import type { Category } from '../lib/categories.ts';

export type { Category } from '../lib/categories.ts';

/**
 * One listing: a distinct (resource URL, canonical network, payTo, canonical asset) of an item's
 * accepts (docs/METHOD.md section 1).
 */
export interface Listing {
  /** Lowercase hex sha256 of `resource_url \n canonical_network \n pay_to \n asset`. */
  listing_id: string;
  /** Position of the item in the input, from 0; with accept_index, where the winning accept was. */
  item_index: number;
  accept_index: number;
  /** The item's resource URL, exactly as given (always https). */
  resource_url: string;
  /** The network as the item wrote it ("base", "eip155:8453", ...). */
  network: string;
  /** CAIP-2 form of `network`. */
  canonical_network: string;
  /** payTo, lowercased when it is an EVM address, as given otherwise. */
  pay_to: string;
  /** Canonical asset: lowercase 0x address for EVM (CAIP-19 prefix stripped), as given otherwise. */
  asset: string;
  verifiability: 'base_usdc' | 'other_rail';
  /** Lowercase payTo when base_usdc, else null. */
  seller_address: string | null;
  title: string | null;
  description: string | null;
  category: Category;
  category_source: 'auto' | 'seller_asserted';
}

/** An item (accept_index null) or one accept of an item that could not be read. */
export interface Reject {
  item_index: number;
  accept_index: number | null;
  /** Stable snake_case code (REJECT_REASONS). */
  reason: string;
  /** Human text: which field and why. */
  detail: string;
}

/** An accept that gave the same listing_id as another one and lost the dedupe rule. */
export interface Duplicate {
  listing_id: string;
  item_index: number;
  accept_index: number;
  /** Where the listing that was kept comes from. */
  kept_item_index: number;
  kept_accept_index: number;
}

/** What counts as Base USDC: `eip155:${chainId}` and this contract address. */
export interface CatalogOptions {
  chainId: number;
  usdcAddress: string;
}

/** A catalog as read from one source at one time, normalised into listings. */
export interface Catalog {
  /** URL redacted by redactUrl, or the file's base name. */
  source: string;
  fetchedAt: Date;
  items: unknown[];
  /** Canonical JSON of each item, same order as `items`. */
  itemLines: string[];
  /** Lowercase hex sha256 of the canonical form (each item line followed by "\n"). */
  sha256: string;
  /** Sorted by listing_id ascending. */
  listings: Listing[];
  /** In input order (item, then accept). */
  rejects: Reject[];
  /** Accepts that duplicated a kept listing, in input order; not rejects (they were readable). */
  duplicates: Duplicate[];
}

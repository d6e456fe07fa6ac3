import type { Category } from '../lib/categories.ts';
import { sha256Hex } from './canonical.ts';
import { classify, sellerAssertedCategory } from './classify.ts';
import { canonicalAsset, canonicalNetwork, canonicalPayTo, isEvmAddress } from './networks.ts';
import { AcceptSchema, ItemSchema, describeTypeIssue, type ItemShape } from './schema.ts';
import type { CatalogOptions, Listing, Reject } from './types.ts';

/** Every reason an item or accept can be rejected for (docs/METHOD.md lists them with their checks). */
export const REJECT_REASONS = [
  'wrong_type',
  'version_unsupported',
  'resource_missing',
  'resource_not_url',
  'resource_not_https',
  'last_updated_invalid',
  'accepts_missing',
  'accepts_empty',
  'network_missing',
  'network_unknown',
  'pay_to_missing',
  'pay_to_empty',
  'asset_missing',
  'asset_chain_mismatch',
  'amount_missing',
  'amount_not_decimal',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** A listing read from one accept, with what the dedupe rule needs. */
export interface Candidate {
  listing: Listing;
  /** lastUpdated in unix milliseconds; -Infinity when not given. */
  lastUpdatedMs: number;
  version: number;
}

const DECIMAL = /^[0-9]+$/;

function nonEmpty(...values: ReadonlyArray<string | null | undefined>): string | null {
  for (const v of values) if (typeof v === 'string' && v.trim() !== '') return v.trim();
  return null;
}

/** A unix number is seconds below 10^11 (until the year 5138), milliseconds from there. */
function lastUpdatedMs(value: string | number | null | undefined): number | null {
  if (value === null || value === undefined) return Number.NEGATIVE_INFINITY;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    return Math.abs(value) < 1e11 ? value * 1000 : value;
  }
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

/**
 * Reads one discovery item: its listing candidates (one per readable accept) and its rejects (the
 * whole item with accept_index null, or single accepts). Checks run in a fixed order and the
 * first failing one gives the reason, so each item or accept has at most one reject. Pure.
 */
export function normaliseItem(
  raw: unknown,
  itemIndex: number,
  options: CatalogOptions,
): { candidates: Candidate[]; rejects: Reject[] } {
  const rejectItem = (reason: RejectReason, detail: string) => ({
    candidates: [],
    rejects: [{ item_index: itemIndex, accept_index: null, reason, detail }],
  });
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return rejectItem('wrong_type', `item: expected an object, got ${describeValue(raw)}`);
  }
  const parsed = ItemSchema.safeParse(raw);
  if (!parsed.success) return rejectItem('wrong_type', describeTypeIssue(parsed.error, 'item'));
  const item = parsed.data;

  const version = item.x402Version;
  if (version !== 1 && version !== 2) {
    return rejectItem('version_unsupported', `x402Version: expected 1 or 2, got ${describeValue(version ?? null)}`);
  }
  const resourceUrl = typeof item.resource === 'string' ? item.resource : item.resource?.url;
  if (resourceUrl === null || resourceUrl === undefined || resourceUrl.trim() === '') {
    return rejectItem('resource_missing', 'resource: no URL given');
  }
  let protocol: string;
  try {
    protocol = new URL(resourceUrl).protocol;
  } catch {
    return rejectItem('resource_not_url', `resource: ${describeValue(resourceUrl)} is not a URL`);
  }
  if (protocol !== 'https:') {
    return rejectItem('resource_not_https', `resource: ${describeValue(resourceUrl)} is not https`);
  }
  const updatedMs = lastUpdatedMs(item.lastUpdated);
  if (updatedMs === null) {
    return rejectItem('last_updated_invalid', `lastUpdated: ${describeValue(item.lastUpdated)} is not a date`);
  }
  if (item.accepts === null || item.accepts === undefined) return rejectItem('accepts_missing', 'accepts: not given');
  if (item.accepts.length === 0) return rejectItem('accepts_empty', 'accepts: empty list');

  const title = nonEmpty(
    item.serviceName,
    item.metadata?.title,
    item.metadata?.name,
    item.extensions?.bazaar?.info?.title,
  );
  const asserted = sellerAssertedCategory([
    item.metadata?.category,
    item.extensions?.bazaar?.info?.category,
    ...(item.tags ?? []),
  ]);

  const candidates: Candidate[] = [];
  const rejects: Reject[] = [];
  item.accepts.forEach((rawAccept, acceptIndex) => {
    const result = normaliseAccept(rawAccept, item, { resourceUrl, title, asserted, version }, options);
    if ('reason' in result) {
      rejects.push({ item_index: itemIndex, accept_index: acceptIndex, reason: result.reason, detail: result.detail });
    } else {
      candidates.push({
        listing: { ...result, item_index: itemIndex, accept_index: acceptIndex },
        lastUpdatedMs: updatedMs,
        version,
      });
    }
  });
  return { candidates, rejects };
}

type AcceptResult = Omit<Listing, 'item_index' | 'accept_index'> | { reason: RejectReason; detail: string };

function normaliseAccept(
  raw: unknown,
  item: ItemShape,
  context: { resourceUrl: string; title: string | null; asserted: Category | null; version: 1 | 2 },
  options: CatalogOptions,
): AcceptResult {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { reason: 'wrong_type', detail: `accept: expected an object, got ${describeValue(raw)}` };
  }
  const parsed = AcceptSchema.safeParse(raw);
  if (!parsed.success) return { reason: 'wrong_type', detail: describeTypeIssue(parsed.error, 'accept') };
  const accept = parsed.data;

  const network = accept.network;
  if (network === null || network === undefined || network.trim() === '') {
    return { reason: 'network_missing', detail: 'network: not given' };
  }
  const canonicalNet = canonicalNetwork(network);
  if (canonicalNet === null) {
    return {
      reason: 'network_unknown',
      detail: `network: ${describeValue(network)} is neither an x402 v1 name nor CAIP-2`,
    };
  }
  if (accept.payTo === null || accept.payTo === undefined)
    return { reason: 'pay_to_missing', detail: 'payTo: not given' };
  if (accept.payTo.trim() === '') return { reason: 'pay_to_empty', detail: 'payTo: empty string' };
  if (accept.asset === null || accept.asset === undefined || accept.asset.trim() === '') {
    return { reason: 'asset_missing', detail: 'asset: not given' };
  }
  const asset = canonicalAsset(accept.asset, canonicalNet);
  if (!asset.ok) return { reason: 'asset_chain_mismatch', detail: asset.detail };

  // v2 calls it amount, v1 maxAmountRequired; the item's own version decides which is read.
  const amountField = context.version === 2 ? 'amount' : 'maxAmountRequired';
  const amount = accept[amountField];
  if (amount === null || amount === undefined) return { reason: 'amount_missing', detail: `${amountField}: not given` };
  if (typeof amount !== 'string' || !DECIMAL.test(amount)) {
    return {
      reason: 'amount_not_decimal',
      detail: `${amountField}: ${describeValue(amount)} is not a string of decimal digits`,
    };
  }

  const payTo = canonicalPayTo(accept.payTo);
  const baseUsdc =
    canonicalNet === `eip155:${options.chainId}` &&
    asset.asset === options.usdcAddress.toLowerCase() &&
    isEvmAddress(accept.payTo);
  const description = nonEmpty(
    item.description,
    accept.description,
    typeof item.resource === 'object' ? item.resource?.description : null,
    item.metadata?.description,
  );
  return {
    listing_id: sha256Hex(`${context.resourceUrl}\n${canonicalNet}\n${payTo}\n${asset.asset}`),
    resource_url: context.resourceUrl,
    network,
    canonical_network: canonicalNet,
    pay_to: payTo,
    asset: asset.asset,
    verifiability: baseUsdc ? 'base_usdc' : 'other_rail',
    seller_address: baseUsdc ? payTo : null,
    title: context.title,
    description,
    category: context.asserted ?? classify(context.title, description, context.resourceUrl),
    category_source: context.asserted ? 'seller_asserted' : 'auto',
  };
}

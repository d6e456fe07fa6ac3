import { canonicalJson, catalogSha256 } from './canonical.ts';
import { normaliseItem, type Candidate } from './normalise.ts';
import type { Catalog, CatalogOptions, Duplicate, Listing, Reject } from './types.ts';

/** Whether candidate `a` wins over `b` for one listing_id: later lastUpdated, then higher version, then earlier input. */
function wins(a: Candidate, b: Candidate): boolean {
  if (a.lastUpdatedMs !== b.lastUpdatedMs) return a.lastUpdatedMs > b.lastUpdatedMs;
  if (a.version !== b.version) return a.version > b.version;
  const ai = a.listing.item_index;
  const bi = b.listing.item_index;
  return ai !== bi ? ai < bi : a.listing.accept_index < b.listing.accept_index;
}

/**
 * Normalises a catalog's items into listings (sorted by listing_id), rejects and duplicates, and
 * computes its canonical form and sha256. Pure and deterministic: the same items give the same
 * catalog, whatever the source. Used by `run` on a fresh read and by `audit` on a bundle's items.
 */
export function buildCatalog(
  items: unknown[],
  meta: { source: string; fetchedAt: Date },
  options: CatalogOptions,
): Catalog {
  const itemLines = items.map((item) => canonicalJson(item));
  const rejects: Reject[] = [];
  const byId = new Map<string, Candidate[]>();
  items.forEach((item, index) => {
    const result = normaliseItem(item, index, options);
    rejects.push(...result.rejects);
    for (const candidate of result.candidates) {
      const group = byId.get(candidate.listing.listing_id);
      if (group) group.push(candidate);
      else byId.set(candidate.listing.listing_id, [candidate]);
    }
  });

  const listings: Listing[] = [];
  const duplicates: Duplicate[] = [];
  for (const [listingId, group] of byId) {
    let winner = group[0]!;
    for (const candidate of group.slice(1)) if (wins(candidate, winner)) winner = candidate;
    listings.push(winner.listing);
    for (const candidate of group) {
      if (candidate === winner) continue;
      duplicates.push({
        listing_id: listingId,
        item_index: candidate.listing.item_index,
        accept_index: candidate.listing.accept_index,
        kept_item_index: winner.listing.item_index,
        kept_accept_index: winner.listing.accept_index,
      });
    }
  }
  // Plain code-unit comparison: listing_id is lowercase hex, so this is also byte order.
  listings.sort((a, b) => (a.listing_id < b.listing_id ? -1 : a.listing_id > b.listing_id ? 1 : 0));
  duplicates.sort((a, b) => a.item_index - b.item_index || a.accept_index - b.accept_index);

  return {
    source: meta.source,
    fetchedAt: meta.fetchedAt,
    items,
    itemLines,
    sha256: catalogSha256(itemLines),
    listings,
    rejects,
    duplicates,
  };
}

/** Rejects counted per reason, reasons in ascending order. */
export function countRejects(rejects: readonly Reject[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of [...rejects].sort((a, b) => (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0))) {
    counts[r.reason] = (counts[r.reason] ?? 0) + 1;
  }
  return counts;
}

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BASE_CHAIN_ID, BASE_USDC } from '../config/index.ts';
import { projectRoot } from '../lib/paths.ts';
import { buildCatalog, countRejects } from './build.ts';

const CRAWL = path.join(projectRoot, 'fixtures/catalog/bazaar-catalog-2025-12-31.json');
const items = (JSON.parse(readFileSync(CRAWL, 'utf8')) as { resources: unknown[] }).resources;
const catalog = buildCatalog(
  items,
  { source: 'bazaar-catalog-2025-12-31.json', fetchedAt: new Date(0) },
  {
    chainId: BASE_CHAIN_ID,
    usdcAddress: BASE_USDC,
  },
);

/*
 * Expected numbers come from fixtures/catalog/derive_counts.py, a separate Python script written
 * from SPEC section 1, not from this code. Its logic: an item whose resource URL scheme is not
 * https is one reject (40 such items, whatever their accepts hold); in the other items each
 * accept with an empty payTo is one reject (3; they are checked before the amount, so the two
 * with also an empty maxAmountRequired count once, as pay_to_empty). Every other accept maps to
 * the key (url, CAIP-2 network, payTo lowercased if EVM, asset with the `eip155:8453/erc20:`
 * prefix stripped and lowercased if EVM); 1,365 readable accepts give 1,363 distinct keys, so
 * 2 duplicates. A key is base_usdc when the network is eip155:8453, the asset is Base USDC and
 * payTo is a 0x address: 964 keys over 428 distinct payTo; the largest seller has 47, so none
 * has more than 50. The sha256 is Python's json.dumps(sort_keys, no spaces) per line.
 */
describe('real crawl 2025-12-31', () => {
  it('default: listings, base_usdc listings and distinct sellers', () => {
    expect(catalog.itemLines).toHaveLength(1400);
    expect(catalog.listings).toHaveLength(1363);
    const base = catalog.listings.filter((l) => l.verifiability === 'base_usdc');
    expect(base).toHaveLength(964);
    expect(catalog.listings.length - base.length).toBe(399);
    expect(new Set(base.map((l) => l.seller_address)).size).toBe(428);
  });

  it('behavior: rejects counted by reason, each one an item or accept the script found', () => {
    expect(countRejects(catalog.rejects)).toEqual({ pay_to_empty: 3, resource_not_https: 40 });
    // The three empty payTo accepts, found by grepping the crawl for "payTo": "".
    expect(
      catalog.rejects.filter((r) => r.reason === 'pay_to_empty').map((r) => [r.item_index, r.accept_index]),
    ).toEqual([
      [603, 0],
      [1394, 0],
      [1395, 0],
    ]);
    expect(catalog.rejects.filter((r) => r.reason === 'resource_not_https').every((r) => r.accept_index === null)).toBe(
      true,
    );
  });

  it('behavior: dedupes keep the accept with the latest lastUpdated', () => {
    // Items 1162 and 1384 repeat the resource and payTo of 582 and 583 with an older lastUpdated
    // (2025-12-02T04:47:43Z < 04:48:57Z; 2025-11-06 < 2025-12-02).
    expect(catalog.duplicates.map((d) => [d.item_index, d.kept_item_index])).toEqual([
      [1162, 582],
      [1384, 583],
    ]);
  });

  it('behavior: no seller has more than 50 listings', () => {
    const perSeller = new Map<string, number>();
    for (const l of catalog.listings)
      if (l.seller_address) perSeller.set(l.seller_address, (perSeller.get(l.seller_address) ?? 0) + 1);
    expect([...perSeller.values()].filter((n) => n > 50)).toHaveLength(0);
    expect(Math.max(...perSeller.values())).toBe(47);
  });

  it('behavior: the sha256 of the canonical form matches the one computed by Python', () => {
    expect(catalog.sha256).toBe('a0f32583c572e574974a6da803e0e2d12c9006210af676ff6cd5dc0ae6b8c852');
  });

  it('behavior: the crawl names no category itself, so every category is auto', () => {
    // Its items have no serviceName, tags or extensions, and metadata is always {}.
    expect(catalog.listings.every((l) => l.category_source === 'auto' && l.title === null)).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { BASE_CHAIN_ID, BASE_USDC } from '../config/index.ts';
import { buildCatalog } from './build.ts';
import type { Catalog } from './types.ts';

const OPTIONS = { chainId: BASE_CHAIN_ID, usdcAddress: BASE_USDC };
const USDC_CHECKSUM = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const PAY = '0x3D054A66d0c2A3dB1e13eB5eA2e29893ABA5E5Eb';
const SOL_PAY = 'tD6EUn2xtc5xjyS9L96cCTYxfNbPqrH4trmrQSsNjkF';
const SOL_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const URL_A = 'https://api.example.com/v1/quote';

function build(items: unknown[]): Catalog {
  return buildCatalog(items, { source: 'test', fetchedAt: new Date(0) }, OPTIONS);
}
function v1(resource: string, accept: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    x402Version: 1,
    type: 'http',
    resource,
    lastUpdated: '2025-12-01T00:00:00.000Z',
    accepts: [
      {
        scheme: 'exact',
        network: 'base',
        maxAmountRequired: '10000',
        resource,
        payTo: PAY,
        asset: USDC_CHECKSUM,
        extra: { name: 'USD Coin', version: '2' },
        ...accept,
      },
    ],
    ...extra,
  };
}
function v2(resource: unknown, accept: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    x402Version: 2,
    type: 'http',
    resource,
    lastUpdated: '2025-12-01T00:00:00.000Z',
    accepts: [
      { scheme: 'exact', network: 'eip155:8453', amount: '10000', payTo: PAY, asset: USDC_CHECKSUM, ...accept },
    ],
    ...extra,
  };
}

describe('buildCatalog', () => {
  it('default: a v1 base USDC accept gives one base_usdc listing with the contract listing_id', () => {
    const { listings, rejects } = build([v1(URL_A, { description: 'Price quote' })]);
    expect(rejects).toEqual([]);
    // printf 'https://api.example.com/v1/quote\neip155:8453\n0x3d05...e5eb\n0x8335...2913' | sha256sum
    expect(listings).toEqual([
      {
        listing_id: 'fa4c5f912e1befae0ecb47e466745f01f07eeab5ad4a494bfe74870d983f5dfc',
        item_index: 0,
        accept_index: 0,
        resource_url: URL_A,
        network: 'base',
        canonical_network: 'eip155:8453',
        pay_to: PAY.toLowerCase(),
        asset: BASE_USDC,
        verifiability: 'base_usdc',
        seller_address: PAY.toLowerCase(),
        title: null,
        description: 'Price quote',
        category: 'data-access',
        category_source: 'auto',
      },
    ]);
  });

  it('behavior: v1 `base` and v2 `eip155:8453` of one resource and payTo give one listing', () => {
    const old = v1(URL_A, {}, { lastUpdated: '2025-11-01T00:00:00Z' });
    const newer = v2(URL_A, {}, { lastUpdated: '2025-12-01T00:00:00Z' });
    const a = build([newer, old]);
    expect(a.listings).toHaveLength(1);
    expect(a.listings[0]!.network).toBe('eip155:8453'); // the later lastUpdated wins, wherever it is
    expect(a.duplicates).toEqual([
      {
        listing_id: a.listings[0]!.listing_id,
        item_index: 1,
        accept_index: 0,
        kept_item_index: 0,
        kept_accept_index: 0,
      },
    ]);
    // Same lastUpdated: the higher x402Version wins even when it comes second.
    const b = build([v1(URL_A, {}), v2(URL_A, {})]);
    expect(b.listings.map((l) => [l.network, l.item_index])).toEqual([['eip155:8453', 1]]);
    // Same lastUpdated and version: the first in input order wins.
    const c = build([v1(URL_A, { description: 'first' }), v1(URL_A, { description: 'second' })]);
    expect(c.listings.map((l) => l.description)).toEqual(['first']);
  });

  it('behavior: a CAIP-19 asset is the same asset as its bare address', () => {
    const { listings } = build([v1(URL_A, { asset: `eip155:8453/erc20:${USDC_CHECKSUM}` })]);
    expect(listings[0]).toMatchObject({
      asset: BASE_USDC,
      verifiability: 'base_usdc',
      listing_id: 'fa4c5f912e1befae0ecb47e466745f01f07eeab5ad4a494bfe74870d983f5dfc',
    });
  });

  it('behavior: a CAIP-19 asset of another chain than the accept is rejected', () => {
    const { listings, rejects } = build([v1(URL_A, { asset: `eip155:1/erc20:${USDC_CHECKSUM}` })]);
    expect(listings).toEqual([]);
    expect(rejects.map((r) => r.reason)).toEqual(['asset_chain_mismatch']);
  });

  it('behavior: a checksummed and a lowercase payTo give the same seller', () => {
    const { listings } = build([v1(URL_A, {}), v1('https://api.example.com/v1/other', { payTo: PAY.toLowerCase() })]);
    expect(listings.map((l) => l.seller_address)).toEqual([PAY.toLowerCase(), PAY.toLowerCase()]);
    // And on the same resource they are one listing.
    expect(build([v1(URL_A, {}), v1(URL_A, { payTo: PAY.toLowerCase() })]).listings).toHaveLength(1);
  });

  it('behavior: base-sepolia, Solana and a non-USDC asset on Base are other_rail with a null seller', () => {
    const { listings, rejects } = build([
      v1('https://a.example.com/sepolia', { network: 'base-sepolia', asset: SEPOLIA_USDC }),
      v1('https://a.example.com/sol', { network: 'solana', payTo: SOL_PAY, asset: SOL_USDC }),
      v2('https://a.example.com/sol2', {
        network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
        payTo: SOL_PAY,
        asset: SOL_USDC,
      }),
      v1('https://a.example.com/weth', { asset: '0x4200000000000000000000000000000000000006' }),
    ]);
    expect(rejects).toEqual([]);
    const byUrl = Object.fromEntries(listings.map((l) => [l.resource_url, l]));
    expect(byUrl['https://a.example.com/sepolia']).toMatchObject({
      canonical_network: 'eip155:84532',
      asset: SEPOLIA_USDC.toLowerCase(),
      verifiability: 'other_rail',
      seller_address: null,
    });
    expect(byUrl['https://a.example.com/sol']).toMatchObject({
      canonical_network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      pay_to: SOL_PAY,
      asset: SOL_USDC,
      verifiability: 'other_rail',
      seller_address: null,
    });
    expect(byUrl['https://a.example.com/sol2']).toMatchObject({
      network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      verifiability: 'other_rail',
      seller_address: null,
    });
    expect(byUrl['https://a.example.com/weth']).toMatchObject({
      canonical_network: 'eip155:8453',
      verifiability: 'other_rail',
      seller_address: null,
    });
  });

  it('behavior: a `:name` placeholder URL is kept as given, listing_id over the raw text', () => {
    const url = 'https://api.example.com/users/:id/profile';
    const { listings } = build([v1(url, { network: 'solana', payTo: SOL_PAY, asset: SOL_USDC })]);
    expect(listings[0]!.resource_url).toBe(url);
    // printf 'https://api.example.com/users/:id/profile\nsolana:5eykt...\ntD6E...\nEPjF...' | sha256sum
    expect(listings[0]!.listing_id).toBe('d0d0e60fe32d24add0b1787532f7ffe60cd9c3584c35ac427fef0264aff75a06');
  });

  it('behavior: the v2 resource object gives the URL and the description', () => {
    const { listings } = build([v2({ url: URL_A, description: 'from resource', mimeType: 'application/json' }, {})]);
    expect(listings[0]).toMatchObject({ resource_url: URL_A, description: 'from resource' });
  });

  it('error: empty payTo, non-https URL and a wrong-typed field are rejected with distinct reasons', () => {
    const { listings, rejects } = build([
      v1('https://a.example.com/empty', { payTo: '' }),
      v1('http://a.example.com/plain', {}),
      v1('https://a.example.com/typed', { payTo: 12345 }),
      v1('https://a.example.com/ok', {}),
    ]);
    expect(rejects.map((r) => [r.item_index, r.accept_index, r.reason])).toEqual([
      [0, 0, 'pay_to_empty'],
      [1, null, 'resource_not_https'],
      [2, 0, 'wrong_type'],
    ]);
    expect(rejects[2]!.detail).toContain('accept.payTo');
    // The rejects stop nothing: the good item is still a listing.
    expect(listings.map((l) => l.resource_url)).toEqual(['https://a.example.com/ok']);
  });

  it('error: every other unreadable item or accept is kept with its own reason', () => {
    const cases: Array<[unknown, string]> = [
      ['not an item', 'wrong_type'],
      [{ ...v1(URL_A, {}), x402Version: 3 }, 'version_unsupported'],
      [{ ...v1(URL_A, {}), resource: undefined }, 'resource_missing'],
      [{ ...v1(URL_A, {}), resource: 'not a url' }, 'resource_not_url'],
      [{ ...v1(URL_A, {}), lastUpdated: 'yesterday' }, 'last_updated_invalid'],
      [{ ...v1(URL_A, {}), accepts: undefined }, 'accepts_missing'],
      [{ ...v1(URL_A, {}), accepts: [] }, 'accepts_empty'],
      [{ ...v1(URL_A, {}), tags: 'inference' }, 'wrong_type'],
      [v1(URL_A, { network: undefined }), 'network_missing'],
      [v1(URL_A, { network: 'Base Mainnet' }), 'network_unknown'],
      [v1(URL_A, { payTo: undefined }), 'pay_to_missing'],
      [v1(URL_A, { asset: '' }), 'asset_missing'],
      [v1(URL_A, { maxAmountRequired: undefined }), 'amount_missing'],
      [v1(URL_A, { maxAmountRequired: '0.01' }), 'amount_not_decimal'],
      [v1(URL_A, { maxAmountRequired: '' }), 'amount_not_decimal'],
      [v1(URL_A, { maxAmountRequired: 10000 }), 'amount_not_decimal'],
      [v2(URL_A, { amount: '-5' }), 'amount_not_decimal'],
    ];
    const { listings, rejects } = build(cases.map(([item]) => item));
    expect(listings).toEqual([]);
    expect(rejects.map((r) => [r.item_index, r.reason])).toEqual(cases.map(([, reason], i) => [i, reason]));
    expect(rejects.every((r) => r.detail.length > 0)).toBe(true);
  });

  it('behavior: zero and very large amounts are readable', () => {
    const { listings, rejects } = build([
      v1(URL_A, { maxAmountRequired: '0' }),
      v1('https://a.example.com/big', {
        maxAmountRequired: '115792089237316195423570985008687907853269984665640564039457584007913129639935',
      }),
    ]);
    expect([listings.length, rejects.length]).toEqual([2, 0]);
  });

  it('behavior: title, description and category follow the contract precedence', () => {
    const item = v2(
      URL_A,
      { description: 'accept text' },
      {
        serviceName: '  ',
        metadata: { title: 'Meta title', description: 'meta text', category: 'Not-A-Category' },
        extensions: { bazaar: { info: { title: 'Bazaar title', category: 'x' } } },
        tags: ['fast', ' Search-Retrieval ', 'inference'],
      },
    );
    const [listing] = build([item]).listings;
    // serviceName is blank, so metadata.title; the item has no description, so the accept's;
    // the first candidate naming one of the 11 is the second tag.
    expect(listing).toMatchObject({
      title: 'Meta title',
      description: 'accept text',
      category: 'search-retrieval',
      category_source: 'seller_asserted',
    });
    const [plain] = build([v1(URL_A, { description: 'Generate an image from a prompt' })]).listings;
    expect(plain).toMatchObject({ title: null, category: 'media-generation', category_source: 'auto' });
  });

  it('args: USDC_ADDRESS and CHAIN_ID decide what counts as base_usdc', () => {
    const local = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
    const items = [v2(URL_A, { network: 'eip155:31337', asset: local })];
    const catalog = buildCatalog(
      items,
      { source: 't', fetchedAt: new Date(0) },
      { chainId: 31337, usdcAddress: local },
    );
    expect(catalog.listings[0]).toMatchObject({ verifiability: 'base_usdc', seller_address: PAY.toLowerCase() });
    expect(build(items).listings[0]).toMatchObject({ verifiability: 'other_rail', seller_address: null });
  });

  it('behavior: an EVM-network payTo that is not an address is other_rail, not rejected', () => {
    const { listings } = build([v1(URL_A, { payTo: '0x1234' })]);
    expect(listings[0]).toMatchObject({ pay_to: '0x1234', verifiability: 'other_rail', seller_address: null });
  });

  it('behavior: listings are sorted by listing_id and lastUpdated may be a unix number', () => {
    const items = ['a', 'b', 'c', 'd'].map((p, i) =>
      v1(`https://a.example.com/${p}`, {}, { lastUpdated: 1767139200 + i }),
    );
    const ids = build(items).listings.map((l) => l.listing_id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toHaveLength(4);
  });
});

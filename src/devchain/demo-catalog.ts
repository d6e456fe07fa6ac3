import type { Address } from 'viem';
import { x402DemoCatalogItems } from './x402-economy.ts';

/** The payTo of the demo's synthetic farm: no real seller has this address. */
export const DEMO_FARM_ADDRESS: Address = '0xfa44fa44fa44fa44fa44fa44fa44fa44fa44fa44';
/** One more than the method's `farm_listing_threshold` (50), plus a margin. */
export const DEMO_FARM_LISTINGS = 55;

/**
 * The demo's catalog: the real crawl's items, then DEMO_FARM_LISTINGS synthetic x402 v2 items that
 * all pay DEMO_FARM_ADDRESS in Base USDC, then the synthetic listings of x402-economy.ts's sellers
 * (paid through Permit2 proxies and channels, and the internal-payment scenarios). The real crawl (2025-12-31) has no payTo with more than
 * 50 listings (the largest has 47), so without them the demo could not show the
 * `listing_count>50` farm flag. Their URLs are on the reserved `.invalid` domain and their
 * descriptions say they are synthetic. Pure and deterministic.
 */
export function demoCatalogItems(realItems: readonly unknown[]): unknown[] {
  const farm = Array.from({ length: DEMO_FARM_LISTINGS }, (_, i) => {
    const n = String(i + 1).padStart(2, '0');
    return {
      x402Version: 2,
      type: 'http',
      resource: {
        url: `https://farm-${n}.demo.x402-tally.invalid/api/quote`,
        description: `Synthetic demo listing ${n} of ${DEMO_FARM_LISTINGS}: one seller behind many near-identical APIs (a listing farm)`,
        mimeType: 'application/json',
      },
      accepts: [
        {
          scheme: 'exact',
          network: 'eip155:8453',
          amount: '1000',
          asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
          payTo: DEMO_FARM_ADDRESS,
          maxTimeoutSeconds: 60,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
      lastUpdated: '2025-12-30T00:00:00.000Z',
      metadata: { title: `Demo farm quote ${n}` },
    };
  });
  return [...realItems, ...farm, ...x402DemoCatalogItems()];
}

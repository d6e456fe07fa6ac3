import type { Address } from 'viem';

const BASE_USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** A payTo of the catalog that a demo payment can go to, with how many listings name it. */
export interface CatalogSeller {
  /** lowercase */
  address: Address;
  /** distinct resource URLs of Base-USDC accepts paying this address */
  listings: number;
}

function resourceUrl(item: Record<string, unknown>): string | undefined {
  const resource = item.resource;
  if (typeof resource === 'string') return resource;
  if (resource && typeof resource === 'object' && typeof (resource as { url?: unknown }).url === 'string') {
    return (resource as { url: string }).url;
  }
  return undefined;
}

/**
 * The sellers of a Bazaar catalog (items of a discovery page or crawl) that the demo pays: payTo
 * of accepts on Base mainnet (`base` or `eip155:8453`) in Base USDC (plain or CAIP-19 asset), with
 * an https resource URL and a valid 0x payTo; lowercase, sorted by address. Deliberately
 * conservative (an item the catalog reader might reject is skipped), so every demo payee is a
 * seller of the catalog. Pure; safe to call repeatedly.
 */
export function catalogSellers(items: readonly unknown[]): CatalogSeller[] {
  const urls = new Map<string, Set<string>>();
  for (const raw of items) {
    if (!raw || typeof raw !== 'object') continue;
    const item = raw as Record<string, unknown>;
    const url = resourceUrl(item);
    if (!url || !url.startsWith('https://')) continue;
    if (!Array.isArray(item.accepts)) continue;
    for (const accept of item.accepts as unknown[]) {
      if (!accept || typeof accept !== 'object') continue;
      const a = accept as Record<string, unknown>;
      if (a.network !== 'base' && a.network !== 'eip155:8453') continue;
      const asset = typeof a.asset === 'string' ? a.asset.toLowerCase().replace(/^eip155:8453\/erc20:/, '') : '';
      if (asset !== BASE_USDC) continue;
      const amount = a.maxAmountRequired ?? a.amount;
      if (amount !== undefined && (typeof amount !== 'string' || !/^\d+$/.test(amount))) continue;
      if (typeof a.payTo !== 'string' || !EVM_ADDRESS.test(a.payTo)) continue;
      const payTo = a.payTo.toLowerCase();
      let set = urls.get(payTo);
      if (!set) urls.set(payTo, (set = new Set()));
      set.add(url);
    }
  }
  return [...urls]
    .map(([address, set]) => ({ address: address as Address, listings: set.size }))
    .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}

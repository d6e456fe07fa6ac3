/**
 * Canonical networks and assets (docs/METHOD.md section 1): v1 network names to CAIP-2, EVM
 * assets to lowercase 0x addresses. Pure functions.
 */

/** x402 v1 network names and their CAIP-2 identifiers (the names x402 v1 defines). */
export const V1_NETWORKS: Readonly<Record<string, string>> = Object.freeze({
  base: 'eip155:8453',
  'base-sepolia': 'eip155:84532',
  avalanche: 'eip155:43114',
  'avalanche-fuji': 'eip155:43113',
  iotex: 'eip155:4689',
  sei: 'eip155:1329',
  'sei-testnet': 'eip155:1328',
  polygon: 'eip155:137',
  'polygon-amoy': 'eip155:80002',
  peaq: 'eip155:3338',
  solana: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  'solana-devnet': 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
});

// CAIP-2: namespace ":" reference.
const CAIP2 = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const CAIP19_ERC20 = /^(eip155:[0-9]+)\/erc20:(.*)$/;

/** The CAIP-2 form of a network as an item wrote it, or null when it is neither a v1 name nor CAIP-2. */
export function canonicalNetwork(network: string): string | null {
  const known = Object.hasOwn(V1_NETWORKS, network) ? V1_NETWORKS[network] : undefined;
  if (known !== undefined) return known;
  return CAIP2.test(network) ? network : null;
}

/** Whether a string is a 0x EVM address (any case). */
export function isEvmAddress(value: string): boolean {
  return EVM_ADDRESS.test(value);
}

/** payTo as it enters listing_id: lowercase when an EVM address, as given otherwise. */
export function canonicalPayTo(payTo: string): string {
  return isEvmAddress(payTo) ? payTo.toLowerCase() : payTo;
}

/**
 * The canonical asset on a canonical network: on EVM (`eip155:*`) a CAIP-19
 * `eip155:N/erc20:` prefix is stripped (it must name the same chain) and a 0x address is
 * lowercased; on other networks the asset is kept as given.
 */
export function canonicalAsset(
  asset: string,
  canonicalNet: string,
): { ok: true; asset: string } | { ok: false; detail: string } {
  if (!canonicalNet.startsWith('eip155:')) return { ok: true, asset };
  let bare = asset;
  const caip19 = CAIP19_ERC20.exec(asset);
  if (caip19) {
    if (caip19[1] !== canonicalNet) {
      return { ok: false, detail: `asset ${asset} names chain ${caip19[1]}, the accept's network is ${canonicalNet}` };
    }
    bare = caip19[2] ?? '';
  }
  return { ok: true, asset: isEvmAddress(bare) ? bare.toLowerCase() : bare };
}

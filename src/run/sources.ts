/** What the cycle knows about its two sources, as `/api/v1/meta` serves them under `sources`. */
export interface CatalogFacts {
  source: string;
  fetchedAt: Date;
  items: number;
  listings: number;
  rejected: number;
  sha256: string;
}

export interface ChainFacts {
  chainId: number;
  contract: string;
  /** The as-of block: the chain is indexed up to it for every seller. */
  indexedToBlock: bigint;
  /** Unix seconds of that block. */
  indexedToTimestamp: bigint;
  /** When the chain was read (for lag_seconds). */
  now: Date;
}

const iso = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString();

/**
 * The `sources` array of SPEC section 4. Block numbers and counts are JSON numbers (far below
 * 2^53); `lag_seconds` is how far the as-of block lagged the clock when the run read the chain.
 */
export function buildSources(catalog: CatalogFacts, chain: ChainFacts): unknown[] {
  const lag = Math.max(0, Math.floor(chain.now.getTime() / 1000) - Number(chain.indexedToTimestamp));
  return [
    {
      name: 'catalog',
      source: catalog.source,
      fetched_at: catalog.fetchedAt.toISOString(),
      items: catalog.items,
      listings: catalog.listings,
      rejected: catalog.rejected,
      sha256: catalog.sha256,
    },
    {
      name: 'base_usdc',
      chain_id: chain.chainId,
      contract: chain.contract,
      indexed_to_block: Number(chain.indexedToBlock),
      indexed_to_timestamp: iso(chain.indexedToTimestamp),
      lag_seconds: lag,
    },
  ];
}

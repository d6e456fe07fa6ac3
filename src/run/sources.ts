import { TRANSFER_TOPIC, X402_CONTRACTS, X402_TOPIC0 } from '../chain/index.ts';

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

/** What the sync of method 3.0.0's streams (src/sync/streams.ts) covers once it has run. */
export interface StreamFacts {
  /** The first UTC day of the window (unix seconds): the proxies' and the claims' coverage start. */
  windowDayStart: bigint;
  /** funding_lookback_seconds: the sellers' outgoing transfers reach this much further back. */
  lookbackSeconds: number;
  /** The block ChannelCreated logs are read from (BATCH_SETTLEMENT_FROM_BLOCK). */
  channelsFromBlock: bigint;
}

const iso = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString();

/**
 * The `sources` array of SPEC section 4. Block numbers and counts are JSON numbers (far below
 * 2^53); `lag_seconds` is how far the as-of block lagged the clock when the run read the chain.
 */
export function buildSources(catalog: CatalogFacts, chain: ChainFacts, streams?: StreamFacts): unknown[] {
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
    ...(streams ? streamSources(chain, streams, lag) : []),
  ];
}

/**
 * One source per stream of method 3.0.0 (SPEC "Coverage"), each with the contracts and topic0
 * whose logs it reads and what it covers: `covers_from` (the proxies and claims: the window's
 * first day; the sellers' outgoing transfers: funding_lookback_seconds before it) or `from_block`
 * (ChannelCreated: from the batch contract's deployment block on), up to the as-of block as
 * base_usdc's. The run publishes only after the sync reached all of them (assertStreamsCovered).
 */
function streamSources(chain: ChainFacts, streams: StreamFacts, lag: number): unknown[] {
  const to = {
    indexed_to_block: Number(chain.indexedToBlock),
    indexed_to_timestamp: iso(chain.indexedToTimestamp),
    lag_seconds: lag,
  };
  const windowFrom = iso(streams.windowDayStart);
  return [
    {
      name: 'x402_proxies',
      chain_id: chain.chainId,
      contracts: [X402_CONTRACTS.exactProxy, X402_CONTRACTS.uptoProxy],
      topic0: [X402_TOPIC0.proxySettled, X402_TOPIC0.proxySettledWithPermit],
      covers_from: windowFrom,
      ...to,
    },
    {
      name: 'x402_claims',
      chain_id: chain.chainId,
      contracts: [X402_CONTRACTS.batchSettlement],
      topic0: [X402_TOPIC0.batchClaimed],
      covers_from: windowFrom,
      ...to,
    },
    {
      name: 'x402_channels',
      chain_id: chain.chainId,
      contracts: [X402_CONTRACTS.batchSettlement],
      topic0: [X402_TOPIC0.batchChannelCreated],
      from_block: Number(streams.channelsFromBlock),
      ...to,
    },
    {
      name: 'seller_outgoing',
      chain_id: chain.chainId,
      contracts: [chain.contract.toLowerCase()],
      topic0: [TRANSFER_TOPIC],
      covers_from: iso(streams.windowDayStart - BigInt(streams.lookbackSeconds)),
      ...to,
    },
  ];
}

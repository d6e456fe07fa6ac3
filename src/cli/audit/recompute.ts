import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildCatalog } from '../../catalog/index.ts';
import { BASE_BATCH_SETTLEMENT_FROM_BLOCK, BASE_CHAIN_ID, type Config } from '../../config/index.ts';
import { openDatabase } from '../../db/index.ts';
import { migrate } from '../../db/migrate.ts';
import { silentLogger, type Logger } from '../../lib/log.ts';
import { methodVersion } from '../../method/versions.ts';
import type { CycleDeps } from '../../run/cycle.ts';
import { readGenerationRows, type GenerationRows } from '../../publish/index.ts';
import { syncAndCompute } from '../../run/generation.ts';
import { channelsFromBlock, FUNDING_LOOKBACK_SECONDS } from '../../sync/index.ts';

/** The chain and contract a generation was computed on: its `base_usdc` source, else the config. */
export function chainOf(rows: GenerationRows, config: Config): { chainId: number; usdcAddress: string } {
  const sources = Array.isArray(rows.generation.sources) ? (rows.generation.sources as unknown[]) : [];
  const source = sources.find(
    (s): s is { chain_id: number; contract: string } =>
      typeof s === 'object' && s !== null && (s as { name?: unknown }).name === 'base_usdc',
  );
  return {
    chainId:
      typeof source?.chain_id === 'number' || typeof source?.chain_id === 'bigint'
        ? Number(source.chain_id)
        : config.CHAIN_ID,
    usdcAddress: typeof source?.contract === 'string' ? source.contract.toLowerCase() : config.USDC_ADDRESS,
  };
}

/** The block a run read the batch contract's ChannelCreated logs from, as its x402_channels source recorded it. */
function recordedChannelsFrom(sources: unknown): bigint | undefined {
  if (!Array.isArray(sources)) return undefined;
  const channels = (sources as { name?: unknown; from_block?: unknown }[]).find((s) => s?.name === 'x402_channels');
  return typeof channels?.from_block === 'number' ? BigInt(channels.from_block) : undefined;
}

/**
 * Recomputes a generation from raw chain data: the same catalog items and as-of block, the chain
 * re-indexed through RPC_URL into a scratch embedded database, and the same method SQL. Touches
 * nothing but the scratch database, which is deleted afterwards. It lives in a temporary folder
 * rather than in memory: PGlite's in-memory file system writes large tables several times slower
 * (docs/benchmarks.md, Method). A RPC that cannot be reached gives a
 * TemporaryError (exit 75). With `options.seller`, only that seller's logs are indexed: only its
 * own rows (compareSellerRows) are meaningful.
 */
export async function recomputeGeneration(
  published: GenerationRows,
  config: Config,
  deps: CycleDeps,
  log: Logger = silentLogger,
  options: { seller?: string } = {},
): Promise<GenerationRows> {
  const { chainId, usdcAddress } = chainOf(published, config);
  const g = published.generation;
  const scratchDir = await mkdtemp(path.join(os.tmpdir(), 'x402-tally-audit-'));
  const scratch = await openDatabase({ dataDir: scratchDir });
  try {
    await migrate(scratch.db);
    const items = published.catalogItemLines.map((line) => JSON.parse(line) as unknown);
    const catalog = buildCatalog(
      items,
      { source: g.catalog.source, fetchedAt: new Date(g.catalog.fetched_at) },
      { chainId, usdcAddress },
    );
    const catalogSnapshotId = await deps.storeCatalogSnapshot(scratch.db, catalog);
    const client = deps.createChainClient({
      rpcUrls: [...config.RPC_URL],
      chainId,
      log: log.child({ stage: 'chain' }),
    });
    // The chain's own block at the published number: its hash is compared with the published
    // one (a difference means a reorg or another chain), its time must match too.
    const asOf = await deps.resolveAsOf(client, { asOfBlock: BigInt(g.as_of.block_number) });
    log.info({ asOfBlock: asOf.number }, 'audit: re-indexing the chain');
    // Method 3.x counts settlements of other streams too: the audit reads them as the run did, from
    // the block its run read ChannelCreated from (its x402_channels source), else as configured.
    const streams = g.method_version.startsWith('3.')
      ? {
          lookbackSeconds: Number(
            (g.constants as { funding_lookback_seconds?: unknown }).funding_lookback_seconds ??
              FUNDING_LOOKBACK_SECONDS,
          ),
          channelsFromBlock:
            recordedChannelsFrom(g.sources) ??
            channelsFromBlock(config.BATCH_SETTLEMENT_FROM_BLOCK, {
              chainId,
              baseChainId: BASE_CHAIN_ID,
              baseFromBlock: BASE_BATCH_SETTLEMENT_FROM_BLOCK,
              asOfBlock: asOf.number,
            }),
        }
      : undefined;
    // The same path as a run: src/run/generation.ts.
    const { generation } = await syncAndCompute(scratch.db, deps, client, {
      catalog,
      catalogSnapshotId,
      asOf,
      usdcAddress,
      // the window of the method version (not the manifest's, which is compared, not trusted)
      windowSeconds: Number(methodVersion(g.method_version).constants.window_seconds),
      sources: Array.isArray(g.sources) ? (g.sources as unknown[]) : [],
      // the generation's own method: a retained 1.0.0 generation is audited under 1.0.0
      methodVersion: g.method_version,
      // --seller: index only that seller's logs (the other sellers' numbers are then not comparable)
      ...(options.seller !== undefined ? { onlySeller: options.seller } : {}),
      ...(streams ? { sync: { streams } } : {}),
      log,
    });
    return await readGenerationRows(scratch.db, generation);
  } finally {
    await scratch.close();
    await rm(scratchDir, { recursive: true, force: true });
  }
}

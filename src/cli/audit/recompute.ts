import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildCatalog } from '../../catalog/index.ts';
import { BASE_BATCH_SETTLEMENT_FROM_BLOCK, BASE_CHAIN_ID, type Config } from '../../config/index.ts';
import { sql, type Kysely } from 'kysely';
import { openDatabase, type Schema } from '../../db/index.ts';
import { migrate, schemaStatus } from '../../db/migrate.ts';
import { silentLogger, type Logger } from '../../lib/log.ts';
import { methodVersion } from '../../method/versions.ts';
import { progressBar, type CycleDeps } from '../../run/cycle.ts';
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
 * Up to this many published payments, the scratch database keeps 16 MB of shared buffers instead
 * of PostgreSQL's 128 MB: the demo's few thousand rows fit many times over, and the audit's peak
 * memory is ~60 MB lower (docs/benchmarks.md, "Audit for people"). Larger generations keep the default.
 */
const SMALL_AUDIT_PAYMENTS = 100_000;

/**
 * The scratch database serves no search: the catalog's search words (a trigger and a generated,
 * GIN-indexed column that the API's `q` reads, and no step of the method) are not made there.
 * Storing the demo's catalog took 5-8 s with them and ~2 s without. Idempotent.
 */
async function withoutSearch(db: Kysely<Schema>): Promise<void> {
  await sql`alter table catalog_listings disable trigger user`.execute(db);
  await sql`drop index if exists catalog_listings_search`.execute(db);
  await sql`alter table catalog_listings drop column if exists search_doc`.execute(db);
}

export interface RecomputeOptions {
  /** Index only this seller's logs: only its own rows (compareSellerRows) are then meaningful. */
  seller?: string;
  /** One line per stage for a person at a terminal (ctx.progress). */
  progress?: (line: string) => void;
}

/**
 * Recomputes a generation from raw chain data: the same catalog items and as-of block, the chain
 * re-indexed through RPC_URL into a scratch embedded database, and the same method SQL. Touches
 * nothing but the scratch database, which is deleted afterwards. It lives in a temporary folder
 * rather than in memory: PGlite's in-memory file system writes large tables several times slower
 * (docs/benchmarks.md, Method). It starts from the migrated template (src/db/pglite/template.ts)
 * rather than initdb and every migration. A RPC that cannot be reached gives a TemporaryError (exit 75).
 */
export async function recomputeGeneration(
  published: GenerationRows,
  config: Config,
  deps: CycleDeps,
  log: Logger = silentLogger,
  options: RecomputeOptions = {},
): Promise<GenerationRows> {
  const progress = options.progress ?? (() => {});
  let lapStarted = performance.now();
  /**
   * Logs how long the stage that just ended took and the process's memory at its end (the profile
   * of docs/benchmarks.md, "Audit memory"): resident now and at its peak so far, and the part of it
   * in ArrayBuffers outside the JavaScript heap.
   */
  const lap = (stage: string) => {
    const now = performance.now();
    const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
    const memory = process.memoryUsage();
    log.info(
      {
        stage,
        ms: Math.round(now - lapStarted),
        rssMb: mb(memory.rss),
        peakRssMb: mb(process.resourceUsage().maxRSS * 1024),
        heapUsedMb: mb(memory.heapUsed),
        arrayBuffersMb: mb(memory.arrayBuffers),
      },
      'audit stage done',
    );
    lapStarted = now;
  };
  lap('start');
  const { chainId, usdcAddress } = chainOf(published, config);
  const g = published.generation;
  progress('opening a scratch database…');
  const scratchDir = await mkdtemp(path.join(os.tmpdir(), 'x402-tally-audit-'));
  const small = published.payments.length <= SMALL_AUDIT_PAYMENTS;
  const scratch = await openDatabase({
    dataDir: scratchDir,
    fromTemplate: true,
    ...(small ? { settings: { shared_buffers: '16MB' } } : {}),
  });
  try {
    // The template is complete for this code's migrations; migrate only what it would lack.
    if ((await schemaStatus(scratch.db)).pending.length > 0) await migrate(scratch.db);
    await withoutSearch(scratch.db);
    lap('open');
    progress('storing the published catalog items…');
    const items = published.catalogItemLines.map((line) => JSON.parse(line) as unknown);
    const catalog = buildCatalog(
      items,
      { source: g.catalog.source, fetchedAt: new Date(g.catalog.fetched_at) },
      { chainId, usdcAddress },
    );
    const catalogSnapshotId = await deps.storeCatalogSnapshot(scratch.db, catalog);
    lap('catalog');
    const client = deps.createChainClient({
      rpcUrls: [...config.RPC_URL],
      chainId,
      log: log.child({ stage: 'chain' }),
    });
    // The chain's own block at the published number: its hash is compared with the published
    // one (a difference means a reorg or another chain), its time must match too.
    const asOf = await deps.resolveAsOf(client, { asOfBlock: BigInt(g.as_of.block_number) });
    log.info({ asOfBlock: asOf.number }, 'audit: re-indexing the chain');
    progress(`reading the chain up to block ${asOf.number}…`);
    const syncStarted = performance.now();
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
      sync: {
        ...(streams ? { streams } : {}),
        onProgress: (p) =>
          progress(
            `chain ${progressBar(Number(p.blocks), Number(p.totalBlocks), performance.now() - syncStarted, 'blocks')}`,
          ),
      },
      afterStep: (step) => progress(`method ${g.method_version}: ${step}`),
      stage: async (name, work) => {
        const result = await work();
        lap(name);
        return result;
      },
      log,
    });
    const rows = await readGenerationRows(scratch.db, generation);
    lap('read');
    return rows;
  } finally {
    await scratch.close();
    await rm(scratchDir, { recursive: true, force: true });
  }
}

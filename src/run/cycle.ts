import type { Kysely } from 'kysely';
import type { AsOf } from '../lib/as-of.ts';
import type { SyncStats } from '../sync/index.ts';
import type { CycleDeps } from './deps.ts';
import { ConfigError, type Config } from '../config/index.ts';
import { checkpointEmbedded, type Database } from '../db/index.ts';
import { migrate } from '../db/migrate.ts';
import type { Schema } from '../db/schema.ts';
import { TemporaryError } from '../lib/errors.ts';
import { silentLogger, type Logger } from '../lib/log.ts';
import { METHOD_VERSION } from '../method/constants.ts';
import { METHOD_VERSIONS } from '../method/versions.ts';
import { sellersOf, syncAndCompute } from './generation.ts';
import { acquireRunLock, type HeldLock } from './lock.ts';
import { buildSources } from './sources.ts';
import { BASE_BATCH_SETTLEMENT_FROM_BLOCK, BASE_CHAIN_ID } from '../config/index.ts';
import { channelsFromBlock, FUNDING_LOOKBACK_SECONDS, utcDayStart } from '../sync/index.ts';

export type { AsOf } from '../lib/as-of.ts';

export type { CycleDeps } from './deps.ts';

/** Points where a run can be interrupted (tests inject a crash with `failAt`). */
export const RUN_STAGES = [
  'migrate',
  'lock',
  'catalog',
  'snapshot',
  'as_of',
  'sync',
  'compute',
  'publish',
  'prune',
] as const;
export type RunStage = (typeof RUN_STAGES)[number];

export interface CycleOptions {
  log?: Logger;
  signal?: AbortSignal;
  /**
   * Called at each interruption point: `before:<stage>`, `sync:chunk:<n>` (after the n-th stored
   * chunk; only a synchronous throw stops there), `compute:<method step>` (inside the
   * method's transaction), `publish:commit` (inside the publish transaction, before commit).
   * A throw aborts the run there, as a crash would.
   */
  hook?: (point: string) => void | Promise<void>;
  /** Progress lines for a person watching (a terminal); never parsed. */
  progress?: (line: string) => void;
  /** Skip taking the run lock (the caller holds it). */
  lockHeld?: boolean;
  /**
   * With AS_OF_BLOCK below the live generation's as-of block: make the new generation the latest
   * anyway (`run --make-latest`). Without it, such a generation is published as pinnable only.
   */
  makeLatest?: boolean;
}

export interface RunReport {
  generation: number;
  /** Whether the generation became the latest (false: published as pinnable only, see CycleOptions.makeLatest). */
  latest: boolean;
  asOf: AsOf;
  catalogSnapshotId: bigint;
  runSeq: bigint;
  sellers: number;
  listings: number;
  rejected: number;
  sync: SyncStats;
  pruned: number[];
  /** Milliseconds per stage. */
  ms: Partial<Record<RunStage, number>>;
}

/**
 * One cycle: migrate -> lock -> catalog -> snapshot -> as-of -> sync -> compute -> publish ->
 * prune. Nothing is served until the publish transaction commits, so a failure anywhere before
 * it leaves the previous generation live; chain facts written by a failed run are stamped with
 * its run sequence and are simply reused (or superseded) by the next run. Safe to re-run at any
 * time; two overlapping runs never both write (the second fails with a TemporaryError, exit 75).
 */
export async function runCycle(
  database: Database,
  config: Config,
  deps: CycleDeps,
  options: CycleOptions = {},
): Promise<RunReport> {
  const log = options.log ?? silentLogger;
  const hook = options.hook ?? (() => {});
  const progress = options.progress ?? (() => {});
  const ms: Partial<Record<RunStage, number>> = {};
  const methodVersion = config.METHOD_VERSION ?? METHOD_VERSION;
  if (!Object.hasOwn(METHOD_VERSIONS, methodVersion))
    throw new ConfigError([
      `METHOD_VERSION: ${methodVersion} is not implemented here (known: ${Object.keys(METHOD_VERSIONS).join(', ')})`,
    ]);
  const windowSeconds = Number(METHOD_VERSIONS[methodVersion]!.constants.window_seconds);
  const db = database.db;
  /** Starts a stage once its hook has passed; `done` settles when its work has (and is timed then). */
  async function start<T>(name: RunStage, work: () => Promise<T>): Promise<{ done: Promise<T> }> {
    options.signal?.throwIfAborted();
    await hook(`before:${name}`);
    const started = performance.now();
    progress(`${name}…`);
    const done = work().then((result) => {
      ms[name] = Math.round(performance.now() - started);
      progress(`${name} done in ${ms[name]} ms`);
      return result;
    });
    done.catch(() => {}); // awaited by the caller
    return { done };
  }
  const stage = async <T>(name: RunStage, work: () => Promise<T>): Promise<T> => (await start(name, work)).done;

  await stage('migrate', () => migrate(db, undefined, { copyFacts: false }));
  let lock: HeldLock | undefined;
  let snapshot: { done: Promise<bigint> } | undefined;
  if (!options.lockHeld) lock = await stage('lock', () => acquireRunLock(database));
  try {
    const catalog = await stage('catalog', () =>
      deps.readCatalog(config.CATALOG_SOURCE, {
        chainId: config.CHAIN_ID,
        usdcAddress: config.USDC_ADDRESS,
        log: log.child({ stage: 'catalog' }),
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    );
    const sellers = sellersOf(catalog);
    log.info(
      {
        items: catalog.items.length,
        listings: catalog.listings.length,
        rejected: catalog.rejects.length,
        sellers: sellers.length,
      },
      'catalog read',
    );
    // The snapshot is stored while the run goes on to the as-of point and the sync (the sync stores
    // chain facts only, and the compute is the first to read the snapshot): on Postgres its own
    // connection's work then overlaps the sync's, which waits on round trips more than it uses
    // both cores (docs/benchmarks.md, "Whole run against the bare replay"; on the embedded
    // database, one connection, they take turns). Its failure stops the sync at the next step.
    snapshot = await start('snapshot', () => deps.storeCatalogSnapshot(db, catalog));
    const snapshotFailed = new AbortController();
    snapshot.done.catch((error: unknown) => snapshotFailed.abort(error));
    const syncSignal = options.signal
      ? AbortSignal.any([options.signal, snapshotFailed.signal])
      : snapshotFailed.signal;
    const catalogSnapshotId = snapshot.done;

    const client = deps.createChainClient({
      rpcUrls: [...config.RPC_URL],
      chainId: config.CHAIN_ID,
      log: log.child({ stage: 'chain' }),
    });
    const asOf = await stage('as_of', () =>
      deps.resolveAsOf(client, {
        ...(config.AS_OF_BLOCK !== undefined ? { asOfBlock: config.AS_OF_BLOCK } : {}),
        ...(config.CONFIRMATIONS !== undefined ? { confirmations: config.CONFIRMATIONS } : {}),
      }),
    );
    log.info({ asOfBlock: asOf.number, asOfTs: asOf.timestamp }, 'as-of point');
    const readAt = new Date();
    const { publishAs, finalBlock } = await checkAsOfAgainstLive(db, config, asOf, options.makeLatest ?? false);

    // Method 3.0.0's streams are synced on every run (cheap when empty: src/sync/streams.ts), so
    // that a 3.0.0 generation finds them covered whichever method computes.
    const streams = {
      lookbackSeconds: FUNDING_LOOKBACK_SECONDS,
      channelsFromBlock: channelsFromBlock(config.BATCH_SETTLEMENT_FROM_BLOCK, {
        chainId: config.CHAIN_ID,
        baseChainId: BASE_CHAIN_ID,
        baseFromBlock: BASE_BATCH_SETTLEMENT_FROM_BLOCK,
        asOfBlock: asOf.number,
      }),
    };
    const sources = buildSources(
      {
        source: catalog.source,
        fetchedAt: catalog.fetchedAt,
        items: catalog.items.length,
        listings: catalog.listings.length,
        rejected: catalog.rejects.length,
        sha256: catalog.sha256,
      },
      {
        chainId: config.CHAIN_ID,
        contract: config.USDC_ADDRESS,
        indexedToBlock: asOf.number,
        indexedToTimestamp: asOf.timestamp,
        now: readAt,
      },
      {
        windowDayStart: utcDayStart(asOf.timestamp - BigInt(windowSeconds)),
        lookbackSeconds: streams.lookbackSeconds,
        channelsFromBlock: streams.channelsFromBlock,
      },
    );
    const syncStarted = performance.now();
    const { generation, runSeq, sync } = await syncAndCompute(db, deps, client, {
      catalog,
      catalogSnapshotId,
      asOf,
      usdcAddress: config.USDC_ADDRESS,
      windowSeconds,
      sources,
      methodVersion,
      log,
      stage,
      sync: {
        concurrency: config.RPC_CONCURRENCY,
        ...(config.CONFIRMATIONS !== undefined ? { confirmations: config.CONFIRMATIONS } : {}),
        ...(finalBlock !== undefined ? { finalBlock } : {}),
        signal: syncSignal,
        // A synchronous hook can stop the run between two stored chunks of a stream (tests).
        streams: { ...streams, onChunk: (stream) => void hook(`sync:stream:${stream}`) },
        onProgress: (p) => {
          progress(
            `sync ${progressBar(Number(p.blocks), Number(p.totalBlocks), performance.now() - syncStarted, 'blocks')} (blocks ${p.fromBlock}-${p.toBlock})`,
          );
          // A synchronous hook can stop the run between two stored chunks (tests).
          void hook(`sync:chunk:${p.ranges}`);
        },
      },
      afterStep: async (step) => {
        progress(`compute: ${step}`);
        await hook(`compute:${step}`);
      },
    });
    await stage('publish', async () => {
      // The lock must still be ours when the pointer moves (a dropped session released it).
      await lock?.assertHeld();
      await deps.publishGeneration(db, generation, {
        beforeCommit: () => hook('publish:commit'),
        as: publishAs,
        ...(options.makeLatest ? { allowOlderAsOf: true } : {}),
      });
    });
    log.info({ generation, asOfBlock: asOf.number, latest: publishAs === 'latest' }, 'generation published');
    const prunedResult = await stage('prune', async () => {
      const result = await deps.pruneGenerations(db, config.RETAIN_GENERATIONS);
      await checkpointEmbedded(database); // (bounds the embedded database's WAL: src/db/index.ts)
      return result;
    });
    const pruned = Array.isArray(prunedResult) ? prunedResult : prunedResult.generations;
    if (pruned.length > 0) log.info({ pruned }, 'generations pruned');
    return {
      generation,
      latest: publishAs === 'latest',
      asOf,
      catalogSnapshotId: await catalogSnapshotId,
      runSeq,
      sellers: sellers.length,
      listings: catalog.listings.length,
      rejected: catalog.rejects.length,
      sync,
      pruned,
      ms,
    };
  } finally {
    await snapshot?.done.catch(() => {}); // a run that failed meanwhile ends after the snapshot's transaction
    await lock?.release();
  }
}

/**
 * The live generation never goes back in time. An as-of point below the live generation's:
 * - resolved from the node (`finalized`, or latest - CONFIRMATIONS): the node went back, it is out
 *   of sync or behind a load balancer with a lagging member; a temporary fault (exit 75), nothing
 *   is published;
 * - given by the operator (AS_OF_BLOCK): computed and published as pinnable, not as the latest,
 *   unless `makeLatest`.
 * Also returns the block below which stored facts are final for this run: the live generation's
 * as-of block, when this run reads `finalized` (rollbackReorgs refuses to roll back below it).
 */
async function checkAsOfAgainstLive(
  db: Kysely<Schema>,
  config: Config,
  asOf: AsOf,
  makeLatest: boolean,
): Promise<{ publishAs: 'latest' | 'pinnable'; finalBlock: bigint | undefined }> {
  const live = await db
    .selectFrom('published_pointer')
    .innerJoin('generations', 'generations.generation', 'published_pointer.generation')
    .select(['generations.generation', 'generations.as_of_block'])
    .executeTakeFirst();
  if (!live) return { publishAs: 'latest', finalBlock: undefined };
  const liveBlock = BigInt(live.as_of_block);
  const explicit = config.AS_OF_BLOCK !== undefined;
  const finalized = !explicit && config.CONFIRMATIONS === undefined;
  if (asOf.number < liveBlock && !explicit) {
    const what = finalized ? 'finalized block' : `block at ${config.CONFIRMATIONS} confirmations`;
    throw new TemporaryError(
      `the node's ${what} is ${asOf.number}, below block ${liveBlock} of the live generation ${live.generation}: ` +
        'the provider went back in time (out of sync, or a lagging node behind a load balancer); nothing was published',
      {
        details: {
          asOfBlock: asOf.number.toString(),
          liveAsOfBlock: liveBlock.toString(),
          liveGeneration: live.generation,
        },
      },
    );
  }
  return {
    publishAs: asOf.number < liveBlock && !makeLatest ? 'pinnable' : 'latest',
    finalBlock: finalized ? liveBlock : undefined,
  };
}

/** `[########............] 12/30 ranges, ETA 0:41` for a person watching a backfill. */
export function progressBar(done: number, total: number, elapsedMs: number, unit = 'ranges'): string {
  const width = 20;
  const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : width;
  const left = done > 0 && total > done ? Math.round(((elapsedMs / done) * (total - done)) / 1000) : 0;
  const eta = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${unit}, ETA ${eta}`;
}

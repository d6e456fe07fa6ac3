import { sql, type Kysely } from 'kysely';
import type { Catalog } from '../catalog/types.ts';
import type { Config } from '../config/index.ts';
import type { Database } from '../db/index.ts';
import { migrate } from '../db/migrate.ts';
import type { Schema } from '../db/schema.ts';
import { TallyError, TemporaryError } from '../lib/errors.ts';
import { silentLogger, type Logger } from '../lib/log.ts';
import { METHOD_CONSTANTS } from '../method/constants.ts';
import { acquireRunLock, type HeldLock } from './lock.ts';
import { buildSources } from './sources.ts';

/** The block a generation is computed as of. */
export interface AsOf {
  number: bigint;
  hash: `0x${string}`;
  /** Unix seconds. */
  timestamp: bigint;
}

/**
 * The stages of a run, wired through ports so that tests can replace any of them and so that this
 * file knows the stages' signatures only (src/run/deps.ts binds the real ones).
 */
export interface CycleDeps<Client = unknown> {
  readCatalog(source: string, options: { chainId: number; usdcAddress: string; log?: Logger }): Promise<Catalog>;
  storeCatalogSnapshot(db: Kysely<Schema>, catalog: Catalog): Promise<bigint>;
  createChainClient(options: { rpcUrls: string[]; chainId: number; log?: Logger }): Client;
  resolveAsOf(client: Client, options: { asOfBlock?: bigint; confirmations?: number }): Promise<AsOf>;
  syncChain(
    db: Kysely<Schema>,
    client: Client,
    options: {
      usdcAddress: string;
      sellers: string[];
      asOf: AsOf;
      windowSeconds: number;
      runSeq: bigint;
      log?: Logger;
      confirmations?: number;
      finalBlock?: bigint;
      signal?: AbortSignal;
      onProgress?: (progress: { ranges: number; totalRanges: number; fromBlock: bigint; toBlock: bigint }) => void;
    },
  ): Promise<unknown>;
  computeGeneration(
    db: Kysely<Schema>,
    options: {
      runSeq: bigint;
      asOf: AsOf;
      catalogSnapshotId: bigint;
      sources: unknown[];
      /** Defaults to the current method; audit passes the audited generation's. */
      methodVersion?: string;
      log?: Logger;
      afterStep?: (step: string) => void | Promise<void>;
    },
  ): Promise<number>;
  publishGeneration(
    db: Kysely<Schema>,
    generation: number,
    options?: { beforeCommit?: () => void | Promise<void>; as?: 'latest' | 'pinnable'; allowOlderAsOf?: boolean },
  ): Promise<void>;
  pruneGenerations(db: Kysely<Schema>, retain: number): Promise<{ generations: number[] } | number[]>;
}

/** Points where a run can be interrupted (tests inject a crash with `failAt`). */
export const RUN_STAGES = ['migrate', 'lock', 'catalog', 'snapshot', 'as_of', 'sync', 'compute', 'publish', 'prune'] as const;
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
  sync: unknown;
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
export async function runCycle<Client>(
  database: Database,
  config: Config,
  deps: CycleDeps<Client>,
  options: CycleOptions = {},
): Promise<RunReport> {
  const log = options.log ?? silentLogger;
  const hook = options.hook ?? (() => {});
  const progress = options.progress ?? (() => {});
  const ms: Partial<Record<RunStage, number>> = {};
  const db = database.db;
  async function stage<T>(name: RunStage, work: () => Promise<T>): Promise<T> {
    options.signal?.throwIfAborted();
    await hook(`before:${name}`);
    const started = performance.now();
    progress(`${name}…`);
    const result = await work();
    ms[name] = Math.round(performance.now() - started);
    progress(`${name} done in ${ms[name]} ms`);
    return result;
  }

  await stage('migrate', () => migrate(db));
  let lock: HeldLock | undefined;
  if (!options.lockHeld) lock = await stage('lock', () => acquireRunLock(database, config.DATABASE_URL));
  try {
    const catalog = await stage('catalog', () =>
      deps.readCatalog(config.CATALOG_SOURCE, { chainId: config.CHAIN_ID, usdcAddress: config.USDC_ADDRESS, log: log.child({ stage: 'catalog' }) }),
    );
    const sellers = [...new Set(catalog.listings.flatMap((l) => (l.verifiability === 'base_usdc' && l.seller_address ? [l.seller_address] : [])))].sort();
    log.info({ items: catalog.items.length, listings: catalog.listings.length, rejected: catalog.rejects.length, sellers: sellers.length }, 'catalog read');
    const catalogSnapshotId = await stage('snapshot', () => deps.storeCatalogSnapshot(db, catalog));

    const client = deps.createChainClient({ rpcUrls: [...config.RPC_URL], chainId: config.CHAIN_ID, log: log.child({ stage: 'chain' }) });
    const asOf = await stage('as_of', () =>
      deps.resolveAsOf(client, {
        ...(config.AS_OF_BLOCK !== undefined ? { asOfBlock: config.AS_OF_BLOCK } : {}),
        ...(config.CONFIRMATIONS !== undefined ? { confirmations: config.CONFIRMATIONS } : {}),
      }),
    );
    log.info({ asOfBlock: asOf.number, asOfTs: asOf.timestamp }, 'as-of point');
    const readAt = new Date();
    const { publishAs, finalBlock } = await checkAsOfAgainstLive(db, config, asOf, options.makeLatest ?? false);

    const { rows } = await sql<{ seq: bigint }>`select nextval('ingest_seq') as seq`.execute(db);
    const runSeq = BigInt(rows[0]!.seq);
    const sync = await stage('sync', () =>
      deps.syncChain(db, client, {
        usdcAddress: config.USDC_ADDRESS,
        sellers,
        asOf,
        windowSeconds: METHOD_CONSTANTS.window_seconds,
        runSeq,
        log: log.child({ stage: 'sync' }),
        ...(config.CONFIRMATIONS !== undefined ? { confirmations: config.CONFIRMATIONS } : {}),
        ...(finalBlock !== undefined ? { finalBlock } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        onProgress: (p) => {
          progress(`sync: ${p.ranges}/${p.totalRanges} ranges stored (blocks ${p.fromBlock}-${p.toBlock})`);
          // A synchronous hook can stop the run between two stored chunks (tests).
          void hook(`sync:chunk:${p.ranges}`);
        },
      }),
    );
    log.info({ sync }, 'chain synced');

    const sources = buildSources(
      { source: catalog.source, fetchedAt: catalog.fetchedAt, items: catalog.items.length, listings: catalog.listings.length, rejected: catalog.rejects.length, sha256: catalog.sha256 },
      { chainId: config.CHAIN_ID, contract: config.USDC_ADDRESS, indexedToBlock: asOf.number, indexedToTimestamp: asOf.timestamp, now: readAt },
    );
    const generation = await stage('compute', () =>
      deps.computeGeneration(db, {
        runSeq,
        asOf,
        catalogSnapshotId,
        sources,
        log: log.child({ stage: 'method' }),
        afterStep: async (step) => {
          progress(`compute: ${step}`);
          await hook(`compute:${step}`);
        },
      }),
    );
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
    const prunedResult = await stage('prune', () => deps.pruneGenerations(db, config.RETAIN_GENERATIONS));
    const pruned = Array.isArray(prunedResult) ? prunedResult : prunedResult.generations;
    if (pruned.length > 0) log.info({ pruned }, 'generations pruned');
    return { generation, latest: publishAs === 'latest', asOf, catalogSnapshotId, runSeq, sellers: sellers.length, listings: catalog.listings.length, rejected: catalog.rejects.length, sync, pruned, ms };
  } finally {
    await lock?.release();
  }
}

/** An injected crash, for tests of interrupted runs. */
export class InjectedCrash extends TallyError {}

/** A hook that crashes the run at `point` (e.g. `before:sync`, `compute:10_sellers`, `publish:commit`). */
export function crashAt(point: string): (p: string) => void {
  return (p) => {
    if (p === point) throw new InjectedCrash(`injected crash at ${point}`);
  };
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
      { details: { asOfBlock: asOf.number.toString(), liveAsOfBlock: liveBlock.toString(), liveGeneration: live.generation } },
    );
  }
  return {
    publishAs: asOf.number < liveBlock && !makeLatest ? 'pinnable' : 'latest',
    finalBlock: finalized ? liveBlock : undefined,
  };
}

import { sql, type Kysely } from 'kysely';
import type { Catalog } from '../catalog/types.ts';
import type { ChainClient } from '../chain/index.ts';
import type { Schema } from '../db/schema.ts';
import type { AsOf } from '../lib/as-of.ts';
import { silentLogger, type Logger } from '../lib/log.ts';
import type { SyncOptions, SyncStats } from '../sync/index.ts';
import type { CycleDeps } from './cycle.ts';

/** The sellers a generation covers: every seller_address of the catalog's base_usdc listings, in byte order. */
export function sellersOf(catalog: Catalog): string[] {
  return [
    ...new Set(
      catalog.listings.flatMap((l) => (l.verifiability === 'base_usdc' && l.seller_address ? [l.seller_address] : [])),
    ),
  ].sort();
}

export interface SyncAndComputeOptions {
  catalog: Catalog;
  /** The stored snapshot of `catalog`; the run stores it while the sync runs (awaited before the compute). */
  catalogSnapshotId: bigint | Promise<bigint>;
  asOf: AsOf;
  usdcAddress: string;
  windowSeconds: number;
  /** Per-source freshness recorded with the generation (served by /meta). */
  sources: unknown[];
  /** Sync only this seller's logs (`audit --seller`): the other sellers' rows are then not meaningful. */
  onlySeller?: string;
  /** The method version to compute (default: the current one); the audit passes the published one. */
  methodVersion?: string;
  log?: Logger;
  /** Sync options a run adds (confirmations, finalBlock, signal, progress). */
  sync?: Partial<
    Pick<SyncOptions, 'concurrency' | 'confirmations' | 'finalBlock' | 'signal' | 'onProgress' | 'streams'>
  >;
  afterStep?: (step: string) => void | Promise<void>;
  /** Wraps the two stages (timing, hooks); default: runs them. */
  stage?: <T>(name: 'sync' | 'compute', work: () => Promise<T>) => Promise<T>;
}

/**
 * The part of a run that makes a generation from a stored catalog snapshot and an as-of point:
 * one run sequence number, the chain synced for the catalog's sellers, the method computed.
 * `run` (src/run/cycle.ts) and `audit` (src/cli/audit/recompute.ts) both go through here, so the
 * audit provably recomputes what the run computed. Returns the new (ready, unpublished) generation.
 */
export async function syncAndCompute(
  db: Kysely<Schema>,
  deps: Pick<CycleDeps, 'syncChain' | 'computeGeneration'>,
  client: ChainClient,
  o: SyncAndComputeOptions,
): Promise<{ generation: number; runSeq: bigint; sync: SyncStats; sellers: string[] }> {
  const log = o.log ?? silentLogger;
  const stage = o.stage ?? (<T>(_name: string, work: () => Promise<T>) => work());
  const sellers = sellersOf(o.catalog).filter((s) => o.onlySeller === undefined || s === o.onlySeller);
  const { rows } = await sql<{ seq: bigint }>`select nextval('ingest_seq') as seq`.execute(db);
  const runSeq = BigInt(rows[0]!.seq);
  const sync = await stage('sync', () =>
    deps.syncChain(db, client, {
      usdcAddress: o.usdcAddress,
      sellers,
      asOf: o.asOf,
      windowSeconds: o.windowSeconds,
      runSeq,
      log: log.child({ stage: 'sync' }),
      ...o.sync,
    }),
  );
  log.info({ sync }, 'chain synced');
  const catalogSnapshotId = await o.catalogSnapshotId;
  const generation = await stage('compute', () =>
    deps.computeGeneration(db, {
      runSeq,
      asOf: o.asOf,
      catalogSnapshotId,
      sources: o.sources,
      ...(o.methodVersion ? { methodVersion: o.methodVersion } : {}),
      log: log.child({ stage: 'method' }),
      ...(o.afterStep ? { afterStep: o.afterStep } : {}),
    }),
  );
  return { generation, runSeq, sync, sellers };
}

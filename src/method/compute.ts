import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { AsOf } from '../lib/as-of.ts';
import { TallyError } from '../lib/errors.ts';
import { writeJson } from '../lib/json.ts';
import { silentLogger, type Logger } from '../lib/log.ts';
import { METHOD_CONSTANTS_2_0_0, METHOD_VERSION } from './constants.ts';
import { methodVersion } from './versions.ts';
import { windowOf } from '../lib/as-of.ts';
import { loadMethodSteps, type MethodStep } from './sql-files.ts';

/** The block a generation is computed as of (the one AsOf type of src/lib/as-of.ts). */
export type AsOfPoint = AsOf;

export interface ComputeOptions {
  /** The ingest sequence value of the run: the chain facts the generation sees. */
  runSeq: bigint;
  asOf: AsOfPoint;
  catalogSnapshotId: bigint;
  /** Per-source freshness, stored as given and served by /api/v1/meta under `sources`. */
  sources: unknown[];
  generatedAt?: Date;
  log?: Logger;
  /** Called after each step inside the transaction; a throw aborts the generation (tests). */
  afterStep?: (step: string) => void | Promise<void>;
  /** The method version to compute with; defaults to METHOD_VERSION, the current default (audit passes a retained generation's). */
  methodVersion?: string;
  /** The method's steps; defaults to those of `methodVersion` (sql/method and sql/method/<version>). */
  steps?: MethodStep[];
}

/**
 * Computes a new generation: writes its `generations` row and runs the method (sql/method) for
 * it, all in ONE transaction, so a failure at any point leaves no trace. The result has status
 * `ready`; it is served only once `publishGeneration` switches the pointer to it.
 * Returns the new generation number (one more than the highest so far). Two callers racing for
 * the same number: one commits, the other fails on the primary key and writes nothing.
 */
export async function computeGeneration(db: Kysely<Schema>, options: ComputeOptions): Promise<number> {
  const log = options.log ?? silentLogger;
  const version = options.methodVersion ?? METHOD_VERSION;
  const constants = methodVersion(version).constants as typeof METHOD_CONSTANTS_2_0_0;
  const steps = options.steps ?? loadMethodSteps(version);
  const { windowStartTs, marketFromTs } = windowOf(options.asOf.timestamp, BigInt(constants.window_seconds));

  return db.transaction().execute(async (trx) => {
    const snapshot = await trx
      .selectFrom('catalog_snapshots')
      .select(['sha256'])
      .where('snapshot_id', '=', options.catalogSnapshotId)
      .executeTakeFirst();
    if (!snapshot) {
      throw new TallyError(`catalog snapshot ${options.catalogSnapshotId} does not exist`);
    }
    const { next } = await trx
      .selectFrom('generations')
      .select(sql<number>`coalesce(max(generation), 0)::int + 1`.as('next'))
      .executeTakeFirstOrThrow();

    await trx
      .insertInto('generations')
      .values({
        generation: next,
        status: 'building',
        run_seq: options.runSeq,
        method_version: version,
        generated_at: options.generatedAt ?? new Date(),
        as_of_block: options.asOf.number,
        as_of_block_hash: options.asOf.hash.toLowerCase(),
        as_of_ts: options.asOf.timestamp,
        window_seconds: constants.window_seconds,
        window_start_ts: windowStartTs,
        market_from_ts: marketFromTs,
        catalog_snapshot_id: options.catalogSnapshotId,
        catalog_sha256: snapshot.sha256,
        constants: writeJson(constants),
        sources: writeJson(options.sources),
      })
      .execute();
    await sql`select set_config('x402tally.generation', ${String(next)}, true)`.execute(trx);

    for (const step of steps) {
      const started = performance.now();
      await sql.raw(step.sql).execute(trx);
      log.info({ generation: next, step: step.name, ms: Math.round(performance.now() - started) }, 'method step done');
      await options.afterStep?.(step.name);
    }

    await trx.updateTable('generations').set({ status: 'ready' }).where('generation', '=', next).execute();
    await options.afterStep?.('ready');
    return next;
  });
}

import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

export interface PruneResult {
  /** Generations deleted (published ones past retention, and unpublished leftovers). */
  generations: number[];
  catalogSnapshots: number;
  /** Chain fact rows deleted because no retained generation can see them any more. */
  removedFacts: number;
}

/**
 * Keeps the newest `retain` published generations and deletes the rest with their rows; also
 * deletes generations that were computed but never published and are older than the live one,
 * catalog snapshots that no remaining generation uses (except the newest snapshot), and chain
 * fact rows that a reorg removed before the oldest retained generation's run, and hour partials
 * closed at or before the oldest remaining generation. In one
 * transaction; safe to re-run. Never deletes the live generation.
 */
export async function pruneGenerations(db: Kysely<Schema>, retain: number): Promise<PruneResult> {
  if (!Number.isInteger(retain) || retain < 1) throw new RangeError('retain must be a positive integer');
  return db.transaction().execute(async (trx) => {
    const live = await trx.selectFrom('published_pointer').select('generation').executeTakeFirst();
    if (!live) return { generations: [], catalogSnapshots: 0, removedFacts: 0 };

    const keep = await trx
      .selectFrom('generations')
      .select('generation')
      .where('status', '=', 'published')
      .orderBy('generation', 'desc')
      .limit(retain)
      .execute();
    const kept = keep.map((r) => r.generation);
    if (!kept.includes(live.generation)) kept.push(live.generation);

    const deleted = await trx
      .deleteFrom('generations')
      .where('generation', 'not in', kept)
      .where((eb) => eb.or([eb('status', '=', 'published'), eb('generation', '<', live.generation)]))
      .returning('generation')
      .execute();

    const snapshots = await sql<{ n: bigint }>`
      with gone as (
        delete from catalog_snapshots s
         where not exists (select 1 from generations g where g.catalog_snapshot_id = s.snapshot_id)
           and s.snapshot_id < (select max(snapshot_id) from catalog_snapshots)
        returning 1)
      select count(*) as n from gone`.execute(trx);

    const oldestSeq = await trx
      .selectFrom('generations')
      .select((eb) => eb.fn.min('run_seq').as('seq'))
      .executeTakeFirst();
    let removedFacts = 0;
    if (oldestSeq?.seq != null) {
      // Block versions a reorg removed before every remaining generation's run, with their
      // transfers (addresses stay: the dictionary is only pruned with partitions, docs/data-model.md).
      const gone = await sql<{ blocks: bigint; transfers: bigint }>`
        with versions as (
          delete from blocks where removed_seq <= ${oldestSeq.seq} returning block_id
        ), facts as (
          delete from transfers where block_id in (select block_id from versions) returning 1
        )
        select (select count(*) from versions) as blocks, (select count(*) from facts) as transfers`.execute(trx);
      removedFacts = Number(gone.rows[0]!.blocks) + Number(gone.rows[0]!.transfers);
    }
    // Hour partials (method 2.0.0) and daily rows closed at or before the oldest remaining generation serve none.
    const oldest = await trx
      .selectFrom('generations')
      .select((eb) => eb.fn.min('generation').as('g'))
      .executeTakeFirst();
    if (oldest?.g != null) {
      for (const table of ['part_seller_hours', 'part_hours', 'seller_daily_rows'] as const) {
        await trx.deleteFrom(table).where('gen_to', '<=', oldest.g).execute();
      }
    }
    return {
      generations: deleted.map((r) => r.generation).sort((a, b) => a - b),
      catalogSnapshots: Number(snapshots.rows[0]?.n ?? 0),
      removedFacts,
    };
  });
}

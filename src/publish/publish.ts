import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { TallyError } from '../lib/errors.ts';

export interface PublishOptions {
  publishedAt?: Date;
  beforeCommit?: () => void | Promise<void>;
  /**
   * 'latest' (default): the generation becomes the one the API serves by default.
   * 'pinnable': it is published (retained, servable with ?generation=N, exportable) but the
   * pointer stays where it is: for a generation computed as of an older block than the live one.
   */
  as?: 'latest' | 'pinnable';
  /** Let the pointer move to a generation as of an older block than the live one's (an operator's explicit choice). */
  allowOlderAsOf?: boolean;
}

/**
 * Publishes a computed (`ready`) generation: in ONE transaction, marks it published and (unless
 * `as: 'pinnable'`) switches the pointer the API reads. The pointer row is locked first, so two
 * publishers serialize. The pointer never moves backwards, in number or in time: a generation
 * numbered below the live one, or (without `allowOlderAsOf`) computed as of an older block, fails
 * and changes nothing. Not safe to call twice for the same generation (the second call fails).
 */
export async function publishGeneration(
  db: Kysely<Schema>,
  generation: number,
  options: PublishOptions = {},
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Lock the pointer row (or, before the first publish, the table) so racing publishers queue.
    await sql`lock table published_pointer in share row exclusive mode`.execute(trx);
    const current = await trx.selectFrom('published_pointer').select('generation').executeTakeFirst();
    const row = await trx
      .selectFrom('generations')
      .select(['status', 'as_of_block'])
      .where('generation', '=', generation)
      .executeTakeFirst();
    if (!row) throw new TallyError(`generation ${generation} does not exist`);
    if (row.status !== 'ready') {
      throw new TallyError(`generation ${generation} is ${row.status}, not ready to publish`);
    }
    const latest = (options.as ?? 'latest') === 'latest';
    if (latest && current && current.generation >= generation) {
      throw new TallyError(
        `generation ${current.generation} is already published; generation ${generation} would move the API backwards`,
      );
    }
    if (latest && current && !options.allowOlderAsOf) {
      const live = await trx
        .selectFrom('generations')
        .select('as_of_block')
        .where('generation', '=', current.generation)
        .executeTakeFirstOrThrow();
      if (BigInt(row.as_of_block) < BigInt(live.as_of_block)) {
        throw new TallyError(
          `generation ${generation} is as of block ${row.as_of_block}, older than block ${live.as_of_block} of the live generation ${current.generation}; ` +
            'the live generation never goes back in time',
        );
      }
    }
    await trx
      .updateTable('generations')
      .set({ status: 'published', published_at: options.publishedAt ?? new Date() })
      .where('generation', '=', generation)
      .execute();
    // A pinnable generation leaves the pointer where it is.
    if (latest && current) await trx.updateTable('published_pointer').set({ generation }).execute();
    else if (latest) await trx.insertInto('published_pointer').values({ generation }).execute();
    await options.beforeCommit?.();
  });
}

/** The generation the API serves, or null before the first publish. */
export async function publishedGeneration(db: Kysely<Schema>): Promise<number | null> {
  const row = await db.selectFrom('published_pointer').select('generation').executeTakeFirst();
  return row?.generation ?? null;
}

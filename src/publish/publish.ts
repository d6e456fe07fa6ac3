import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { TallyError } from '../lib/errors.ts';

/**
 * Publishes a computed (`ready`) generation: in ONE transaction, marks it published and switches
 * the pointer the API reads. The pointer row is locked first, so two publishers serialize; the
 * pointer never moves backwards: publishing a generation older than the live one fails and
 * changes nothing. Not safe to call twice for the same generation (the second call fails).
 */
export async function publishGeneration(
  db: Kysely<Schema>,
  generation: number,
  options: { publishedAt?: Date; beforeCommit?: () => void | Promise<void> } = {},
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Lock the pointer row (or, before the first publish, the table) so racing publishers queue.
    await sql`lock table published_pointer in share row exclusive mode`.execute(trx);
    const current = await trx.selectFrom('published_pointer').select('generation').executeTakeFirst();
    const row = await trx
      .selectFrom('generations')
      .select(['status'])
      .where('generation', '=', generation)
      .executeTakeFirst();
    if (!row) throw new TallyError(`generation ${generation} does not exist`);
    if (row.status !== 'ready') {
      throw new TallyError(`generation ${generation} is ${row.status}, not ready to publish`);
    }
    if (current && current.generation >= generation) {
      throw new TallyError(
        `generation ${current.generation} is already published; generation ${generation} would move the API backwards`,
      );
    }
    await trx
      .updateTable('generations')
      .set({ status: 'published', published_at: options.publishedAt ?? new Date() })
      .where('generation', '=', generation)
      .execute();
    if (current) {
      await trx.updateTable('published_pointer').set({ generation }).execute();
    } else {
      await trx.insertInto('published_pointer').values({ generation }).execute();
    }
    await options.beforeCommit?.();
  });
}

/** The generation the API serves, or null before the first publish. */
export async function publishedGeneration(db: Kysely<Schema>): Promise<number | null> {
  const row = await db.selectFrom('published_pointer').select('generation').executeTakeFirst();
  return row?.generation ?? null;
}

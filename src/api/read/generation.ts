import type { Kysely, Selectable } from 'kysely';
import type { GenerationsTable, Schema } from '../../db/schema.ts';

export type GenerationRow = Selectable<GenerationsTable>;

/** The generation's row when it is published (retained); null otherwise. Read-only. */
export async function readPublishedGeneration(db: Kysely<Schema>, generation: number): Promise<GenerationRow | null> {
  const row = await db
    .selectFrom('generations')
    .selectAll()
    .where('generation', '=', generation)
    .where('status', '=', 'published')
    .executeTakeFirst();
  return row ?? null;
}

/** Unix seconds (bigint or number) as ISO 8601 UTC. */
export function isoFromUnix(seconds: bigint | number): string {
  return new Date(Number(seconds) * 1000).toISOString();
}

/**
 * The window a generation serves, as ISO times: the one its row recorded when the method computed
 * it (src/lib/as-of.ts, windowOf), not computed again here.
 */
export function servedWindow(g: GenerationRow): { start: string; end: string } {
  return { start: isoFromUnix(g.window_start_ts), end: isoFromUnix(g.as_of_ts) };
}

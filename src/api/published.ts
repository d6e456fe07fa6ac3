import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

export interface PublishedGeneration {
  readonly generation: number;
  /** When it was published (falls back to generated_at, which the contract makes non-null). */
  readonly publishedAt: Date;
  readonly generatedAt: Date;
  /** Unix seconds of the generation's as-of block. */
  readonly asOfTs: number;
  /** The method version it was computed with (/llms.txt says what the latest one serves). */
  readonly methodVersion: string;
}

/** What is published right now: the pointer's generation and every retained published one. */
export interface PublishedState {
  /** The generation `published_pointer` names; null before the first publish. */
  readonly latest: PublishedGeneration | null;
  /** Published generations by number (the retained ones). */
  readonly retained: ReadonlyMap<number, PublishedGeneration>;
  /** Changes whenever latest or the retained set changes; part of cache keys. */
  readonly version: string;
}

/** How long a request waits for a pointer refresh before it is served from the last state. */
const MAX_WAIT_MS = 100;

/**
 * The published pointer, read at most once per `ttlMs` (one small query; concurrent callers share
 * it), so a newly published generation is served within `ttlMs` without a restart. Generations
 * are immutable, so everything else can be cached by generation number.
 */
export class PublishedPointer {
  #state: PublishedState | undefined;
  #loadedAt = 0;
  #pending: Promise<PublishedState> | undefined;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly ttlMs: number,
    /** Called when the state's version changes (a publish or a prune): drop what is gone. */
    private readonly onChange: (state: PublishedState) => void = () => {},
    /** Called when a refresh fails while an earlier state is kept. */
    private readonly onStale: (error: unknown) => void = () => {},
  ) {}

  /**
   * The current state; refreshed when older than the TTL. Safe to call concurrently.
   * - When a refresh fails (the database restarts), the last good state is kept and retried
   *   after the TTL, so cached responses of the last good generation keep being served (SPEC 6).
   * - A refresh that takes longer than `MAX_WAIT_MS` (the embedded database is busy with a run's
   *   transaction) does not hold requests: they get the last state meanwhile.
   */
  async current(): Promise<PublishedState> {
    const state = this.#state;
    if (state && performance.now() - this.#loadedAt < this.ttlMs) return state;
    const refresh = (this.#pending ??= this.#load()
      .catch((error: unknown) => {
        if (!this.#state) throw error;
        this.#loadedAt = performance.now();
        this.onStale(error);
        return this.#state;
      })
      .finally(() => (this.#pending = undefined)));
    if (!state) return refresh;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<PublishedState>((resolve) => (timer = setTimeout(() => resolve(state), MAX_WAIT_MS)));
    try {
      return await Promise.race([refresh, waited]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #load(): Promise<PublishedState> {
    const started = performance.now();
    const rows = await this.db
      .selectFrom('generations as g')
      .leftJoin('published_pointer as p', (join) => join.on(sql<boolean>`true`))
      .select([
        'g.generation',
        'g.published_at',
        'g.generated_at',
        'g.as_of_ts',
        'g.method_version',
        'p.generation as latest',
      ])
      .where('g.status', '=', 'published')
      .orderBy('g.generation')
      .execute();
    const retained = new Map<number, PublishedGeneration>();
    let latestNumber: number | null = null;
    for (const row of rows) {
      retained.set(row.generation, {
        generation: row.generation,
        publishedAt: row.published_at ?? row.generated_at,
        generatedAt: row.generated_at,
        asOfTs: Number(row.as_of_ts),
        methodVersion: row.method_version,
      });
      latestNumber = row.latest;
    }
    const latest = latestNumber === null ? null : (retained.get(latestNumber) ?? null);
    const state: PublishedState = {
      latest,
      retained,
      version: `${latest?.generation ?? '-'}:${[...retained.keys()].join(',')}`,
    };
    const changed = this.#state?.version !== state.version;
    this.#state = state;
    this.#loadedAt = started;
    if (changed) this.onChange(state);
    return state;
  }
}

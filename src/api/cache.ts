import { createHash } from 'node:crypto';

/** A serialised response body of one (generation, URL), with its validator. */
export interface CachedBody {
  readonly generation: number;
  /** UTF-8 bytes, encoded once: a hit writes them without re-encoding. */
  readonly body: Buffer;
  readonly etag: string;
  /** The body compressed, made on the first request that asks for it (then reused by every hit). */
  br?: Buffer;
  gzip?: Buffer;
  /**
   * The unix second the body was made in, for a body that holds the time (/meta's age_seconds):
   * it answers only within that second (isCurrent). Absent: valid for the whole generation.
   */
  readonly second?: number;
}

/** Whether a cached body may answer at `nowMs` (one made for a second answers only in that second). */
export function isCurrent(entry: CachedBody, nowMs: number): boolean {
  return entry.second === undefined || entry.second === Math.floor(nowMs / 1000);
}

/**
 * Response bodies kept in memory, least recently used first out, within a byte budget.
 * Generations are immutable, so an entry for (generation, URL) never goes stale; entries of
 * pruned generations are dropped by `retain`.
 */
export class ResponseCache {
  readonly #entries = new Map<string, CachedBody>();
  #bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): CachedBody | undefined {
    const hit = this.#entries.get(key);
    if (hit) {
      // Map keeps insertion order: re-inserting marks the entry most recently used.
      this.#entries.delete(key);
      this.#entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: CachedBody): void {
    const size = value.body.length + key.length;
    if (size > this.maxBytes) return;
    this.#drop(key);
    this.#entries.set(key, value);
    this.#bytes += size;
    for (const [k] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#drop(k);
    }
  }

  /** Drops every entry whose generation is not in `keep`. */
  retain(keep: ReadonlySet<number> | ReadonlyMap<number, unknown>): void {
    for (const [k, v] of this.#entries) if (!keep.has(v.generation)) this.#drop(k);
  }

  get size(): number {
    return this.#entries.size;
  }

  #drop(key: string): void {
    const old = this.#entries.get(key);
    if (!old) return;
    this.#entries.delete(key);
    this.#bytes -= old.body.length + key.length;
  }
}

/** A strong ETag naming one (generation, URL): `"<generation>-<22 base64url chars of sha256(url)>"`. */
export function etagFor(generation: number, url: string): string {
  return `"${generation}-${createHash('sha256').update(url).digest('base64url').slice(0, 22)}"`;
}

/** A strong ETag from the body itself (used where the body changes within a generation: /meta). */
export function etagOfBody(generation: number, body: string): string {
  return `"${generation}-${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
}

/** Whether an If-None-Match header value matches `etag` (weak comparison, as RFC 9110 asks for GET). */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === bare);
}

/**
 * `max-age` in seconds: until the next expected run (`publishedAt + cadence`), within
 * [0, cadence]. An overdue run gives 0 (revalidate every time).
 */
export function maxAgeSeconds(publishedAt: Date, cadenceSeconds: number, nowMs: number): number {
  const left = Math.floor((publishedAt.getTime() + cadenceSeconds * 1000 - nowMs) / 1000);
  return Math.max(0, Math.min(cadenceSeconds, left));
}

/**
 * A concurrency limit that adapts to a provider's rate limit (additive increase, multiplicative
 * decrease, as TCP does): it starts at `start` requests in flight, allows one more after each
 * `current` requests that went through without a rate-limit answer, up to `max`, and halves
 * (at least 1) when one was rate-limited. `rateLimited()` tells whether a task met a 429 (the
 * chain client counts them). Why not a fixed p-limit: a fixed 16 overruns a provider that allows
 * 8, and every 429 costs a backoff of its own; a fixed 4 leaves a faster provider idle.
 */
export class AdaptiveLimit {
  #current: number;
  #active = 0;
  #successes = 0;
  readonly #queue: (() => void)[] = [];

  constructor(
    readonly max: number,
    start = Math.min(max, 4),
  ) {
    this.#current = Math.max(1, Math.min(max, start));
  }

  /** Requests allowed in flight now. */
  get current(): number {
    return this.#current;
  }

  /** Runs `task` when a slot is free; `rateLimited(before)` says whether it met a rate limit. */
  async run<T>(task: () => Promise<T>, metRateLimit: () => boolean = () => false): Promise<T> {
    while (this.#active >= this.#current) await new Promise<void>((resolve) => this.#queue.push(resolve));
    this.#active++;
    try {
      return await task();
    } finally {
      this.#active--;
      if (metRateLimit()) {
        this.#current = Math.max(1, Math.floor(this.#current / 2));
        this.#successes = 0;
      } else if (++this.#successes >= this.#current && this.#current < this.max) {
        this.#current++;
        this.#successes = 0;
      }
      // Wake as many waiters as there are free slots now.
      for (let free = this.#current - this.#active; free > 0 && this.#queue.length > 0; free--) this.#queue.shift()!();
    }
  }
}

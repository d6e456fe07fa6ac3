import { describe, expect, it } from 'vitest';
import { AdaptiveLimit } from './adaptive-limit.ts';

/**
 * A simulated provider that allows `allowed` requests at once and rate-limits the rest; tasks
 * take `ms`. Returns the peak of requests in flight and how many were rate-limited.
 */
async function drive(limit: AdaptiveLimit, tasks: number, allowed: number, adapt = true, ms = 2) {
  let active = 0;
  let peak = 0;
  let limited = 0;
  const peaks: number[] = [];
  await Promise.all(
    Array.from({ length: tasks }, async () => {
      let hit = false;
      await limit.run(
        async () => {
          active++;
          peak = Math.max(peak, active);
          if (active > allowed) {
            hit = true;
            limited++;
          }
          await new Promise((r) => setTimeout(r, ms));
          active--;
        },
        () => adapt && hit,
      );
      peaks.push(limit.current);
    }),
  );
  return { peak, limited, peaks };
}

describe('AdaptiveLimit', () => {
  it('default: starts at 4 and grows to the maximum while nothing is rate-limited', async () => {
    const limit = new AdaptiveLimit(16);
    expect(limit.current).toBe(4);
    const { peak, limited } = await drive(limit, 400, 100);
    expect(limited).toBe(0);
    expect(limit.current).toBe(16);
    expect(peak).toBeLessThanOrEqual(16);
  });

  it('behavior: against a provider that allows 6 at once it settles at or below 6, and the 429s stop', async () => {
    const limit = new AdaptiveLimit(32);
    const first = await drive(limit, 300, 6);
    expect(first.limited).toBeGreaterThan(0); // it probed above 6
    expect(limit.current).toBeLessThanOrEqual(7);
    // far fewer rate limits than a fixed limit of 32 (which never learns) meets
    const fixed = await drive(new AdaptiveLimit(32, 32), 300, 6, false);
    expect(first.limited).toBeLessThan(fixed.limited / 3);
  });

  it('error: never below one request in flight', async () => {
    const limit = new AdaptiveLimit(8);
    await drive(limit, 50, 0); // every request rate-limited
    expect(limit.current).toBe(1);
  });
});

/**
 * A deterministic pseudo-random sequence from a numeric seed (mulberry32), for the benchmarks
 * whose generated data and queries must be the same in every run and process. (The demo chain's
 * PRNG, src/devchain/prng.ts, is the same generator seeded from a string.)
 */
export function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

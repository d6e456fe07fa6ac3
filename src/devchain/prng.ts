import { hexToNumber, keccak256, slice, stringToBytes } from 'viem';

/** A small deterministic PRNG (mulberry32): the same seed gives the same sequence everywhere. */
export interface Rng {
  /** uniform in [0, 1) */
  next(): number;
  /** uniform integer in [min, max] (inclusive) */
  int(min: number, max: number): number;
  /** one element, uniformly */
  pick<T>(items: readonly T[]): T;
  /** a new array, Fisher-Yates shuffled */
  shuffle<T>(items: readonly T[]): T[];
}

/** A PRNG seeded from the first 4 bytes of keccak256 of `seed` (UTF-8). */
export function createRng(seed: string): Rng {
  let state = hexToNumber(slice(keccak256(stringToBytes(seed)), 0, 4)) >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new RangeError('pick from an empty list');
      return items[int(0, items.length - 1)]!;
    },
    shuffle: <T>(items: readonly T[]): T[] => {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
  };
}

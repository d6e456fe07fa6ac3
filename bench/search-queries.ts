/**
 * The searches of the search benchmarks (bench/search.ts paced over HTTP, bench/search-sequential.ts
 * one at a time), drawn the same way by both so that their figures are of the same queries: 1 or 2
 * words drawn uniformly from the vocabulary `w<base36>x` (rare and common words alike), a category
 * one time in four, a limit from 1 to 50. Deterministic (mulberry32, seed 7), so runs compare.
 */
import { CATEGORIES } from '../src/lib/categories.ts';
import { mulberry32 } from './mulberry32.ts';

export const VOCABULARY = 300;

export const word = (i: number) => `w${i.toString(36)}x`;

export interface SearchQuery {
  words: string[];
  category: string | undefined;
  limit: number;
}

export function searchQueries(n: number): SearchQuery[] {
  const random = mulberry32(7);
  return Array.from({ length: n }, (_, i) => {
    const words = [word(1 + Math.floor(random() * VOCABULARY))];
    if (random() < 0.5) words.push(word(1 + Math.floor(random() * VOCABULARY)));
    const category = random() < 0.25 ? CATEGORIES[Math.floor(random() * CATEGORIES.length)] : undefined;
    return { words, category, limit: 1 + (i % 50) };
  });
}

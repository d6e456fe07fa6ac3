import { distance } from 'fastest-levenshtein';

/** How far a typo may be from what was meant: two edits (`serv` -> `serve`, `--rpc-ur` -> `--rpc-url`). */
const MAX_EDITS = 2;

/**
 * The known words closest to `typed`, at most MAX_EDITS edits away and fewer than half its
 * letters (so `--nope` suggests nothing rather than `--port`, two letters of four changed), ties
 * all returned in the order of `known`; or none. Leading dashes are not letters: `-x` is `x`.
 * Used for "did you mean" on a mistyped command or flag.
 */
export function closest(typed: string, known: readonly string[]): string[] {
  const letters = (word: string) => word.replace(/^-+/, '');
  const limit = Math.min(MAX_EDITS, Math.ceil(letters(typed).length / 2) - 1);
  let best = limit + 1;
  let found: string[] = [];
  for (const word of known) {
    const d = distance(letters(typed), letters(word));
    if (d < best) {
      best = d;
      found = [word];
    } else if (d === best) {
      found.push(word);
    }
  }
  return found;
}

/** `; did you mean x?` (or `x or y`) when something is close, else ''. */
export function didYouMean(typed: string, known: readonly string[]): string {
  const found = closest(typed, known);
  return found.length === 0 ? '' : `; did you mean ${found.join(' or ')}?`;
}

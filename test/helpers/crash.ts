import { TallyError } from '../../src/lib/errors.ts';

/** An injected crash, for tests of interrupted runs. */
export class InjectedCrash extends TallyError {}

/** A run hook (CycleOptions.hook) that crashes the run at `point` (e.g. `before:sync`, `compute:10_sellers`, `publish:commit`). */
export function crashAt(point: string): (p: string) => void {
  return (p) => {
    if (p === point) throw new InjectedCrash(`injected crash at ${point}`);
  };
}

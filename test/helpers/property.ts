/**
 * The method's property tests (test/method: cold, incremental, incremental3, partitions) run
 * `PROPERTY_RUNS` random histories each, per backend: 10 unless set, e.g. `PROPERTY_RUNS=100` for a
 * nightly or pre-release run (docs/development.md, "The test suite: where the time goes"). Their
 * checks that the histories were not vacuous (incremental3: every class met, an open day published)
 * need several histories: at 2 they failed by chance in one run of two, before this file as after.
 */
export const PROPERTY_RUNS = propertyRuns(process.env.PROPERTY_RUNS);

function propertyRuns(value: string | undefined): number {
  if (value === undefined || value === '') return 10;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`PROPERTY_RUNS must be a whole number of 1 or more, not ${value}`);
  return n;
}

/**
 * Their time limit: two minutes a history. A limit ends a hung test, it does not time a slow one
 * (speed lives in bench/). A history takes ~5 s on a quiet 2-core machine (incremental3's
 * properties: 47-55 s for 10), and the slowest seen was 54 s at load 10-15, where the vitest
 * default of this project (240 s for 10 histories) ended four of them that were still passing
 * (docs/benchmarks.md, "The suite's time between files (h-ci, 2026-11-28)").
 */
export const PROPERTY_TIMEOUT_MS = PROPERTY_RUNS * 120_000;

/** The options of a property test: `it('property: ...', PROPERTY_TEST, async () => { ... })`. */
export const PROPERTY_TEST = { timeout: PROPERTY_TIMEOUT_MS };

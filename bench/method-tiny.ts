/**
 * The method's fixed cost: a run over the hand-checked 3.0.0 fixture (a few dozen facts), cold
 * then RUNS steady runs at the same as-of, on PGlite and (with TEST_DATABASE_URL) Postgres. Small
 * histories, as in the property tests, pay this per method run whatever their size. Prints the
 * whole run's min / median / max ms, then each step's; with STATEMENTS=1 each statement of a step
 * runs as a step of its own (the same transaction, the same order), and the TOP slowest by median
 * are printed.
 *
 *   RUNS=20 TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/method-tiny.ts
 */
import { computeGeneration, loadMethodSteps, type MethodStep } from '../src/method/index.ts';
import { backends, freshDatabase } from '../test/helpers/db.ts';
import { ASOF, loadFixture3 } from '../test/method/setup.ts';
import { firstLine, statements } from './sql-statements.ts';

const RUNS = Number(process.env.RUNS ?? 20);
const TOP = Number(process.env.TOP ?? 25);
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor((s.length - 1) / 2)]!, max: s.at(-1)! };
};
const show = (xs: number[]) => {
  const { min, median, max } = stats(xs);
  return `${min.toFixed(1)}/${median.toFixed(1)}/${max.toFixed(1)}`;
};

const steps: MethodStep[] | undefined = process.env.STATEMENTS
  ? loadMethodSteps().flatMap((step) =>
      statements(step.sql).map((s, i) => ({ ...step, name: `${step.name}#${i + 1} ${firstLine(s, 90)}`, sql: s })),
    )
  : undefined;

for (const { backend } of backends()) {
  const t = await freshDatabase(backend);
  try {
    const { snapshotId } = await loadFixture3(t.db);
    const per = new Map<string, number[]>();
    const totals: number[] = [];
    for (let run = 0; run <= RUNS; run++) {
      let last = performance.now();
      const start = last;
      await computeGeneration(t.db, {
        runSeq: 1n,
        asOf: ASOF,
        catalogSnapshotId: snapshotId,
        sources: [],
        generatedAt: new Date('2026-01-01T12:05:00Z'),
        ...(steps ? { steps } : {}),
        afterStep: (step) => {
          const now = performance.now();
          if (run > 0) per.set(step, [...(per.get(step) ?? []), now - last]);
          last = now;
        },
      });
      const end = performance.now();
      if (run > 0) {
        totals.push(end - start);
        per.set('(commit)', [...(per.get('(commit)') ?? []), end - last]);
      }
    }
    const sum = [...per.values()].reduce((a, xs) => a + stats(xs).median, 0);
    console.log(
      `${backend}: whole run min/median/max ms ${show(totals)} over ${RUNS} steady runs; ${per.size} steps, medians sum ${sum.toFixed(0)}`,
    );
    const rows = [...per].sort((a, b) => stats(b[1]).median - stats(a[1]).median);
    for (const [step, xs] of steps ? rows.slice(0, TOP) : per) console.log(`  ${show(xs).padEnd(16)} ${step}`);
  } finally {
    await t.close();
  }
}

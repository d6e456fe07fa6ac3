/**
 * The method's fixed cost: a run over the hand-checked 3.0.0 fixture (a few dozen facts), cold
 * then RUNS steady runs at the same as-of, on PGlite and (with TEST_DATABASE_URL) Postgres; per
 * step min / median / max ms over the steady runs. Small histories, as in the property tests,
 * pay this per method run whatever their size.
 *
 *   RUNS=20 TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/method-tiny.ts
 */
import { computeGeneration } from '../src/method/index.ts';
import { backends, freshDatabase } from '../test/helpers/db.ts';
import { ASOF, loadFixture3 } from '../test/method/setup.ts';

const RUNS = Number(process.env.RUNS ?? 20);
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(0)}/${s[Math.floor((s.length - 1) / 2)]!.toFixed(0)}/${s.at(-1)!.toFixed(0)}`;
};

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
        afterStep: (step) => {
          const now = performance.now();
          if (run > 0) per.set(step, [...(per.get(step) ?? []), now - last]);
          last = now;
        },
      });
      if (run > 0) totals.push(performance.now() - start);
    }
    console.log(`${backend}: whole run min/median/max ms ${stats(totals)} over ${RUNS} steady runs`);
    for (const [step, xs] of per) console.log(`  ${step.padEnd(20)} ${stats(xs)}`);
  } finally {
    await t.close();
  }
}

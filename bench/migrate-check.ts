/**
 * Benchmark: `run`'s first stage, migrate (src/db/migrate.ts) on a database with every migration
 * applied (every run but the first after an upgrade), optionally against another checkout's
 * migrate (REFERENCE), in alternating order, ROUNDS rounds. A scratch schema of the database is made
 * and migrated first (by this tree's migrate), then dropped. Each timed call must apply nothing.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_x npx tsx bench/migrate-check.ts
 *   npx tsx bench/migrate-check.ts   # embedded PGlite (in memory)
 *   ROUNDS=20 ...   # rounds (default 10)
 *   REFERENCE=/path/to/main ...   # also time that checkout's migrate (its src/db/migrate.ts)
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Kysely } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 10);
type MigrateForm = (db: Kysely<any>, migrations?: undefined, options?: { copyFacts: false }) => Promise<number[]>;

async function referenceForm(): Promise<MigrateForm | undefined> {
  const root = process.env.REFERENCE;
  if (!root) return undefined;
  const module = (await import(pathToFileURL(resolve(root, 'src/db/migrate.ts')).href)) as { migrate: MigrateForm };
  return module.migrate;
}

const url = process.env.BENCH_DATABASE_URL;
const scratch = url ? await createScratchSchema(url, 'bench_migrate_check') : undefined;
const database = await openDatabase(scratch ? { databaseUrl: scratch.url } : { dataDir: null });
try {
  await migrate(database.db);
  const forms: [string, MigrateForm][] = [['this tree', migrate]];
  const reference = await referenceForm();
  if (reference) forms.push(['reference', reference]);
  const ms: Record<string, number[]> = Object.fromEntries(forms.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, form] of round % 2 === 0 ? forms : [...forms].reverse()) {
      const started = performance.now();
      const applied = await form(database.db, undefined, { copyFacts: false });
      ms[name]!.push(performance.now() - started);
      if (applied.length > 0) throw new Error(`${name} applied ${applied.join(', ')}: the database was migrated`);
    }
  }
  const summary = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return { min: +s[0]!.toFixed(1), median: +s[Math.floor(s.length / 2)]!.toFixed(1), max: +s.at(-1)!.toFixed(1) };
  };
  console.log(
    JSON.stringify(
      {
        backend: url ? 'postgres' : 'pglite',
        rounds: ROUNDS,
        ms: Object.fromEntries(Object.entries(ms).map(([n, xs]) => [n, summary(xs)])),
        ...(reference ? { ratioPerRound: ms['this tree']!.map((x, i) => +(x / ms['reference']![i]!).toFixed(3)) } : {}),
      },
      null,
      2,
    ),
  );
} finally {
  await database.close();
  await scratch?.drop();
}

/**
 * The cost of `sort=external_revenue` on /api/v1/rankings (docs/benchmarks.md, "Rankings by
 * external revenue"): one page read (a response-cache miss) of the ranking in its default order
 * and by external revenue, first page and a deep cursor, on real Postgres. The default order reads
 * the published `rank`; the external order numbers the generation's ranked sellers with a window
 * function on each read (src/api/read/rankings.ts), so its cost grows with the ranked sellers.
 *
 *   BENCH_DATABASE_URL=postgres://... RANKED=5000 npx tsx bench/rankings-sort.ts
 *
 * The generation is bench/api's (bench/api/seed.ts: RANKED ranked sellers of as many, 2.5 listings
 * each), made a 3.0.0 one with a pseudo-random external revenue per seller. Creates and drops its
 * own schema. Prints min / median / max milliseconds of RUNS (default 30) reads per case,
 * interleaved (one read of each case per round).
 */
import os from 'node:os';
import { sql } from 'kysely';
import { readRankings } from '../src/api/read/rankings.ts';
import { readPublishedGeneration } from '../src/api/read/generation.ts';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';
import { encodeRankCursor } from '../src/api/cursor.ts';
import { seedBenchGeneration } from './api/seed.ts';

const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!base) {
  console.error(
    'set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a Postgres database the benchmark may create a schema in',
  );
  process.exit(1);
}
const RANKED = Number(process.env.RANKED ?? 5000);
const RUNS = Number(process.env.RUNS ?? 30);

const scratch = await createScratchSchema(base, 'bench_rank_sort');
try {
  const database = await openDatabase({ databaseUrl: scratch.url, maxConnections: 2 });
  try {
    await migrate(database.db);
    await seedBenchGeneration(database.db, { listings: Math.round(RANKED * 2.5), sellers: RANKED, ranked: RANKED });
    // A 3.0.0 generation: external revenue a pseudo-random share (0-99 %) of each seller's revenue.
    await sql`update generations set method_version = '3.0.0' where generation = 1`.execute(database.db);
    await sql`update gen_sellers
                 set external_revenue_30d_micro = verified_revenue_30d_micro * ((rank::int8 * 7919) % 100) / 100,
                     external_payments_30d = payments_30d, external_payers_30d = payers_30d
               where generation = 1`.execute(database.db);
    await sql`analyze gen_sellers`.execute(database.db);
    const g = (await readPublishedGeneration(database.db, 1))!;
    const deep = encodeRankCursor(RANKED - 100);
    const cases = {
      'default, first page': () => readRankings(database.db, g, { limit: 100 }),
      'default, deep cursor': () => readRankings(database.db, g, { limit: 100, cursor: deep }),
      'external, first page': () => readRankings(database.db, g, { limit: 100, sort: 'external_revenue' }),
      'external, deep cursor': () =>
        readRankings(database.db, g, {
          limit: 100,
          sort: 'external_revenue',
          cursor: encodeRankCursor(RANKED - 100, 'external_revenue'),
        }),
    };
    const times = new Map<string, number[]>(Object.keys(cases).map((k) => [k, []]));
    for (const read of Object.values(cases)) await read(); // warm-up
    for (let r = 0; r < RUNS; r++) {
      for (const [name, read] of Object.entries(cases)) {
        const t = performance.now();
        const page = await read();
        times.get(name)!.push(performance.now() - t);
        if (page.count !== 100) throw new Error(`${name}: ${page.count} rows`);
      }
    }
    console.log(
      `rankings page reads, ${RANKED} ranked sellers, ${RUNS} runs; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    for (const [name, list] of times) {
      const sorted = [...list].sort((a, b) => a - b);
      const med = sorted[Math.floor(sorted.length / 2)]!;
      console.log(
        `${name.padEnd(24)} min ${sorted[0]!.toFixed(2)}  median ${med.toFixed(2)}  max ${sorted.at(-1)!.toFixed(2)} ms`,
      );
    }
  } finally {
    await database.close();
  }
} finally {
  await scratch.drop();
}

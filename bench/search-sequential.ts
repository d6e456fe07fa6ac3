/**
 * Search service times, one query at a time (docs/benchmarks.md, "## Search"): the queries of
 * bench/search.ts (same vocabulary, same draws), each answered by readDirectory in this process
 * against a schema kept by `KEEP=1 npx tsx bench/search.ts` (its name on stderr), so the time of
 * each query is its own, without the queueing of the paced run. With BASE=<another checkout>, the
 * same queries are also answered by that checkout's src/api/read/listings.ts, alternating per
 * query, and any query whose page differs between the two is printed.
 *
 *   SCHEMA=bench_search_xxxx BENCH_DATABASE_URL=postgres://... npx tsx bench/search-sequential.ts
 *   (N queries, default 4000; REPS timings of each, the least kept, default 2; BASE=/path)
 */
import { openDatabase } from '../src/db/index.ts';
import { readDirectory } from '../src/api/read/listings.ts';
import { readPublishedGeneration } from '../src/api/read/generation.ts';
import { searchQueries } from './search-queries.ts';

const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!base || !process.env.SCHEMA) {
  console.error('set BENCH_DATABASE_URL and SCHEMA (a schema kept by KEEP=1 npx tsx bench/search.ts)');
  process.exit(1);
}
const url = new URL(base);
url.searchParams.set('options', `-c search_path=${process.env.SCHEMA}`);
const database = await openDatabase({ databaseUrl: url.toString(), maxConnections: 1 });
const g = (await readPublishedGeneration(database.db, 1))!;

const N = Number(process.env.N ?? 4000);
const queries = searchQueries(N).map(({ words, category, limit }) => ({ q: words.join(' '), category, limit }));

const readers: Record<string, typeof readDirectory> = { this: readDirectory };
if (process.env.BASE)
  readers.base = (
    (await import(`${process.env.BASE}/src/api/read/listings.ts`)) as { readDirectory: typeof readDirectory }
  ).readDirectory;
const REPS = Number(process.env.REPS ?? 2);
const times: Record<string, number[]> = {};
const slowest: { ms: number; reader: string; query: (typeof queries)[number] }[] = [];
let differ = 0;
for (const query of queries) {
  const pages: Record<string, string> = {};
  for (const [name, read] of Object.entries(readers)) {
    let best = Infinity;
    for (let r = 0; r < REPS; r++) {
      const t0 = performance.now();
      const page = await read(database.db, g, query);
      best = Math.min(best, performance.now() - t0);
      pages[name] = JSON.stringify([page.listings.map((l) => l.listing_id), page.next_cursor]);
    }
    (times[name] ??= []).push(best);
    slowest.push({ ms: best, reader: name, query });
  }
  if (pages.base !== undefined && pages.base !== pages.this) {
    differ++;
    console.log('differs:', JSON.stringify(query));
  }
}
const result: Record<string, unknown> = { queries: N, reps: REPS, differ: readers.base ? differ : null };
for (const [name, list] of Object.entries(times)) {
  const s = [...list].sort((a, b) => a - b);
  const q = (p: number) => +s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(2);
  result[name] = {
    p50_ms: q(0.5),
    p90_ms: q(0.9),
    p99_ms: q(0.99),
    max_ms: q(1),
    over_10_ms: s.filter((v) => v > 10).length,
    sum_ms: Math.round(s.reduce((a, b) => a + b, 0)),
  };
}
console.log(JSON.stringify(result, null, 2));
for (const x of slowest.sort((a, b) => b.ms - a.ms).slice(0, 10))
  console.error(x.ms.toFixed(1), x.reader, JSON.stringify(x.query));
await database.close();

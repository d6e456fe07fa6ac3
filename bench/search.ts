/**
 * Search benchmark (docs/benchmarks.md, "## Search"): `GET /api/v1/sellers?q=` on a
 * 50,000-listing generation on real Postgres, the API in its own process (as `serve` runs it),
 * at a paced, open-loop SEARCH_RATE requests/s (default 200) for SEARCH_SECONDS (default 20).
 * Every request is a new URL (random words, category and limit), so each one misses the response
 * cache and runs its query. Latency is measured from the moment a request was due, so a slow
 * answer delays the measurement of the ones queued behind it (no coordinated omission).
 *
 *   BENCH_DATABASE_URL=postgres://... npx tsx bench/search.ts      (falls back to TEST_DATABASE_URL)
 *
 * Listing texts: the bench generation of bench/api (bench/api/seed.ts), with titles and
 * descriptions rewritten from a 300-word vocabulary whose word frequencies follow Zipf's law, so
 * a query's matches range from a handful of listings to several thousand. Creates and drops its
 * own schema. Results: stdout and bench/out/search.json.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';
import { migrate } from '../src/db/migrate.ts';
import { projectRoot } from '../src/lib/paths.ts';
import { searchQueries, VOCABULARY } from './search-queries.ts';
import { seedBenchGeneration } from './api/seed.ts';

const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!base) {
  console.error(
    'set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a Postgres database the benchmark may create a schema in',
  );
  process.exit(1);
}
// KEEP=1 keeps the schema (its name on stderr) to look at query plans afterwards.
// DERIVED=1 serves the generation as one computed since migration 0018 is: its listing rows
// derived on read from the catalog snapshot and gen_sellers, not stored in gen_listings_fixed.
const DERIVED = process.env.DERIVED === '1';
const RATE = Number(process.env.SEARCH_RATE ?? 200);
const SECONDS = Number(process.env.SEARCH_SECONDS ?? 20);
const LISTINGS = 50_000;

const scratch = await createScratchSchema(base, 'bench_search');
const stops: (() => Promise<void>)[] = [];
try {
  const database = await openDatabase({ databaseUrl: scratch.url, maxConnections: 2 });
  stops.push(() => database.close());
  await migrate(database.db);
  await seedBenchGeneration(database.db, { listings: LISTINGS, sellers: 20_000, ranked: 5_000 });
  // Zipf texts: word k (1-based) is drawn with probability proportional to 1/k; a title has 3
  // words, a description 12.
  const zipf = `'w' || to_base36(ceil(exp(random() * ln(${VOCABULARY} + 1)) - 1)::int) || 'x'`;
  await sql
    .raw(
      `
    create function to_base36(n int) returns text language sql immutable as $$
      with recursive d(n, s) as (select n, '' union all select n / 36, substr('0123456789abcdefghijklmnopqrstuvwxyz', n % 36 + 1, 1) || s from d where n > 0)
      select case when $1 = 0 then '0' else (select s from d where n = 0) end $$;
    select setseed(0.42);
    update catalog_listings
       set title = (select string_agg(${zipf}, ' ') from generate_series(1, 3) g where g > 0 * length(listing_id)),
           description = (select string_agg(${zipf}, ' ') from generate_series(1, 12) g where g > 0 * length(listing_id))
     where snapshot_id = (select catalog_snapshot_id from generations where generation = 1);
    update gen_listings_fixed l
       set title = c.title, description = c.description
      from catalog_listings c
     where l.generation = 1
       and c.snapshot_id = (select catalog_snapshot_id from generations where generation = 1)
       and c.listing_id = l.listing_id;
    -- catalog rows are never updated in production; after this rewrite the postings are built
    -- again as the insert trigger (migration 0039) builds them.
    delete from catalog_listing_words;
    insert into catalog_listing_words (snapshot_id, word, score, listing_id)
    select c.snapshot_id, w.lexeme, search_score(w.weights), c.listing_id
      from catalog_listings c, unnest(c.search_doc) w
     where c.snapshot_id = (select catalog_snapshot_id from generations where generation = 1);
    delete from catalog_word_bands;
    insert into catalog_word_bands (snapshot_id, word, score, listings)
    select snapshot_id, word, score, count(*) from catalog_listing_words group by 1, 2, 3;`,
    )
    .execute(database.db);
  if (DERIVED)
    await sql
      .raw('delete from gen_listings_fixed; update generations set listings_derived = true where generation = 1')
      .execute(database.db);
  // The rewrite leaves dead rows and pages not marked all-visible, which production's insert-only
  // snapshots do not have once autovacuum has seen them: vacuum them as it would.
  await sql
    .raw('vacuum analyze catalog_listings, gen_listings_fixed, catalog_listing_words, catalog_word_bands')
    .execute(database.db);
  const counts = await sql<{ w: string; n: number }>`
    select w, count(*)::int as n from catalog_listings, unnest(tsvector_to_array(search_doc)) w where snapshot_id = (select catalog_snapshot_id from generations where generation = 1) and w like 'w%x' group by w order by n desc`.execute(
    database.db,
  );
  console.error(
    `seeded ${LISTINGS} listings; listings per word: most ${counts.rows[0]?.n}, median ${counts.rows[Math.floor(counts.rows.length / 2)]?.n}, least ${counts.rows.at(-1)?.n}`,
  );

  const server = spawn(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'bench/api/server.ts')], {
    env: { ...process.env, BENCH_API_DATABASE_URL: scratch.url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  stops.push(() => new Promise((resolve) => (server.once('exit', () => resolve()), server.kill('SIGTERM'))));
  const line = await new Promise<string>((resolve) =>
    readline.createInterface({ input: server.stdout! }).once('line', resolve),
  );
  const port = (JSON.parse(line) as { port: number }).port;

  // Queries: 1 or 2 words drawn uniformly from the vocabulary (rare and common words alike), a
  // category one time in four, a limit from 1 to 50: every URL differs, every request is a miss.
  const urls = searchQueries(RATE * SECONDS + RATE * 2).map(
    ({ words, category, limit }) =>
      `/api/v1/sellers?q=${words.join('+')}${category ? `&category=${category}` : ''}&limit=${limit}`,
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const request = (url: string) =>
    new Promise<{ status: number; count: number }>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: url, agent }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              count: res.statusCode === 200 ? (JSON.parse(body) as { count: number }).count : 0,
            }),
          );
        })
        .on('error', reject);
    });

  /** Sends urls at `rate` per second for `seconds`, open loop; latencies in ms from each due time. */
  async function paced(list: string[], rate: number, seconds: number) {
    const latencies: number[] = [];
    let errors = 0;
    let empty = 0;
    const start = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < rate * seconds; i++) {
      const due = start + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(
        request(list[i]!).then(
          (res) => {
            latencies.push(performance.now() - due);
            if (res.status !== 200) errors++;
            else if (res.count === 0) empty++;
          },
          () => void errors++,
        ),
      );
    }
    await Promise.all(pending);
    const sorted = latencies.sort((a, b) => a - b);
    const q = (p: number) => +sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(2);
    return {
      requests: rate * seconds,
      achieved_rps: +((rate * seconds * 1000) / (performance.now() - start)).toFixed(1),
      p50_ms: q(0.5),
      p90_ms: q(0.9),
      p99_ms: q(0.99),
      max_ms: q(1),
      errors,
      empty,
    };
  }

  await paced(urls.slice(RATE * SECONDS), RATE, 2); // warm-up: JIT, connections, Postgres caches
  const result = {
    listings: LISTINGS,
    derived: DERIVED,
    rate: RATE,
    seconds: SECONDS,
    cores: os.cpus().length,
    node: process.version,
    ...(await paced(urls, RATE, SECONDS)),
  };
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(path.join(projectRoot, 'bench/out'), { recursive: true });
  writeFileSync(path.join(projectRoot, 'bench/out/search.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  if (process.env.KEEP) console.error(`kept schema ${scratch.name}`);
  else await scratch.drop();
}

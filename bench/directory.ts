/**
 * The cost of one page of the seller directory (GET /api/v1/directory, src/api/read/directory.ts)
 * at SELLERS sellers (default 50,000), on real Postgres, with and without the order indexes
 * (migration 0043's (generation, key desc, seller_no); docs/benchmarks.md, "Seller directory"):
 * the first page and a deep page (a cursor at seller DEEP of the order, default 40,000) of each
 * order, a filtered first page and a search.
 *
 *   BENCH_DATABASE_URL=postgres://... npx tsx bench/directory.ts   (SELLERS=, DEEP=, RUNS=, CASES=, BASE=)
 *
 * Two scratch schemas hold the same generation (bench/api/seed.ts, made a 3.0.0 one with an
 * external revenue, classes, evidence states and farm flags per seller); in one, the four indexes
 * are dropped ("before"). Reads alternate between the two, one read of each
 * case per round, so both sides see the same load. A read is what a response-cache miss costs:
 * the page, its total and its display names. Prints min / median / max milliseconds per case.
 *
 * CASES=<regular expression>: only the cases whose name matches (e.g. CASES=typical).
 * BASE=<another checkout>: compare code and layouts: "before" is that checkout's
 * readSellerDirectory on a schema with migration 0037's four indexes, tied by seller_address,
 * instead of 0043's, tied by seller_no (the layout before 0043; a BASE after 0043 needs
 * BASE_NUMBERS=1: both schemas then keep 0043's), "after" this one's; the two pages of each case
 * are compared once, and a difference stops the run.
 */
import { isDeepStrictEqual } from 'node:util';
import os from 'node:os';
import { sql, type Kysely } from 'kysely';
import { directoryFilterDigest, encodeDirectoryCursor, type DirectorySort } from '../src/api/cursor.ts';
import { readSellerDirectory, type SellerDirectoryParams } from '../src/api/read/directory.ts';
import { readPublishedGeneration, type GenerationRow } from '../src/api/read/generation.ts';
import type { Schema } from '../src/db/schema.ts';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';
import { seedBenchGeneration } from './api/seed.ts';

const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!base) {
  console.error(
    'set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a Postgres database the benchmark may create schemas in',
  );
  process.exit(1);
}
const SELLERS = Number(process.env.SELLERS ?? 50_000);
const DEEP = Number(process.env.DEEP ?? 40_000);
const RUNS = Number(process.env.RUNS ?? 15);
const CASES = process.env.CASES ? new RegExp(process.env.CASES) : null;
type Reader = typeof readSellerDirectory;
const baseReader = process.env.BASE
  ? ((await import(`${process.env.BASE}/src/api/read/directory.ts`)) as { readSellerDirectory: Reader })
      .readSellerDirectory
  : null;

const KEY: Record<DirectorySort, string> = {
  verified_revenue: 'verified_revenue_30d_micro',
  external_revenue: "coalesce(external_revenue_30d_micro, '-1'::numeric)",
  payments: 'payments_30d',
  payers: 'payers_30d',
};

const INDEXES = {
  verified_revenue: 'gen_sellers_by_revenue',
  external_revenue: 'gen_sellers_by_external',
  payments: 'gen_sellers_by_payments',
  payers: 'gen_sellers_by_payers',
};

/** The schema's order indexes: 0043's (ties by seller_no), 0037's (by seller_address), or none. */
async function build(db: Kysely<Schema>, indexes: 'numbers' | 'addresses' | 'none') {
  await migrate(db);
  await seedBenchGeneration(db, { listings: Math.round(SELLERS * 2.5), sellers: SELLERS, ranked: SELLERS / 2 });
  // A 3.0.0 generation: a pseudo-random external share, classes, evidence states and farm flags.
  await sql`update generations set method_version = '3.0.0' where generation = 1`.execute(db);
  await sql`update gen_sellers
               set external_revenue_30d_micro = verified_revenue_30d_micro * ((h::int8 * 7919) % 100) / 100,
                   external_payments_30d = payments_30d, external_payers_30d = payers_30d,
                   class_payments_30d = array[h % 2, h % 3, h % 5, h % 7]::int4[],
                   evidence_state = case when rank is not null then 'verified' when h % 4 = 0 then 'not_observed' else 'insufficient' end,
                   farm_flag = (h % 20 = 0)::int
              from (select seller_address as a, ('x' || substr(md5(seller_address), 1, 7))::bit(28)::int as h from gen_sellers) x
             where generation = 1 and seller_address = x.a`.execute(db);
  if (indexes !== 'numbers')
    for (const index of Object.values(INDEXES)) await sql`drop index ${sql.ref(index)}`.execute(db);
  if (indexes === 'addresses')
    for (const [sort, index] of Object.entries(INDEXES))
      await sql`create index ${sql.ref(index)} on gen_sellers
                  (generation, (${sql.raw(KEY[sort as DirectorySort])}) desc, seller_address)`.execute(db);
  await sql`vacuum analyze gen_sellers`.execute(db);
}

/** The seller at place `n` (from 1) of `sort` in generation 1. */
async function sellerAt(db: Kysely<Schema>, sort: DirectorySort, n: number): Promise<string> {
  const { rows } = await sql<{ a: string }>`select seller_address as a from gen_sellers where generation = 1
      order by ${sql.raw(KEY[sort])} desc, seller_address offset ${n - 1} limit 1`.execute(db);
  return rows[0]!.a;
}

const after = await createScratchSchema(base, 'bench_dir_after');
const before = await createScratchSchema(base, 'bench_dir_before');
try {
  const dbs = {
    before: await openDatabase({ databaseUrl: before.url, maxConnections: 2 }),
    after: await openDatabase({ databaseUrl: after.url, maxConnections: 2 }),
  };
  const readers: Record<'before' | 'after', Reader> = {
    before: baseReader ?? readSellerDirectory,
    after: readSellerDirectory,
  };
  try {
    await build(dbs.before.db, !baseReader ? 'none' : process.env.BASE_NUMBERS ? 'numbers' : 'addresses');
    await build(dbs.after.db, 'numbers');
    const g: GenerationRow = (await readPublishedGeneration(dbs.after.db, 1))!;
    const cases: [string, SellerDirectoryParams][] = [];
    for (const sort of ['verified_revenue', 'external_revenue', 'payments'] as const) {
      cases.push([`${sort}, first page`, { sort, limit: 50 }]);
      const cursor = encodeDirectoryCursor(
        sort,
        directoryFilterDigest(sort, {}),
        await sellerAt(dbs.after.db, sort, DEEP),
      );
      cases.push([`${sort}, page at ${DEEP}`, { sort, limit: 50, cursor }]);
    }
    cases.push(['category + state, first page', { category: 'inference', evidence_state: 'verified', limit: 50 }]);
    cases.push(['farm_flag=1, first page', { farm_flag: 1, limit: 50 }]);
    cases.push(['q=typical (every seller)', { q: 'typical', limit: 50 }]);
    cases.push(['q=listing 4242 (one seller)', { q: 'listing 4242', limit: 50 }]);
    cases.push([
      'q=0x00000000000000000000000000000000000004 (prefix)',
      { q: '0x00000000000000000000000000000000000004', limit: 50 },
    ]);
    if (CASES) cases.splice(0, cases.length, ...cases.filter(([name]) => CASES.test(name)));
    const times = new Map<string, number[]>(
      cases.flatMap(([name]) => [
        [`${name} | before`, []],
        [`${name} | after`, []],
      ]),
    );
    const read = (side: 'before' | 'after', p: SellerDirectoryParams) =>
      dbs[side].db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute((trx) => readers[side](trx, g, p));
    for (const [name, p] of cases) {
      const pages = [await read('before', p), await read('after', p)]; // warm-up
      if (baseReader && !isDeepStrictEqual(pages[0], pages[1])) throw new Error(`${name}: the pages differ`);
    }
    for (let r = 0; r < RUNS; r++) {
      for (const [name, p] of cases) {
        for (const side of r % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const)) {
          const t = performance.now();
          const page = await read(side, p);
          times.get(`${name} | ${side}`)!.push(performance.now() - t);
          if (page.count === 0) throw new Error(`${name}: no rows`);
        }
      }
    }
    console.log(
      `seller directory page reads, ${SELLERS} sellers, ${RUNS} runs${baseReader ? `, before = ${process.env.BASE}` : ''}; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    for (const [name, list] of times) {
      const sorted = [...list].sort((a, b) => a - b);
      console.log(
        `${name.padEnd(44)} min ${sorted[0]!.toFixed(1)}  median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)}  max ${sorted.at(-1)!.toFixed(1)} ms`,
      );
    }
  } finally {
    await dbs.before.close();
    await dbs.after.close();
  }
} finally {
  await before.drop();
  await after.drop();
}

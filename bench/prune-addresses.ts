/**
 * Benchmark: the address prune (src/publish/prune.ts, pruneAddresses), optionally against another
 * checkout's (REFERENCE), on a schema bench/method.ts kept (KEEP=1). Each round runs each form, in
 * alternating order, each in a transaction of its own that first drops the
 * oldest partition of `transfers`, `batch_claims` and `blocks` (as the weekly prune does, so the
 * addresses only that week named are deleted), adds UNNAMED addresses nothing names, and is then
 * rolled back: the kept schema is never changed. Both forms must delete the same number of addresses (else exit 1).
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_x REUSE=bench_method_1a2b3c4d npx tsx bench/prune-addresses.ts
 *   DATA_DIR=/copy/of/a/kept/run npx tsx bench/prune-addresses.ts   # embedded PGlite
 *   ROUNDS=5 ...   # rounds (default 3)
 *   UNNAMED=10000 ...   # addresses nothing names, added before each prune (default 10,000)
 *   REFERENCE=/path/to/main ...   # also time that checkout's pruneAddresses (its src/publish/prune.ts)
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sql, type Transaction } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import type { Schema } from '../src/db/schema.ts';
import { pruneAddresses } from '../src/publish/prune.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const UNNAMED = Number(process.env.UNNAMED ?? 10000);

type PruneForm = (trx: Transaction<Schema>) => Promise<number>;

/**
 * The other arm: pruneAddresses of another checkout (REFERENCE=<its root>, e.g. main's), so that a
 * form written in this tree's src is timed against that tree's, as bench/method.ts's COLD_AB_SQL
 * pairs the method's SQL. Without REFERENCE only this tree's form is timed.
 */
async function referenceForm(): Promise<PruneForm | undefined> {
  const root = process.env.REFERENCE;
  if (!root) return undefined;
  const module = (await import(pathToFileURL(resolve(root, 'src/publish/prune.ts')).href)) as {
    pruneAddresses: PruneForm;
  };
  return module.pruneAddresses;
}

class Rollback extends Error {}

async function main() {
  const url = process.env.BENCH_DATABASE_URL;
  let databaseUrl: string | undefined;
  if (url) {
    if (!process.env.REUSE) throw new Error('with BENCH_DATABASE_URL, REUSE names the kept schema');
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${process.env.REUSE}`);
    databaseUrl = u.toString();
  } else if (!process.env.DATA_DIR) throw new Error('BENCH_DATABASE_URL and REUSE, or DATA_DIR');
  const database = await openDatabase({ databaseUrl, dataDir: process.env.DATA_DIR ?? null });
  const { db } = database;
  const reference = await referenceForm();
  const forms: Partial<Record<'reference' | 'src', PruneForm>> = { src: pruneAddresses, reference };
  const times = { reference: [] as number[], src: [] as number[] };
  const counts = { reference: [] as number[], src: [] as number[] };
  try {
    const { rows: sizes } = await sql<{ n: string }>`select count(*)::text as n from addresses`.execute(db);
    console.error(`addresses: ${sizes[0]!.n}`);
    for (let round = 0; round < ROUNDS; round++) {
      const both: ('reference' | 'src')[] = round % 2 === 0 ? ['reference', 'src'] : ['src', 'reference'];
      for (const form of both.filter((f) => forms[f] !== undefined)) {
        await db
          .transaction()
          .execute(async (trx) => {
            // the oldest range of the fact tables, dropped as dropFactPartitions does
            const { rows } = await sql<{ parent: string; name: string }>`
              with parts as (
                select p.relname as parent, c.relname as name, substring(c.relname from '_from_(\\d+)$')::int8 as first
                  from pg_inherits h join pg_class c on c.oid = h.inhrelid join pg_class p on p.oid = h.inhparent
                 where p.relname in ('transfers', 'batch_claims', 'blocks')
                   and p.relnamespace = (select oid from pg_namespace where nspname = current_schema()))
              select parent, name from parts where first = (select min(first) from parts)`.execute(trx);
            for (const r of rows) {
              await sql`alter table ${sql.table(r.parent)} detach partition ${sql.table(r.name)}`.execute(trx);
              await sql`drop table ${sql.table(r.name)}`.execute(trx);
            }
            // and UNNAMED addresses nothing names, as the payers only a dropped week paid (in the
            // bench's history every payer pays every week): the forms must delete them, not only
            // find that every address is named
            await sql`insert into addresses (address)
                      select decode(lpad(to_hex(4000000000 + g), 40, '0'), 'hex') from generate_series(1, ${UNNAMED}) g`.execute(
              trx,
            );
            const t = performance.now();
            const n = await forms[form]!(trx);
            times[form].push((performance.now() - t) / 1000);
            counts[form].push(n);
            console.error(
              `round ${round + 1} ${form}: ${times[form].at(-1)!.toFixed(2)} s, ${n} addresses (dropped ${rows.map((r) => r.name).join(', ')})`,
            );
            throw new Rollback();
          })
          .catch((e: unknown) => {
            if (!(e instanceof Rollback)) throw e;
          });
      }
    }
  } finally {
    await database.close();
  }
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const median = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    return `${s[0]!.toFixed(2)} / ${median.toFixed(2)} / ${s.at(-1)!.toFixed(2)} s`;
  };
  if (reference) console.log(`reference (${process.env.REFERENCE}): min/median/max ${stats(times.reference)}`);
  console.log(`src's pruneAddresses: min/median/max ${stats(times.src)}`);
  const all = new Set([...counts.reference, ...counts.src]);
  if (all.size !== 1) {
    console.error(`the forms deleted different numbers of addresses: ${JSON.stringify(counts)}`);
    process.exit(1);
  }
  console.log(`addresses deleted by each: ${[...all][0]}`);
}

await main();

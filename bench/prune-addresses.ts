/**
 * Benchmark: the address prune (src/publish/prune.ts, pruneAddresses) against the form before it
 * (one `not exists` per referring column), on a schema bench/method.ts kept (KEEP=1). Each round
 * runs both forms, in alternating order, each in a transaction of its own that first drops the
 * oldest partition of `transfers`, `batch_claims` and `blocks` (as the weekly prune does, so the
 * addresses only that week named are deleted), adds UNNAMED addresses nothing names, and is then
 * rolled back: the kept schema is never changed. Both forms must delete the same number of addresses (else exit 1).
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_x REUSE=bench_method_1a2b3c4d npx tsx bench/prune-addresses.ts
 *   DATA_DIR=/copy/of/a/kept/run npx tsx bench/prune-addresses.ts   # embedded PGlite
 *   ROUNDS=5 ...   # rounds (default 3)
 *   UNNAMED=10000 ...   # addresses nothing names, added before each prune (default 10,000)
 */
import { sql, type Transaction } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { ADDRESS_REFS } from '../src/db/address-refs.ts';
import type { Schema } from '../src/db/schema.ts';
import { pruneAddresses } from '../src/publish/prune.ts';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const UNNAMED = Number(process.env.UNNAMED ?? 10000);

/**
 * The form of main before h-prune3, as a fixed reference: one `not exists` per referring column, in
 * one delete (h-prune3 measured three others in src's place and kept this one).
 */
async function pruneAddressesPerColumn(trx: Transaction<Schema>): Promise<number> {
  const unreferenced = ADDRESS_REFS.map(({ table, column, array }) =>
    array
      ? sql`not exists (select 1 from ${sql.table(table)} r cross join lateral unnest(${sql.ref(`r.${column}`)}) x(id)
                         where x.id = a.address_id)`
      : sql`not exists (select 1 from ${sql.table(table)} r where ${sql.ref(`r.${column}`)} = a.address_id)`,
  );
  const gone = await sql<{ n: bigint }>`
    with gone as (delete from addresses a where ${sql.join(unreferenced, sql` and `)} returning 1)
    select count(*) as n from gone`.execute(trx);
  return Number(gone.rows[0]?.n ?? 0);
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
  const forms = { before: pruneAddressesPerColumn, after: pruneAddresses } as const;
  const times: Record<keyof typeof forms, number[]> = { before: [], after: [] };
  const counts: Record<keyof typeof forms, number[]> = { before: [], after: [] };
  try {
    const { rows: sizes } = await sql<{ n: string }>`select count(*)::text as n from addresses`.execute(db);
    console.error(`addresses: ${sizes[0]!.n}`);
    for (let round = 0; round < ROUNDS; round++) {
      const order: (keyof typeof forms)[] = round % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
      for (const form of order) {
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
            const n = await forms[form](trx);
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
  console.log(`before (not exists per column):  min/median/max ${stats(times.before)}`);
  console.log(`after (src's pruneAddresses):     min/median/max ${stats(times.after)}`);
  const all = new Set([...counts.before, ...counts.after]);
  if (all.size !== 1) {
    console.error(`the forms deleted different numbers of addresses: ${JSON.stringify(counts)}`);
    process.exit(1);
  }
  console.log(`addresses deleted by each: ${[...all][0]}`);
}

await main();

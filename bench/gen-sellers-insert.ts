/**
 * The cost of writing one generation's gen_sellers rows in two layouts, paired: BEFORE, a schema
 * of the layout before migration 0043 (the four directory indexes of migration 0037 on
 * (generation, key desc, seller_address)), and AFTER, one of 0043's (the same indexes tied by
 * seller_no, a 4-byte number in address order, instead of the address), in one database.
 *
 *   BENCH_DATABASE_URL=postgres://... BEFORE=<schema> AFTER=<schema> PAIRS=5 npx tsx bench/gen-sellers-insert.ts
 *
 * (e.g. a schema a `KEEP=1` run of bench/method.ts left, and a copy of it migrated.) Per pair, in
 * each schema (the order alternating between pairs): the newest generation's rows copied as a new
 * generation in one `insert ... select`, in step 2's order (revenue descending: the rank's sort
 * comes last in its plan), under EXPLAIN (ANALYZE, BUFFERS, WAL), then rolled back
 * (work_mem 1 GB and no JIT, as the method sets them): the statement's time, its server process's
 * CPU time (from /proc: the server must run on this machine), WAL records and WAL bytes. Then each
 * schema's gen_sellers measured on a copy: rows, and bytes per row of the heap and of each index.
 * Prints a JSON summary (min / median / max per layout, and the AFTER/BEFORE ratio per pair).
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { sql, type Kysely } from 'kysely';
import { openDatabase } from '../src/db/index.ts';

const base = process.env.BENCH_DATABASE_URL;
const schemas = { before: process.env.BEFORE, after: process.env.AFTER };
if (!base || !schemas.before || !schemas.after) {
  console.error('set BENCH_DATABASE_URL, BEFORE and AFTER (schemas a KEEP=1 run of bench/method.ts left)');
  process.exit(1);
}
const PAIRS = Number(process.env.PAIRS ?? 5);

/** Every column of gen_sellers before 0043, in table order. */
const COLUMNS = `seller_address, listing_count, payments_30d, payers_30d, verified_revenue_30d_micro,
  median_payment_30d_micro, evidence_state, tier, farm_flag, farm_reasons, rank, categories, evidence_sha256,
  first_payment_ts, last_payment_ts, first_block, last_block, external_revenue_30d_micro, external_payments_30d,
  external_payers_30d, class_payments_30d, class_revenue_30d_micro, internal_seller_funded_payments_30d,
  internal_seller_funded_revenue_30d_micro, internal_seller_funded_payers_30d, internal_same_operator_payments_30d,
  internal_same_operator_revenue_30d_micro, internal_same_operator_payers_30d`;
function copyStatement(side: 'before' | 'after') {
  const numbered = side === 'after' ? ', seller_no' : '';
  return `insert into gen_sellers (generation, ${COLUMNS}${numbered})
    select generation + 1000, ${COLUMNS}${numbered}
      from gen_sellers where generation = (select max(generation) from gen_sellers)
     order by verified_revenue_30d_micro desc, seller_address`;
}

interface Run {
  ms: number;
  /** The server process's CPU time (user + system) over the statement, from /proc: 10 ms steps. */
  cpuMs: number;
  walRecords: number;
  walBytes: number;
}

/** A process's CPU time so far (utime + stime of /proc/PID/stat), in ms: the server must be local. */
function backendCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // fields 14 and 15, at 100 ticks/s
}

async function copyOnce(db: Kysely<any>, side: 'before' | 'after'): Promise<Run> {
  return db
    .transaction()
    .execute(async (trx) => {
      // the method's settings (sql/method/01_inputs.sql): its sorts in memory
      await sql`set local work_mem = '1GB'`.execute(trx);
      await sql`set local jit = off`.execute(trx);
      const { rows: pid } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
      const cpu0 = backendCpuMs(pid[0]!.pid);
      const { rows } = await sql<{ 'QUERY PLAN': unknown }>`explain (analyze, buffers, wal, format json) ${sql.raw(
        copyStatement(side),
      )}`.execute(trx);
      const raw = rows[0]!['QUERY PLAN'];
      const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as {
        'Execution Time': number;
        Plan: { 'WAL Records': number; 'WAL Bytes': number };
      }[];
      const cpuMs = backendCpuMs(pid[0]!.pid) - cpu0;
      // (thrown: the transaction rolls back, the generation's copy is not kept)
      throw Object.assign(new Error('rollback'), {
        run: {
          ms: plan[0]!['Execution Time'],
          cpuMs,
          walRecords: plan[0]!.Plan['WAL Records'],
          walBytes: plan[0]!.Plan['WAL Bytes'],
        },
      });
    })
    .catch((e: { run?: Run }) => {
      if (!e.run) throw e;
      return e.run;
    });
}

/**
 * Bytes per row of gen_sellers' heap (pg_table_size) and of each index, measured on a copy: a
 * table like gen_sellers with its indexes, filled one generation per statement in step 2's order,
 * as the method fills it (the schema's own table holds the dead entries of the copies
 * rolled back above), then vacuumed.
 */
async function sizes(db: Kysely<any>) {
  return db.connection().execute(async (c) => {
    await sql`create temp table size_probe (like gen_sellers including all)`.execute(c);
    const { rows: gens } = await sql<{ g: number }>`
      select distinct generation as g from gen_sellers order by 1`.execute(c);
    for (const { g } of gens)
      await sql`insert into size_probe select * from gen_sellers where generation = ${g}
                order by verified_revenue_30d_micro desc, seller_address`.execute(c);
    await sql`vacuum analyze size_probe`.execute(c);
    const { rows } = await sql<{ name: string; bytes: string }>`
      select 'heap' as name, pg_table_size('size_probe')::text as bytes
      union all
      select replace(indexrelid::regclass::text, 'size_probe', 'index'), pg_relation_size(indexrelid)::text
        from pg_index where indrelid = 'size_probe'::regclass`.execute(c);
    const { rows: n } = await sql<{ n: string }>`select count(*)::text as n from size_probe`.execute(c);
    await sql`drop table size_probe`.execute(c);
    const count = Number(n[0]!.n);
    const perRow = Object.fromEntries(rows.map((r) => [r.name, Math.round(Number(r.bytes) / count)]));
    const total = rows.reduce((sum, r) => sum + Number(r.bytes), 0);
    return { rows: count, bytesPerRow: Math.round(total / count), perRow };
  });
}

const url = (schema: string) => {
  const u = new URL(base);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
};
const dbs = {
  before: await openDatabase({ databaseUrl: url(schemas.before), maxConnections: 1 }),
  after: await openDatabase({ databaseUrl: url(schemas.after), maxConnections: 1 }),
};
try {
  const runs: Record<'before' | 'after', Run[]> = { before: [], after: [] };
  const load: number[] = [os.loadavg()[0]!];
  await copyOnce(dbs.before.db, 'before'); // warm-up: the newest generation's pages read once
  await copyOnce(dbs.after.db, 'after');
  for (let p = 0; p < PAIRS; p++) {
    for (const side of p % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const))
      runs[side].push(await copyOnce(dbs[side].db, side));
    load.push(os.loadavg()[0]!);
  }
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return { min: s[0], median: s[Math.floor(s.length / 2)], max: s.at(-1) };
  };
  const summary = {
    pairs: PAIRS,
    load1: stats(load),
    ms: { before: stats(runs.before.map((r) => r.ms)), after: stats(runs.after.map((r) => r.ms)) },
    ratio: stats(runs.after.map((r, i) => r.ms / runs.before[i]!.ms)),
    cpuMs: { before: stats(runs.before.map((r) => r.cpuMs)), after: stats(runs.after.map((r) => r.cpuMs)) },
    cpuRatio: stats(runs.after.map((r, i) => r.cpuMs / runs.before[i]!.cpuMs)),
    walRecords: {
      before: stats(runs.before.map((r) => r.walRecords)),
      after: stats(runs.after.map((r) => r.walRecords)),
    },
    walBytes: { before: stats(runs.before.map((r) => r.walBytes)), after: stats(runs.after.map((r) => r.walBytes)) },
    sizes: { before: await sizes(dbs.before.db), after: await sizes(dbs.after.db) },
  };
  console.log(JSON.stringify(summary, null, 2));
} finally {
  await dbs.before.close();
  await dbs.after.close();
}

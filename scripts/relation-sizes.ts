/**
 * Prints the disk use of every table of one database schema, largest first, as the markdown table
 * of docs/data-model.md: rows, table and index bytes, bytes per row, and bytes per payment of the
 * window (the payments of the published generation, or PAYMENTS). Reads only, unless VACUUM=1.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres SCHEMA=bench_method_1a2b3c4d npx tsx scripts/relation-sizes.ts
 *   DATA_DIR=./.data npx tsx scripts/relation-sizes.ts        # the embedded database of `run`
 *
 * VACUUM=1 vacuums the schema's tables first (as bytes_per_payment of issue 21 is defined: after
 * the steady runs and a VACUUM). JSON=1 prints JSON instead of the table.
 */
import { sql } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { relationSizes, vacuumSchema } from '../src/db/relation-sizes.ts';

const url = process.env.DATABASE_URL;
let databaseUrl = url;
if (url && process.env.SCHEMA) {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${process.env.SCHEMA}`);
  databaseUrl = u.toString();
}
const database = await openDatabase({ databaseUrl, dataDir: url ? undefined : (process.env.DATA_DIR ?? './.data') });
try {
  const { db } = database;
  if (process.env.VACUUM) await vacuumSchema(db);
  const sizes = await relationSizes(db);
  // (a schema the migrations have not built has no published generation: no per-payment column)
  const migrated = sizes.some((r) => r.name === 'published_pointer');
  const { rows: window } = migrated
    ? await sql<{ n: string | null }>`
        select sum(s.payments_30d)::text as n
          from gen_sellers s join published_pointer p on p.generation = s.generation`.execute(db)
    : { rows: [] };
  const payments = Number(process.env.PAYMENTS ?? window[0]?.n ?? 0);
  const total = sizes.reduce((sum, r) => sum + r.totalBytes, 0n);

  if (process.env.JSON) {
    const json = (k: string, v: unknown) => (typeof v === 'bigint' ? Number(v) : v);
    console.log(JSON.stringify({ payments, total_bytes: total, relations: sizes }, json, 2));
  } else {
    const mb = (b: bigint) => (Number(b) / 2 ** 20).toFixed(1);
    const perPayment = (b: bigint) => (payments > 0 ? (Number(b) / payments).toFixed(1) : '-');
    console.log(`${payments} payments in the window of the published generation; MB = 2^20 bytes\n`);
    console.log('| relation | rows | table MB | index MB | total MB | bytes/row | bytes/payment |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const r of sizes) {
      console.log(
        `| ${r.name} | ${r.rows} | ${mb(r.tableBytes)} | ${mb(r.indexBytes)} | ${mb(r.totalBytes)} | ${r.bytesPerRow ?? '-'} | ${perPayment(r.totalBytes)} |`,
      );
    }
    console.log(`| **all** | | | | ${mb(total)} | | ${perPayment(total)} |`);
  }
} finally {
  await database.close();
}

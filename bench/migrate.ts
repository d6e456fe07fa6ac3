/**
 * Benchmark: the in-place migration of a database's chain facts to the compact layout (issue 21;
 * docs/data-model.md, "Migration: in place, resumable"), at PAYMENTS payments (default 1,000,000).
 * Postgres only (a database of its own, created and dropped here).
 *
 *   npx tsx bench/migrate.ts                                  # 1M payments, on 127.0.0.1:5432
 *   PAYMENTS=10000000 npx tsx bench/migrate.ts                # 10M payments (about 20 GB at the peak)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5433/postgres ...   # another cluster
 *   BUILD_ONLY=1 ...      # builds the old-layout database, keeps it (its name is printed), exits
 *   FROM=bench_migrate_1a2b3c4d ...   # migrates a copy (CREATE DATABASE ... TEMPLATE) of that kept
 *                                     # database instead of building one (same PAYMENTS)
 *   KILL_AT=0.3 ...       # where the copy is killed (fraction of its block range; default 0.3; 0: never)
 *   KEEP=1 ...            # keeps the migrated database
 *
 * 1. The old layout: the migrations up to `bundle_files` (0024, the last before the compact
 *    layout) applied by the current migrator, then `usdc_transfers`, `usdc_authorizations` and
 *    `chain_blocks` filled in the shape the old sync stored them (text hashes and addresses,
 *    lowercase 0x hex; numeric values): one set-based `insert ... select from generate_series`
 *    per table and chunk of 1M payments, the tables' indexes (as of 0024) dropped before and
 *    rebuilt after, then VACUUM ANALYZE (a real window's facts long since are). The chain is
 *    bench/method.ts's: SELLERS sellers (default 50,000; one holds 40% of the payments, the rest
 *    log-uniform, Zipf-like), 100,000 payers, three prices per seller and 1% arbitrary amounts,
 *    over the 30 days before the as-of block; here PER_BLOCK payments (default 5) share a block,
 *    each its own transaction (Transfer at log 2j+1, its AuthorizationUsed at 2j), so there is one
 *    `chain_blocks` row per distinct block. Each block is stored by the run of its 15 minutes
 *    (added_seq: one per 4,500 blocks). 2% of the transfers are unauthorized (no
 *    AuthorizationUsed, `authorized` false: rule 3 fails). One block in 1,000 was reorged: its
 *    first version (another hash, its transfers and authorizations) removed by the next run,
 *    which stored the block again (so the copy makes two block versions of it).
 * 2. The migration, step by step as `x402-tally migrate` does it (src/db/migrate.ts): every
 *    pending migration timed on its own (0025, then the copy, then 0026 and whatever follows:
 *    a later migration shows up as a row of its own). The copy runs first as the real CLI
 *    (`node bin/x402-tally.js migrate`, DATABASE_URL set) in a child process, which is killed
 *    (SIGKILL) once the copy's state row has passed KILL_AT of the block range; then the copy is
 *    resumed in this process by the function the CLI calls (copyFactsToCompact), retrying while
 *    the killed session's backend still holds the run lock (exit 75 for an operator), and timed
 *    to its first committed batch (the resume) and to its end.
 * 3. Every SAMPLE_S seconds (default 2) during the migration a second connection samples
 *    pg_database_size, the old and new fact tables' pg_total_relation_size (indexes included), the
 *    cluster's WAL directory and its temporary files (pg_ls_tmpdir: the sorts of 0026's check
 *    spill there; both cluster-wide, other databases' count too): the peak extra disk is the
 *    highest database size over the size before 0025, and again with the temporary files added.
 * 4. After the switch: the row counts of `transfers` and `blocks` against the old tables' (counted
 *    before the migration, and worked out from the generator: PAYMENTS live transfers plus the
 *    reorged blocks' orphaned ones; one block version per `chain_blocks` row), and the final size.
 *
 * Not built here: generations (the gen_* tables and `generations` rows). The migration does not
 * read or write them (0026 redefines two views over them, which takes no time whatever they
 * hold), so they add the same bytes before and after and nothing to the times.
 * Writes bench/out/migrate.json; progress goes to stderr.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { sql, type Kysely } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { compactCopyPending, copyFactsToCompact, COPY_BEFORE_MIGRATION } from '../src/db/compact-copy.ts';
import { loadMigrations, migrate } from '../src/db/migrate.ts';
import { isTemporary } from '../src/lib/errors.ts';

const PAYMENTS = Number(process.env.PAYMENTS ?? 1_000_000);
const SELLERS = Number(process.env.SELLERS ?? 50_000);
const PER_BLOCK = Number(process.env.PER_BLOCK ?? 5);
const KILL_AT = Number(process.env.KILL_AT ?? 0.3);
const SAMPLE_MS = Number(process.env.SAMPLE_S ?? 2) * 1000;
const BASE_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AS_OF_TS = 1_767_268_800n; // 2026-01-01T12:00:00Z
const AS_OF_BLOCK = 40_000_000n;
const BLOCKS_PER_SECOND = 5n; // post-Denim: 200 ms blocks
const WINDOW_BLOCKS = 2_592_000n * BLOCKS_PER_SECOND;
const BLOCKS_PER_RUN = 4_500n; // 15 minutes of blocks: one run's added_seq
const REORG_EVERY = 1_000; // one block in 1,000 has an orphaned first version
const OLD_TABLES = ['usdc_transfers', 'usdc_authorizations', 'chain_blocks'];
const NEW_TABLES = ['addresses', 'blocks', 'transfers'];
const LAST_OLD_MIGRATION = 24; // bundle_files: the schema the compact layout starts from

if (!Number.isInteger(PAYMENTS) || PAYMENTS < PER_BLOCK)
  throw new RangeError('PAYMENTS must be an integer >= PER_BLOCK');

// The synthetic chain: PER_BLOCK payments per block, NBLOCKS blocks evenly spaced over the window.
const NBLOCKS = BigInt(Math.ceil(PAYMENTS / PER_BLOCK));
const SPACING = WINDOW_BLOCKS / NBLOCKS > 0n ? WINDOW_BLOCKS / NBLOCKS : 1n;
const FIRST_BLOCK = AS_OF_BLOCK - (NBLOCKS - 1n) * SPACING;

// As bench/method.ts: hashes and addresses are hex of sha256 of a counter (they look like chain data).
const hex = (tag: string, expr: string, chars: number) =>
  `'0x' || left(encode(sha256(convert_to('${tag}' || (${expr}), 'UTF8')), 'hex'), ${chars})`;
const uniform = (expr: string, salt: number) =>
  `((hashint8((${expr}) * 7 + ${salt})::bigint + 2147483648) / 4294967296.0)`;
const sellerIndex = (i: string) =>
  `(case when ${uniform(i, 1)} < 0.4 then 1
         else 1 + floor(exp((${uniform(i, 2)}) * ln(${SELLERS})))::int end)`;
const value = (i: string, s: string) =>
  `(case when ${uniform(i, 3)} < 0.01 then 1 + floor(${uniform(i, 4)} * 5000000)::bigint
         else 100 * (1 + (abs(hashint8((${s}) * 3 + floor(${uniform(i, 5)} * 3)::bigint)) % 500)) end)`;

const s = (ms: number) => +(ms / 1000).toFixed(1);
const gb = (bytes: number) => +(bytes / 1e9).toFixed(2);
const now = () => new Date().toISOString().slice(11, 19);
const say = (text: string) => console.error(`${now()} load ${loadavg()[0]!.toFixed(1)}  ${text}`);
const dbUrl = (name: string) => {
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

async function admin(text: string) {
  const database = await openDatabase({ databaseUrl: BASE_URL, maxConnections: 1 });
  try {
    await sql.raw(text).execute(database.db);
  } finally {
    await database.close();
  }
}

/** The old layout's facts of the blocks k in [k0, k1) (block k is the k-th from the as-of block back). */
async function loadBlocks(db: Kysely<any>, k0: bigint, k1: bigint) {
  await db.transaction().execute(async (trx) => {
    // One row per payment, with its block and the block's reorged-ness; then one insert per table.
    await sql
      .raw(
        `
    create temp table bench_pay on commit drop as
    select i, s, b, ${AS_OF_TS} - (${AS_OF_BLOCK} - b) / ${BLOCKS_PER_SECOND} as ts,
           1 + (b - ${FIRST_BLOCK}) / ${BLOCKS_PER_RUN} as seq, k % ${REORG_EVERY} = 7 as reorged,
           ${hex('tx', 'i', 64)} as tx, 2 * j + 1 as li, ${hex('block', 'k', 64)} as h,
           ${hex('orphan', 'k', 64)} as oh,
           ${hex('payer', `abs(hashint8(i * 7 + 6)) % 100000`, 40)} as f, ${hex('seller', 's', 40)} as t,
           ${value('i', 's')} as v, ${uniform('i', 8)} >= 0.02 as authorized
      from (select i, j, k, ${sellerIndex('i')} as s, ${AS_OF_BLOCK} - k * ${SPACING} as b
              from generate_series(${k0}, ${k1 - 1n}) k
              cross join generate_series(0, ${PER_BLOCK - 1}) j
              cross join lateral (select k * ${PER_BLOCK} + j as i) x
             where k * ${PER_BLOCK} + j < ${PAYMENTS}) p;
    -- the live version of every block (stored again by the next run when reorged), then the orphans
    insert into chain_blocks (block_number, block_hash, block_timestamp, added_seq, removed_seq)
    select distinct b, h, ts, seq + reorged::int, null::bigint from bench_pay
    union all
    select distinct b, oh, ts, seq, seq + 1 from bench_pay where reorged;
    insert into usdc_transfers (tx_hash, log_index, block_hash, block_number, block_timestamp, from_address,
                                to_address, value, added_seq, removed_seq, authorized)
    select tx, li, h, b, ts, f, t, v, seq + reorged::int, null, authorized from bench_pay
    union all
    select tx, li, oh, b, ts, f, t, v, seq, seq + 1, authorized from bench_pay where reorged;
    insert into usdc_authorizations (tx_hash, log_index, block_hash, block_number, authorizer, nonce, added_seq, removed_seq)
    select tx, li - 1, h, b, f, ${hex('nonce', 'i', 64)}, seq + reorged::int, null from bench_pay where authorized
    union all
    select tx, li - 1, oh, b, f, ${hex('nonce', 'i', 64)}, seq, seq + 1 from bench_pay where authorized and reorged;
  `,
      )
      .execute(trx);
  });
}

/** Builds the old layout in the (empty) database. */
async function buildOld(db: Kysely<any>) {
  const t0 = performance.now();
  await migrate(
    db,
    loadMigrations().filter((m) => m.version <= LAST_OLD_MIGRATION),
  );
  const { rows: indexes } = await sql<{ name: string; def: string }>`
    select indexname as name, indexdef as def from pg_indexes
     where schemaname = current_schema() and tablename in ('usdc_transfers', 'usdc_authorizations', 'chain_blocks')`.execute(
    db,
  );
  for (const r of indexes) await sql`drop index ${sql.id(r.name)}`.execute(db);
  const blocksPerChunk = BigInt(Math.ceil(1_000_000 / PER_BLOCK));
  for (let k = 0n; k < NBLOCKS; k += blocksPerChunk) {
    const k1 = k + blocksPerChunk < NBLOCKS ? k + blocksPerChunk : NBLOCKS;
    await loadBlocks(db, k, k1);
    say(`old layout: blocks ${k1} of ${NBLOCKS} loaded`);
  }
  const loadMs = performance.now() - t0;
  for (const r of indexes) {
    await sql.raw(r.def).execute(db);
    say(`old layout: index ${r.name} rebuilt`);
  }
  const seq = 2n + (AS_OF_BLOCK - FIRST_BLOCK) / BLOCKS_PER_RUN;
  await sql`select setval('ingest_seq', ${seq.toString()})`.execute(db);
  await sql.raw(`vacuum analyze ${OLD_TABLES.join(', ')}`).execute(db);
  const buildMs = performance.now() - t0;
  say(`old layout built in ${s(buildMs)} s (rows ${s(loadMs)} s)`);
  return { load_s: s(loadMs), build_s: s(buildMs) };
}

interface Sample {
  t_s: number;
  step: string;
  database: number;
  old_tables: number;
  new_tables: number;
  wal: number;
  temp: number;
  next_block: string | null;
}

/** Samples sizes every SAMPLE_MS on a connection of its own until stopped. */
function startSampler(url: string, t0: number, step: () => string) {
  const samples: Sample[] = [];
  let stopped = false;
  const done = (async () => {
    const database = await openDatabase({ databaseUrl: url, maxConnections: 1 });
    try {
      let lastSaid = 0;
      while (!stopped) {
        const { rows } = await sql<{
          database: string;
          old_tables: string;
          new_tables: string;
          wal: string;
          temp: string;
        }>`
          select pg_database_size(current_database()) as database,
                 (select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c
                   where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'
                     and c.relname in ('usdc_transfers', 'usdc_authorizations', 'chain_blocks')) as old_tables,
                 (select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c
                   where c.relnamespace = current_schema()::regnamespace and c.relkind = 'r'
                     and c.relname in ('addresses', 'blocks', 'transfers')) as new_tables,
                 (select coalesce(sum(size), 0) from pg_ls_waldir()) as wal,
                 (select coalesce(sum(size), 0) from pg_ls_tmpdir()) as temp`.execute(database.db);
        // (the state row exists from 0025 to 0026; read between them, it may be dropped meanwhile)
        const state = await sql<{ next_block: string }>`select next_block from compact_copy`
          .execute(database.db)
          .catch(() => ({ rows: [] as { next_block: string }[] }));
        const r = rows[0]!;
        const sample = {
          t_s: s(performance.now() - t0),
          step: step(),
          database: Number(r.database),
          old_tables: Number(r.old_tables),
          new_tables: Number(r.new_tables),
          wal: Number(r.wal),
          temp: Number(r.temp),
          next_block: state.rows[0] ? String(state.rows[0].next_block) : null,
        };
        samples.push(sample);
        if (performance.now() - lastSaid > 30_000) {
          lastSaid = performance.now();
          say(
            `${sample.step}: database ${gb(sample.database)} GB (old ${gb(sample.old_tables)}, new ${gb(sample.new_tables)}), ` +
              `WAL ${gb(sample.wal)} GB, temp files ${gb(sample.temp)} GB${sample.next_block ? `, next_block ${sample.next_block}` : ''}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
      }
    } finally {
      await database.close();
    }
  })();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

async function counts(db: Kysely<any>, tables: string[]) {
  const out: Record<string, number> = {};
  for (const t of tables)
    out[t] = Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(t)}`.execute(db)).rows[0]!.n);
  return out;
}

async function copyState(db: Kysely<any>) {
  const { rows } = await sql<{ next_block: string; top_block: string }>`
    select next_block, top_block from compact_copy`.execute(db);
  return { next: BigInt(rows[0]!.next_block), top: BigInt(rows[0]!.top_block) };
}

/** The CLI's `migrate` in a child process, SIGKILLed once the copy passed KILL_AT of its range. */
async function copyUntilKilled(db: Kysely<any>, url: string) {
  const { next: lo, top } = await copyState(db);
  const killAt = lo + BigInt(Math.floor(Number(top - lo) * KILL_AT));
  const t0 = performance.now();
  const child = spawn(process.execPath, ['bin/x402-tally.js', 'migrate'], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal)),
  );
  let killed: { next_block: string; at_s: number } | undefined;
  for (;;) {
    const done = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 250))]);
    if (done) break;
    const { next } = await copyState(db);
    if (next >= killAt) {
      child.kill('SIGKILL');
      killed = { next_block: next.toString(), at_s: s(performance.now() - t0) };
      break;
    }
  }
  const exit = await exited;
  if (!killed) throw new Error(`the CLI's migrate ended (${exit}) before the copy reached KILL_AT`);
  say(`killed the CLI's migrate after ${killed.at_s} s at next_block ${killed.next_block} (of ${lo}..${top})`);
  return { killed, killMs: performance.now() - t0 };
}

/** The rest of the copy, as the CLI would do it when run again, timed to its first batch and its end. */
async function resumeCopy(db: Kysely<any>) {
  const t0 = performance.now();
  let lockWaits = 0;
  let firstBatchMs: number | undefined;
  let batches = 0;
  for (;;) {
    try {
      const r = await copyFactsToCompact(db, {
        onBatch: () => {
          firstBatchMs ??= performance.now() - t0;
        },
      });
      batches += r.batches;
      break;
    } catch (error) {
      if (!isTemporary(error) || ++lockWaits > 600) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  return { resumeMs: performance.now() - t0, firstBatchMs, lockWaits, batches };
}

async function main() {
  const name = `bench_migrate_${randomBytes(4).toString('hex')}`;
  const url = dbUrl(name);
  const started = new Date();
  await admin(process.env.FROM ? `create database ${name} template ${process.env.FROM}` : `create database ${name}`);
  say(`database ${name}${process.env.FROM ? ` (a copy of ${process.env.FROM})` : ''}`);
  const database = await openDatabase({ databaseUrl: url, maxConnections: 2 });
  const db = database.db;
  let keep = !!process.env.KEEP;
  try {
    const build = process.env.FROM ? undefined : await buildOld(db);
    if (process.env.BUILD_ONLY) {
      keep = true;
      say(`kept ${name}: FROM=${name} PAYMENTS=${PAYMENTS} npx tsx bench/migrate.ts`);
      return;
    }
    const oldCounts = await counts(db, OLD_TABLES);
    const orphans = Number(
      (
        await sql<{ n: string }>`
      select count(*) as n from usdc_transfers where removed_seq is not null`.execute(db)
      ).rows[0]!.n,
    );
    // the blocks k < NBLOCKS with k % 1000 = 7, PER_BLOCK transfers each (PAYMENTS a multiple of PER_BLOCK)
    const reorgedBlocks = Number((NBLOCKS + BigInt(REORG_EVERY - 8)) / BigInt(REORG_EVERY));
    const before = Number(
      (await sql<{ n: string }>`select pg_database_size(current_database()) as n`.execute(db)).rows[0]!.n,
    );
    say(`before: ${gb(before)} GB, ${JSON.stringify(oldCounts)}`);

    const t0 = performance.now();
    let step = 'start';
    const sampler = startSampler(url, t0, () => step);
    const steps: { step: string; s: number }[] = [];
    let kill: Awaited<ReturnType<typeof copyUntilKilled>> | undefined;
    let resume: Awaited<ReturnType<typeof resumeCopy>> | undefined;
    try {
      const { rows } = await sql<{ version: number }>`select version from schema_migrations`.execute(db);
      const applied = new Set(rows.map((r) => r.version));
      for (const m of loadMigrations().filter((m) => !applied.has(m.version))) {
        if (m.name === COPY_BEFORE_MIGRATION && (await compactCopyPending(db))) {
          step = 'copy';
          const tc = performance.now();
          if (KILL_AT > 0) kill = await copyUntilKilled(db, url);
          resume = await resumeCopy(db);
          steps.push({ step: 'copy (src/db/compact-copy.ts)', s: s(performance.now() - tc) });
          say(`copy done in ${s(performance.now() - tc)} s`);
        }
        step = `${String(m.version).padStart(4, '0')}_${m.name}`;
        const tm = performance.now();
        await migrate(db, [m]);
        steps.push({ step, s: s(performance.now() - tm) });
        say(`${step} applied in ${s(performance.now() - tm)} s`);
      }
    } finally {
      await sampler.stop();
    }
    const totalMs = performance.now() - t0;
    const after = Number(
      (await sql<{ n: string }>`select pg_database_size(current_database()) as n`.execute(db)).rows[0]!.n,
    );
    const newCounts = await counts(db, NEW_TABLES);
    const peak = sampler.samples.reduce((a, b) => (b.database > a.database ? b : a));
    const peakWal = Math.max(...sampler.samples.map((x) => x.wal));
    const peakWithTemp = sampler.samples.reduce((a, b) => (b.database + b.temp > a.database + a.temp ? b : a));
    const result = {
      date: started.toISOString(),
      database: name,
      payments: PAYMENTS,
      sellers: SELLERS,
      per_block: PER_BLOCK,
      build,
      old_rows: oldCounts,
      orphaned_transfers: orphans,
      new_rows: newCounts,
      checks: {
        transfers_equal_old: newCounts.transfers === oldCounts.usdc_transfers,
        transfers_equal_generated: newCounts.transfers === PAYMENTS + reorgedBlocks * PER_BLOCK,
        block_versions_equal_chain_blocks: newCounts.blocks === oldCounts.chain_blocks,
        block_versions_equal_generated: newCounts.blocks === Number(NBLOCKS) + reorgedBlocks,
      },
      steps,
      total_s: s(totalMs),
      kill: kill && { ...kill.killed, process_s: s(kill.killMs) },
      resume: resume && {
        first_batch_s: resume.firstBatchMs === undefined ? null : s(resume.firstBatchMs),
        to_end_s: s(resume.resumeMs),
        lock_waits: resume.lockWaits,
        batches: resume.batches,
      },
      disk_gb: {
        before: gb(before),
        peak: gb(peak.database),
        peak_extra: gb(peak.database - before),
        peak_at: { step: peak.step, t_s: peak.t_s, old_tables: gb(peak.old_tables), new_tables: gb(peak.new_tables) },
        after: gb(after),
        peak_with_temp_files: gb(peakWithTemp.database + peakWithTemp.temp),
        peak_extra_with_temp_files: gb(peakWithTemp.database + peakWithTemp.temp - before),
        peak_with_temp_files_at: { step: peakWithTemp.step, t_s: peakWithTemp.t_s, temp: gb(peakWithTemp.temp) },
        peak_wal_cluster: gb(peakWal),
      },
      load_average_end: loadavg().map((x) => +x.toFixed(2)),
      samples: sampler.samples,
    };
    mkdirSync('bench/out', { recursive: true });
    writeFileSync('bench/out/migrate.json', JSON.stringify(result, null, 2) + '\n');
    console.log(JSON.stringify({ ...result, samples: `${sampler.samples.length} in bench/out/migrate.json` }, null, 2));
  } finally {
    await database.close();
    if (keep) say(`kept database ${name}`);
    else await admin(`drop database ${name}`);
  }
}

await main();

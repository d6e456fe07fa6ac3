// Migrates a copy of a demo data folder of the text fact layout with today's code, killing the
// fact copy after its first batch and running it again, then checks that every retained
// generation serves the bodies the old code served and keeps its generations row (its digests).
// The folder and what it served come from fixtures/demo-migration/generate.ts (read it for the
// steps); usage: npx tsx scripts/check-demo-migration.ts <its output folder>. Exits 1 on any
// difference. Results: docs/benchmarks.md, "The migration from a demo data folder".
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildApi } from '../src/api/index.ts';
import { openDatabase } from '../src/db/index.ts';
import { loadMigrations, migrate } from '../src/db/migrate.ts';
import { withoutMethod3Nulls } from '../test/helpers/method3-fields.ts';

interface Recorded {
  commit: string;
  generations: Record<string, unknown>[];
  served: { url: string; status: number; sha256: string }[];
}

const from = process.argv[2];
if (!from) throw new Error('usage: check-demo-migration.ts <folder written by fixtures/demo-migration/generate.ts>');
const recorded = JSON.parse(readFileSync(path.join(from, 'served.json'), 'utf8')) as Recorded;
const work = mkdtempSync(path.join(os.tmpdir(), 'tally-demo-migration-'));
cpSync(path.join(from, 'demo'), work, { recursive: true });
const database = await openDatabase({ dataDir: work });
const problems: string[] = [];
try {
  const facts = async () =>
    (await sql<{ n: number }>`select count(*)::int4 as n from usdc_transfers`.execute(database.db)).rows[0]!.n;
  const oldTransfers = await facts();

  const started = performance.now();
  const killed = new Error('killed after the first batch');
  let batches = 0;
  await migrate(database.db, undefined, {
    copyFacts: {
      batchTransfers: 100,
      onBatch: () => {
        if (++batches === 1) throw killed;
      },
    },
  }).then(
    () => problems.push('the copy was not killed'),
    (error: unknown) => {
      if (error !== killed) throw error;
    },
  );
  const applied = await migrate(database.db, undefined, { copyFacts: { batchTransfers: 100 } });
  const seconds = (performance.now() - started) / 1000;
  const { rows } = await sql<{ n: number }>`select count(*)::int4 as n from transfers`.execute(database.db);
  if (rows[0]!.n !== oldTransfers) problems.push(`transfers: ${rows[0]!.n}, the old layout held ${oldTransfers}`);

  const app = await buildApi(database.db, { rateLimitPerMinute: 1_000_000, cadenceSeconds: 900 });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    for (const { url, status, sha256 } of recorded.served) {
      const res = await fetch(base + url);
      // (the fields method 3.0.0 added, null on these 2.0.0 generations, out: the old code's bytes)
      const body = withoutMethod3Nulls(Buffer.from(await res.arrayBuffer()).toString());
      const got = createHash('sha256').update(body).digest('hex');
      if (res.status !== status || got !== sha256)
        problems.push(`${url}: ${res.status} ${got}, was ${status} ${sha256}`);
    }
  } finally {
    await app.close();
  }
  const { rows: generations } = await sql`select * from generations order by generation`.execute(database.db);
  const json = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
  if (json(generations) !== json(recorded.generations)) problems.push('the generations rows differ');

  const names = applied.map((v) => loadMigrations().find((m) => m.version === v)!.name);
  console.log(
    JSON.stringify({
      old_commit: recorded.commit,
      old_transfers: oldTransfers,
      generations: generations.length,
      bodies: recorded.served.length,
      killed_after_batches: 1,
      migrations_after_rerun: names,
      seconds: Math.round(seconds * 10) / 10,
      problems,
    }),
  );
} finally {
  await database.close();
  rmSync(work, { recursive: true, force: true });
}
process.exitCode = problems.length === 0 ? 0 : 1;

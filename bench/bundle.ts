/**
 * Benchmark (docs/benchmarks.md, "Audit bundle downloads"): the API process's RSS while DOWNLOADS
 * clients (default 20) download payments.ndjson of one large generation at once, over loopback.
 * The generation is bench/method.ts's cold generation (its builder, `loadAndCompute`: PAYMENTS
 * payments, default 1,000,000, to SELLERS sellers) on real Postgres, and the API runs in its own
 * process (bench/api/server.ts, a pool of 10), as `serve` runs it. Two rounds:
 * - cold: no bundle digests stored yet, so the first request builds them (every file streamed
 *   through sha256 once) while the 20 wait for that build, then each streams its file;
 * - warm: the digests are stored; each request streams its file.
 * Each client hashes what it receives and checks it against the manifest; nothing is kept. RSS is
 * read from /proc/<pid>/status every 20 ms; growth = peak during the round - RSS before it.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/bundle.ts
 *   PAYMENTS=200000 ...       # a smaller generation
 *   KEEP=1 ...                # keep the schema (its name is printed) ...
 *   REUSE=bench_bundle_1a2b ... # ... and measure again on it (its stored digests are dropped first)
 *
 * Linux only (/proc). Writes bench/out/bundle.json.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { createScratchSchema } from '../src/db/scratch-schema.ts';
import { projectRoot } from '../src/lib/paths.ts';
import { loadAndCompute } from './method.ts';

const DOWNLOADS = Number(process.env.DOWNLOADS ?? 20);
const FILE = 'payments.ndjson';
const base = process.env.BENCH_DATABASE_URL;
if (!base) {
  console.error('set BENCH_DATABASE_URL to a Postgres database the benchmark may create a schema in');
  process.exit(1);
}
const reused = process.env.REUSE;
const scratch = reused ? undefined : await createScratchSchema(base, 'bench_bundle');
let url: string;
if (reused) {
  const u = new URL(base);
  u.searchParams.set('options', `-c search_path=${reused}`);
  url = u.toString();
} else url = scratch!.url;
console.error(`schema ${reused ?? scratch!.name}`);

const database = await openDatabase({ databaseUrl: url, maxConnections: 2 });
let server: ReturnType<typeof spawn> | undefined;
try {
  await migrate(database.db);
  const t0 = performance.now();
  const generation = reused
    ? (await database.db.selectFrom('published_pointer').select('generation').executeTakeFirstOrThrow()).generation
    : (await loadAndCompute(database.db, database.backend)).generation;
  const buildS = reused ? null : +((performance.now() - t0) / 1000).toFixed(1);
  await database.db.deleteFrom('bundle_files').where('generation', '=', generation).execute();

  server = spawn(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'bench/api/server.ts')], {
    env: { ...process.env, BENCH_API_DATABASE_URL: url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve) =>
    readline.createInterface({ input: server!.stdout! }).once('line', resolve),
  );
  const api = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
  const rssMb = () => {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server!.pid}/status`, 'utf8'))![1]!;
    return Number(kb) / 1024;
  };
  for (let i = 0; i < 3; i++) await (await fetch(`${api}/api/v1/meta`)).text();

  /** One round of DOWNLOADS concurrent downloads: the sha256 and size of each body, and the RSS. */
  const round = async () => {
    const before = rssMb();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb())), 20);
    const t = performance.now();
    const bodies = await Promise.all(
      Array.from({ length: DOWNLOADS }, async () => {
        // identity, as `curl -O` asks (docs/operations.md, "Audit"): no compression stream per download
        const res = await fetch(`${api}/api/v1/generations/${generation}/bundle/${FILE}`, {
          headers: { 'accept-encoding': 'identity' },
        });
        if (res.status !== 200) throw new Error(`${FILE}: ${res.status} ${await res.text()}`);
        const hash = createHash('sha256');
        let bytes = 0;
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
          hash.update(chunk);
          bytes += chunk.length;
        }
        return { sha256: hash.digest('hex'), bytes };
      }),
    );
    const seconds = (performance.now() - t) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, rssMb());
    return { before, peak, seconds, bodies };
  };

  const cold = await round();
  const manifest = (await (await fetch(`${api}/api/v1/generations/${generation}/bundle/manifest.json`)).json()) as {
    files: { name: string; sha256: string; rows: number }[];
  };
  const entry = manifest.files.find((f) => f.name === FILE)!;
  const warm = await round();
  for (const r of [cold, warm])
    for (const b of r.bodies)
      if (b.sha256 !== entry.sha256) throw new Error(`a download of ${FILE} does not match the manifest's sha256`);

  const mb = (n: number) => +n.toFixed(1);
  const figures = (r: Awaited<ReturnType<typeof round>>) => ({
    rss_before_mb: mb(r.before),
    rss_peak_mb: mb(r.peak),
    rss_growth_mb: mb(r.peak - r.before),
    seconds: +r.seconds.toFixed(1),
  });
  const result = {
    date: new Date().toISOString(),
    machine: `${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    load_average: os.loadavg().map((l) => +l.toFixed(2)),
    generation,
    payments_rows: entry.rows,
    file_mb: mb(cold.bodies[0]!.bytes / 2 ** 20),
    downloads: DOWNLOADS,
    generation_build_s: buildS,
    cold: figures(cold),
    warm: figures(warm),
  };
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(new URL('./out/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./out/bundle.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  if (server) await new Promise((resolve) => (server!.once('exit', resolve), server!.kill('SIGTERM')));
  await database.close();
  if (!process.env.KEEP) await scratch?.drop();
}

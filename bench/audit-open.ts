/**
 * Probe (docs/benchmarks.md, "Audit memory"): the resident memory of opening the audit's scratch
 * database, by stage, in a process of its own. MODE picks how the migrated template reaches the
 * new data folder:
 *
 *   tarball  PGlite's loadDataDir (the template's .tgz unpacked whole in memory), as before
 *   stream   openMigratedPGlite: the .tgz unpacked into the folder by streaming, then opened
 *
 *   MODE=tarball node --expose-gc --import tsx bench/audit-open.ts
 *   MODE=stream SETTINGS=shared_buffers=1MB node --expose-gc --import tsx bench/audit-open.ts
 *
 * Prints one JSON line per stage: rss, its peak so far (VmHWM), anonymous memory, ArrayBuffers.
 * Through tsx, every figure carries tsx's ~40 MB; compiled, as the audit's child runs, it does not:
 *
 *   npx esbuild bench/audit-open.ts --bundle --platform=node --format=esm --packages=external \
 *     --outfile=.build/bench/audit-open.mjs     # two folders below the root, as src/cli/main.ts
 *   MODE=stream SETTINGS=shared_buffers=16MB MALLOC_ARENA_MAX=1 \
 *     node --expose-gc --no-wasm-dynamic-tiering --no-wasm-tier-up .build/bench/audit-open.mjs
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openPGlite } from '../src/db/pglite/open.ts';
import { openMigratedPGlite, templatePath } from '../src/db/pglite/template.ts';

const MODE = process.env.MODE ?? 'tarball';
const settings = Object.fromEntries(
  (process.env.SETTINGS ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => kv.split('=') as [string, string]),
);

const kb = (file: string, key: string) =>
  Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(file, 'utf8'))?.[1] ?? 0);
function stage(name: string) {
  (globalThis as { gc?: () => void }).gc?.();
  const mb = (k: number) => Math.round(k / 1024);
  console.log(
    JSON.stringify({
      stage: name,
      rssMb: mb(kb('/proc/self/status', 'VmRSS')),
      peakMb: mb(kb('/proc/self/status', 'VmHWM')),
      anonMb: mb(kb('/proc/self/smaps_rollup', 'Anonymous')),
      arrayBuffersMb: Math.round(process.memoryUsage().arrayBuffers / 2 ** 20),
    }),
  );
}

const file = templatePath();
if (!existsSync(file)) throw new Error(`no template at ${file}: run the tests or the demo once`);
const scratch = mkdtempSync(path.join(os.tmpdir(), 'audit-open-'));
try {
  stage('start');
  await import('@electric-sql/pglite');
  stage('imported');
  const dataDir = path.join(scratch, 'pglite');
  const pglite =
    MODE === 'stream'
      ? (await openMigratedPGlite(dataDir, settings)).pglite
      : await openPGlite(dataDir, { settings, loadDataDir: new Blob([readFileSync(file)]) });
  stage('opened');
  await pglite.query('select count(*) from pg_class');
  stage('queried');
  await pglite.close();
  stage('closed');
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

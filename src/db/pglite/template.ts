import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { projectRoot } from '../../lib/paths.ts';
import { loadMigrations, migrate, type Migration } from '../migrate.ts';
import { PGliteDialect } from './dialect.ts';
import { openPGlite } from './open.ts';
import { untarGz } from './untar.ts';

/**
 * A new embedded database starts with `initdb` and then every migration: 10-25 s and ~800 MB of
 * resident memory on this 2-core machine (docs/benchmarks.md, "Audit for people"), for a few
 * hundred kB of schema. The same result, once made, is kept as a tarball of the data folder (the
 * template) and a new database is unpacked from it instead: ~1-5 s.
 *
 * The template is a cache, not an input: it is made by this code from sql/migrations, named by a
 * digest of the PGlite version and of every migration's text (a changed migration is a new
 * template), written whole or not at all (a temporary file renamed), rebuilt when it cannot be
 * loaded, and the caller still runs `migrate` on what it loads (a no-op when it is complete).
 */

/** Where templates are kept: TALLY_TEMPLATE_DIR, else a folder of the system's temporary directory. */
export function templateDir(env: Record<string, string | undefined> = process.env): string {
  return env.TALLY_TEMPLATE_DIR || path.join(os.tmpdir(), 'x402-tally-templates');
}

function pgliteVersion(): string {
  const file = path.join(projectRoot, 'node_modules', '@electric-sql', 'pglite', 'package.json');
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The template's file for these migrations under this PGlite. */
export function templatePath(migrations: Migration[] = loadMigrations(), dir = templateDir()): string {
  const hash = createHash('sha256').update(`pglite ${pgliteVersion()}\n`);
  for (const m of migrations) hash.update(`${m.version} ${m.name}\n${m.sql}\n`);
  return path.join(dir, `migrated-${hash.digest('hex').slice(0, 16)}.tgz`);
}

/**
 * Opens a new embedded database (under `dataDir`, or in memory when null) with every migration
 * applied: unpacked from the template when there is one, else made with initdb and `migrate`,
 * and its data folder then kept as the template for next time. `settings` are extra server
 * settings (name -> value) for this open only.
 */
export async function openMigratedPGlite(
  dataDir: string | null,
  settings: Record<string, string> = {},
): Promise<{ pglite: PGlite; fromTemplate: boolean }> {
  const migrations = loadMigrations();
  const file = templatePath(migrations);
  // A folder that already holds a database is opened as it is, never unpacked over or deleted.
  if (dataDir !== null && existsSync(path.join(dataDir, 'PG_VERSION'))) {
    return { pglite: await openPGlite(dataDir, { settings }), fromTemplate: false };
  }
  if (existsSync(file)) {
    try {
      // Into a folder, the tarball is unpacked by streaming and the folder opened as it is; PGlite's
      // own loadDataDir holds the whole unpacked archive (42 MB) and its copies in memory
      // (docs/benchmarks.md, "Audit memory"), which only a database in memory still needs.
      let pglite: PGlite;
      if (dataDir === null) {
        pglite = await openPGlite(null, { settings, loadDataDir: new Blob([readFileSync(file)]) });
      } else {
        await untarGz(file, dataDir);
        pglite = await openPGlite(dataDir, { settings });
      }
      return { pglite, fromTemplate: true };
    } catch {
      // A template that does not load (another PGlite build, a damaged file) is made again.
      if (dataDir !== null) rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const pglite = await openPGlite(dataDir, { settings });
  await migrate(new Kysely({ dialect: new PGliteDialect(pglite) }), migrations);
  await keepTemplate(pglite, file).catch(() => {}); // a cache: failing to write it only costs time
  return { pglite, fromTemplate: false };
}

async function keepTemplate(pglite: PGlite, file: string): Promise<void> {
  // Everything on disk first, so the tarball is the data folder of a cleanly checkpointed database.
  await pglite.query('checkpoint');
  const dump = await pglite.dumpDataDir('gzip');
  const bytes = Buffer.from(await dump.arrayBuffer());
  mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, file);
}

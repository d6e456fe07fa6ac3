import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlDir } from '../../lib/paths.ts';
import { describeSchema } from '../describe.ts';
import { loadMigrations } from '../migrate.ts';
import { PGliteDialect } from './dialect.ts';
import { openMigratedPGlite, templatePath } from './template.ts';

/**
 * The migrated template (src/db/pglite/template.ts) is a cache of what initdb and every migration
 * make: a database opened from it must be the committed schema (sql/schema.txt, itself checked
 * against a database migrated step by step in src/db/describe.test.ts), and a damaged template
 * must be made again, never trusted.
 */
describe('the migrated template of the embedded database', () => {
  let dir: string;
  const saved = process.env.TALLY_TEMPLATE_DIR;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tally-template-'));
    process.env.TALLY_TEMPLATE_DIR = dir;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.TALLY_TEMPLATE_DIR;
    else process.env.TALLY_TEMPLATE_DIR = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Opens one database, returns whether it came from the template and its described schema. */
  async function openOnce(dataDir: string | null) {
    const { pglite, fromTemplate } = await openMigratedPGlite(dataDir);
    try {
      const db = new Kysely<any>({ dialect: new PGliteDialect(pglite) });
      const versions = await sql<{ n: number }>`select count(*)::int as n from schema_migrations`.execute(db);
      return { fromTemplate, schema: await describeSchema(db), migrations: versions.rows[0]!.n };
    } finally {
      await pglite.close();
    }
  }

  it('behavior: made on first use, then used; the database is the committed schema either way', async () => {
    const committed = readFileSync(path.join(sqlDir, 'schema.txt'), 'utf8');
    const file = templatePath();
    expect(existsSync(file)).toBe(false);

    // Made from a database in a folder, as the demo makes it; then unpacked into another folder,
    // as the audit's scratch database is.
    mkdirSync(path.join(dir, 'a'));
    const first = await openOnce(path.join(dir, 'a', 'pglite'));
    expect(first.fromTemplate).toBe(false);
    expect(existsSync(file)).toBe(true);
    expect(first.schema).toBe(committed);
    expect(first.migrations).toBe(loadMigrations().length);

    mkdirSync(path.join(dir, 'b'));
    const second = await openOnce(path.join(dir, 'b', 'pglite')); // as openDatabase names it, its parent made
    expect(second.fromTemplate).toBe(true);
    expect(second.schema).toBe(committed);
    expect(second.migrations).toBe(loadMigrations().length);
  }, 300_000);

  it('error: a damaged template is not trusted: the database is made again, and so is the template', async () => {
    const file = templatePath();
    writeFileSync(file, 'not a tarball');
    // Into a folder, as the audit's scratch database (unpacked by streaming, src/db/pglite/untar.ts).
    mkdirSync(path.join(dir, 'c'));
    const again = await openOnce(path.join(dir, 'c', 'pglite'));
    expect(again.fromTemplate).toBe(false);
    expect(again.schema).toBe(readFileSync(path.join(sqlDir, 'schema.txt'), 'utf8'));
    expect(readFileSync(file).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b])); // gzip again
  }, 300_000);

  it('behavior: a changed migration names another template', () => {
    const migrations = loadMigrations();
    const changed = migrations.map((m, i) => (i === migrations.length - 1 ? { ...m, sql: `${m.sql}\n-- x` } : m));
    expect(templatePath(changed, dir)).not.toBe(templatePath(migrations, dir));
    expect(templatePath(migrations, dir)).toBe(templatePath(loadMigrations(), dir));
  });
});

import { existsSync } from 'node:fs';
import { openMigratedPGlite, templatePath } from '../src/db/pglite/template.ts';
import { ensurePgTemplate } from './helpers/pg-template.ts';

/**
 * Runs once per project before its test workers start: makes the migrated templates every fresh
 * test database is copied from (test/helpers/db.ts), so that workers do not each migrate one at
 * the same time. Both are kept between runs, named by a digest of the migrations; an existing one
 * is used as it is.
 */
export default async function setup(): Promise<void> {
  if (!existsSync(templatePath())) {
    const { pglite } = await openMigratedPGlite(null);
    await pglite.close();
  }
  if (process.env.TEST_DATABASE_URL) await ensurePgTemplate(process.env.TEST_DATABASE_URL);
}

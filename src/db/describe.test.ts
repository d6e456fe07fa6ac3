import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sqlDir } from '../lib/paths.ts';
import { backends, freshDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { describeSchema } from './describe.ts';

describe.each(backends())('the migrated schema on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: matches sql/schema.txt (run `npm run schema:describe` after changing a migration)', async () => {
    database = await freshDatabase(backend);
    const committed = readFileSync(path.join(sqlDir, 'schema.txt'), 'utf8');
    expect(await describeSchema(database.db)).toBe(committed);
  });
});

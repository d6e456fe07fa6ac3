// Writes sql/schema.txt from a freshly migrated in-memory database: `npm run schema:describe`.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { describeSchema } from '../src/db/describe.ts';
import { sqlDir } from '../src/lib/paths.ts';

const database = await openDatabase({ dataDir: null });
try {
  await migrate(database.db);
  writeFileSync(path.join(sqlDir, 'schema.txt'), await describeSchema(database.db));
} finally {
  await database.close();
}

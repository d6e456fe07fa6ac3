import { existsSync } from 'node:fs';
import path from 'node:path';
import { TallyError } from '../lib/errors.ts';
import type { Config } from '../config/index.ts';
import { openDatabase, type Database } from '../db/index.ts';
import { acquireDataDirLock } from '../run/lock.ts';

/**
 * Opens the configured database: Postgres when DATABASE_URL is set, else the embedded PGlite
 * under DATA_DIR. An embedded directory is taken by one process at a time (exit 75 when another
 * holds it), because PGlite is not built to be shared between processes. `readOnly`: the
 * embedded database must exist already (nothing is created).
 */
export async function openStore(
  config: Config,
  options: { dataDir?: string; readOnly?: boolean } = {},
): Promise<Database> {
  if (config.DATABASE_URL) return openDatabase({ databaseUrl: config.DATABASE_URL });
  const dataDir = path.resolve(options.dataDir ?? config.DATA_DIR);
  // A command that only reads must not leave an empty database behind where there was none.
  if (options.readOnly && !existsSync(path.join(dataDir, 'pglite'))) {
    throw new TallyError(
      `there is no embedded database in ${dataDir}: run \`x402-tally run\` (or \`migrate\`) first, or set DATA_DIR or DATABASE_URL`,
    );
  }
  const lock = acquireDataDirLock(dataDir);
  try {
    const database = await openDatabase({ dataDir });
    return {
      ...database,
      close: async () => {
        try {
          await database.close();
        } finally {
          await lock.release();
        }
      },
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/** Where the embedded database lives, for messages. */
export function describeStore(config: Config): string {
  return config.DATABASE_URL ? 'postgres' : `embedded database in ${path.resolve(config.DATA_DIR)}`;
}

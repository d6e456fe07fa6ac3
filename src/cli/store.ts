import path from 'node:path';
import type { Config } from '../config/index.ts';
import { openDatabase, type Database } from '../db/index.ts';
import { acquireDataDirLock } from '../run/lock.ts';

/**
 * Opens the configured database: Postgres when DATABASE_URL is set, else the embedded PGlite
 * under DATA_DIR. An embedded directory is taken by one process at a time (exit 75 when another
 * holds it), because PGlite is not built to be shared between processes.
 */
export async function openStore(config: Config, options: { dataDir?: string } = {}): Promise<Database> {
  if (config.DATABASE_URL) return openDatabase({ databaseUrl: config.DATABASE_URL });
  const dataDir = path.resolve(options.dataDir ?? config.DATA_DIR);
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

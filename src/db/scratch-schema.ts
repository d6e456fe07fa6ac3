import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase } from './index.ts';

export interface ScratchSchema {
  /** The schema's name (`<prefix>_<8 hex>`). */
  name: string;
  /** `baseUrl` with `search_path` set to the schema: every table created through it lands there. */
  url: string;
  /** Drops the schema and everything in it. Safe to call twice. */
  drop(): Promise<void>;
}

/**
 * A new, empty Postgres schema of its own inside the database of `baseUrl`, for tests and
 * benchmarks that must never touch tables others use. Names are random, so runs never collide.
 */
export async function createScratchSchema(baseUrl: string, prefix: string): Promise<ScratchSchema> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = async (text: string) => {
    const database = await openDatabase({ databaseUrl: baseUrl, maxConnections: 1 });
    try {
      await sql.raw(text).execute(database.db);
    } finally {
      await database.close();
    }
  };
  await admin(`create schema ${name}`);
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${name}`);
  let dropped = false;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await admin(`drop schema if exists ${name} cascade`);
    },
  };
}

import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { OID, parseDate, parseInt8, parseNumeric } from '../types.ts';

/** pg's parser of int8[] (oid 1016): the elements' texts (its types name only scalar oids). */
const textArrayParser = (pg.types.getTypeParser as (oid: number, format: 'text') => (text: string) => unknown)(
  1016,
  'text',
);

const parsers: Record<number, (text: string) => unknown> = {
  [OID.int8]: parseInt8,
  [OID.numeric]: parseNumeric,
  [OID.date]: parseDate,
  // numeric[] (method 3.0.0's per-class revenue): each element as a numeric, as PGlite does for
  // arrays of a type it has a parser for (pg's own parser makes them floats). pg's int8[] parser
  // splits the array text and keeps each element's text.
  [OID.numericArray]: (text) =>
    (textArrayParser(text) as (string | null)[]).map((e) => (e === null ? null : parseNumeric(e))),
};

/** A pg pool whose type parsing matches the embedded backend (per pool, not global). */
export function openPgPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        parsers[oid] ?? pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client's error (server restart) must not crash the process; the next query fails
  // with a classified error instead.
  pool.on('error', () => {});
  // Nor a checked-out client's: pg emits 'error' on a client whose connection ends, and pg-pool
  // listens only while the client is idle. A backend terminated during a query (57P01) ends the
  // connection while the client is still checked out; the query itself fails with that error.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * The pool as Kysely uses it. A backend that ends during a query (pg_terminate_backend, a
 * restart, a failover) fails that query with a FATAL error before its socket closes; Kysely then
 * releases the client, and pg-pool, which hands out the last released client first, would give
 * it to the next query, which would fail too. Such a client is released with its error instead,
 * which makes the pool drop it, so only the query that met the termination fails.
 */
export function kyselyPool(pool: pg.Pool): PostgresPool {
  return {
    connect: async () => {
      const client = await pool.connect();
      let ended: Error | undefined;
      const query = async (sql: string, parameters: readonly unknown[]) => {
        try {
          return await client.query(sql, [...parameters]);
        } catch (error) {
          if (endsSession(error)) ended = error as Error;
          throw error;
        }
      };
      // Only the (sql, parameters) form: the cursor form is for Kysely's stream(), which needs a
      // `cursor` in the dialect config, and openDatabase gives none.
      return { query: query as unknown as PostgresPoolClient['query'], release: () => client.release(ended) };
    },
    end: () => pool.end(),
  };
}

/** Whether a Postgres error ended the session: severity FATAL or PANIC (e.g. 57P01, admin_shutdown). */
function endsSession(error: unknown): boolean {
  const severity = (error as { severity?: unknown } | null)?.severity;
  return severity === 'FATAL' || severity === 'PANIC';
}

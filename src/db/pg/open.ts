import pg from 'pg';
import { OID, parseDate, parseInt8, parseNumeric } from '../types.ts';

const parsers: Record<number, (text: string) => unknown> = {
  [OID.int8]: parseInt8,
  [OID.numeric]: parseNumeric,
  [OID.date]: parseDate,
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
  return pool;
}

import { PGlite } from '@electric-sql/pglite';
import { OID, parseDate, parseInt8, parseNumeric } from '../types.ts';

/** Opens the embedded database under `dataDir` (created when missing), or in memory when null. */
export async function openPGlite(dataDir: string | null): Promise<PGlite> {
  const options = {
    parsers: { [OID.int8]: parseInt8, [OID.numeric]: parseNumeric, [OID.date]: parseDate },
  };
  const pglite = dataDir === null ? new PGlite(options) : new PGlite(dataDir, options);
  await pglite.waitReady;
  return pglite;
}

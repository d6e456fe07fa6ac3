import type { PGlite } from '@electric-sql/pglite';
import { OID, parseDate, parseInt8, parseNumeric } from '../types.ts';

/**
 * Server settings of the embedded database, on top of PGlite's own start flags (which already turn
 * `fsync` off and parallel workers off). See docs/operations.md, "Embedded database", for what they
 * mean for a killed process, and docs/benchmarks.md for what they save.
 */
export const PGLITE_SETTINGS: Record<string, string> = {
  // No WAL for rows written into a table created or emptied (`truncate`) in the same transaction,
  // as a cold run does for the method's work tables: the table's files are written out at commit
  // instead. Crash-safe; it only rules out replicas and point-in-time recovery, which a database
  // inside one process has no use for.
  wal_level: 'minimal',
  max_wal_senders: '0',
  // The method's temporary tables (up to a few hundred MB at a million payments) in memory rather
  // than in files; taken only as a session's temporary tables grow.
  temp_buffers: '256MB',
};

/**
 * Opens the embedded database under `dataDir` (created when missing), or in memory when null.
 * `settings` are added to PGLITE_SETTINGS (and win); `loadDataDir` is a tarball of a data folder
 * to start from instead of initdb (src/db/pglite/template.ts).
 */
export async function openPGlite(
  dataDir: string | null,
  options: { settings?: Record<string, string>; loadDataDir?: Blob } = {},
): Promise<PGlite> {
  // Loaded here, not at the top: a process on Postgres never opens PGlite, and importing it
  // costs ~35 MB of resident memory (measured: RSS after `import('@electric-sql/pglite')`,
  // 107 -> 142 MB), a tenth of a whole run's peak at 200,000 payments (bench/indexer.ts --whole).
  const { PGlite } = await import('@electric-sql/pglite');
  const settings = { ...PGLITE_SETTINGS, ...options.settings };
  const pgliteOptions = {
    parsers: { [OID.int8]: parseInt8, [OID.numeric]: parseNumeric, [OID.date]: parseDate },
    startParams: [
      ...PGlite.defaultStartParams,
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  };
  const pglite = dataDir === null ? new PGlite(pgliteOptions) : new PGlite(dataDir, pgliteOptions);
  await pglite.waitReady;
  return pglite;
}

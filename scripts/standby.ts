/**
 * A primary and a streaming standby to try `serve` on a replica by hand (docs/operations.md,
 * "Serving from a standby"); test/e2e/standby.test.ts checks the same setup. Run as root:
 *
 *   npx tsx scripts/standby.ts            (ports STANDBY_PRIMARY_PORT 5451, STANDBY_PORT 5452)
 *
 * Makes both clusters, migrates the primary, makes the SELECT-only role `tally_reader`, prints
 * the commands to publish on the primary and serve from the standby, and drops both clusters on
 * Ctrl-C (or on any failure).
 */
import { sql } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { createStandbyPair, standbyPrerequisites } from './standby/clusters.ts';

const missing = standbyPrerequisites();
if (missing) {
  console.error(`cannot make the clusters: ${missing}`);
  process.exit(1);
}
const primaryPort = Number(process.env.STANDBY_PRIMARY_PORT ?? 5451);
const standbyPort = Number(process.env.STANDBY_PORT ?? 5452);
const pair = await createStandbyPair({ name: 'tally_standby', primaryPort, standbyPort });
try {
  const primary = await openDatabase({ databaseUrl: pair.primaryUrl, maxConnections: 1 });
  try {
    await migrate(primary.db);
    await sql
      .raw(
        'create role tally_reader login; grant usage on schema public to tally_reader; ' +
          'grant select on all tables in schema public to tally_reader',
      )
      .execute(primary.db);
  } finally {
    await primary.close();
  }
  const reader = new URL(pair.standbyUrl);
  reader.username = 'tally_reader';
  console.log(`primary (writes): ${pair.primaryUrl}
standby (reads):  ${reader.toString()}

  DATABASE_URL=${pair.primaryUrl} x402-tally run ...      # publishes on the primary
  DATABASE_URL=${reader.toString()} x402-tally serve      # serves from the standby

Ctrl-C drops both clusters.`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
} finally {
  pair.drop();
}

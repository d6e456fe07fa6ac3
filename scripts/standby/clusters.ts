/**
 * A primary and a physical streaming standby, made with the Debian cluster tools (postgresql-common):
 * `pg_createcluster` for both, `pg_basebackup -R` for the standby's data. Used by
 * test/e2e/standby.test.ts and scripts/standby.ts (docs/operations.md, "Serving from a standby").
 *
 * Both clusters listen on 127.0.0.1 only and trust local TCP connections (throwaway clusters of a
 * test: no password to hand around). They run as the `postgres` user, so this must run as root
 * (pg_createcluster and pg_basebackup are run through `runuser -u postgres`). Clusters of the same
 * names left by an interrupted run are dropped first; `drop()` drops both, whatever state they are in.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const PG_VERSION = process.env.STANDBY_PG_VERSION ?? '15';

export interface StandbyPair {
  /** Superuser URLs of the `tally` database on each cluster. */
  primaryUrl: string;
  standbyUrl: string;
  stopPrimary(): void;
  startPrimary(): void;
  drop(): void;
}

/** Why the pair cannot be made here (not root, a tool missing), or null when it can. */
export function standbyPrerequisites(): string | null {
  if (process.getuid?.() !== 0) return 'it must run as root (it runs pg_createcluster and pg_basebackup as postgres)';
  for (const tool of ['pg_createcluster', 'pg_ctlcluster', 'pg_dropcluster', 'pg_basebackup', 'runuser']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      return `${tool} is not installed (apt-get install -y postgresql-${PG_VERSION} postgresql-common)`;
  }
  if (!existsSync(`/usr/lib/postgresql/${PG_VERSION}/bin/postgres`))
    return `PostgreSQL ${PG_VERSION} is not installed (apt-get install -y postgresql-${PG_VERSION}; or set STANDBY_PG_VERSION)`;
  return null;
}

/** Runs a command; throws naming it, with its output, when it fails. */
function run(command: string, args: readonly string[]): string {
  const out = spawnSync(command, args, { encoding: 'utf8' });
  if (out.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed (${out.status ?? out.signal}): ${out.stderr || out.stdout}`);
  return out.stdout;
}

const asPostgres = (command: string, args: readonly string[]) =>
  run('runuser', ['-u', 'postgres', '--', command, ...args]);

const HBA = `local all postgres peer
host all all 127.0.0.1/32 trust
host replication all 127.0.0.1/32 trust
`;

function dropCluster(name: string): void {
  // --stop: a running cluster is stopped first; a missing one is not an error here.
  spawnSync('pg_dropcluster', ['--stop', PG_VERSION, name], { encoding: 'utf8' });
}

function createCluster(name: string, port: number, settings: Record<string, string>): string {
  const dataDir = `/var/lib/postgresql/${PG_VERSION}/${name}`;
  run('pg_createcluster', [PG_VERSION, name, '-p', String(port), '-d', dataDir, '--start-conf=manual']);
  const conf = `/etc/postgresql/${PG_VERSION}/${name}`;
  writeFileSync(`${conf}/pg_hba.conf`, HBA);
  // Debian's postgresql.conf includes conf.d/: one file of ours, each value quoted as a string.
  const lines = Object.entries({ listen_addresses: '127.0.0.1', fsync: 'off', ...settings }).map(
    ([k, v]) => `${k} = '${v}'\n`,
  );
  writeFileSync(`${conf}/conf.d/tally.conf`, lines.join(''));
  return dataDir;
}

/**
 * Makes the pair: the primary on `primaryPort` with a `tally` database, then the standby on
 * `standbyPort` from a base backup of it (streaming, `standby.signal` and `primary_conninfo`
 * written by `-R`), both started. `standbySettings` are extra settings of the standby (e.g. a
 * short max_standby_streaming_delay). Drops whatever it made when a step fails.
 */
export async function createStandbyPair(opts: {
  name: string;
  primaryPort: number;
  standbyPort: number;
  standbySettings?: Record<string, string>;
}): Promise<StandbyPair> {
  const primary = `${opts.name}_primary`;
  const standby = `${opts.name}_standby`;
  const drop = () => {
    dropCluster(standby);
    dropCluster(primary);
  };
  drop();
  try {
    createCluster(primary, opts.primaryPort, { wal_level: 'replica', max_wal_senders: '4' });
    run('pg_ctlcluster', [PG_VERSION, primary, 'start']);
    asPostgres('psql', ['-p', String(opts.primaryPort), '-qc', 'create database tally']);
    const standbyDir = createCluster(standby, opts.standbyPort, { hot_standby: 'on', ...opts.standbySettings });
    // Emptied, not removed: the directory (postgres' own, mode 0700) is where pg_basebackup writes.
    for (const entry of readdirSync(standbyDir)) rmSync(path.join(standbyDir, entry), { recursive: true, force: true });
    asPostgres('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(opts.primaryPort), '-U', 'postgres'],
      ...['-D', standbyDir, '-R', '-X', 'stream', '-c', 'fast'],
    ]);
    run('pg_ctlcluster', [PG_VERSION, standby, 'start']);
  } catch (error) {
    drop();
    throw error;
  }
  const url = (port: number) => `postgres://postgres@127.0.0.1:${port}/tally`;
  return {
    primaryUrl: url(opts.primaryPort),
    standbyUrl: url(opts.standbyPort),
    stopPrimary: () => run('pg_ctlcluster', [PG_VERSION, primary, 'stop', '-m', 'fast']),
    startPrimary: () => run('pg_ctlcluster', [PG_VERSION, primary, 'start']),
    drop,
  };
}

import { writeFileSync } from 'node:fs';
import { runCommand } from '../../src/cli/command.ts';
import { BASE_USDC } from '../../src/config/index.ts';
import type { CommandIo } from '../../src/cli/context.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { backends, freshDatabase, migratedDataDir, type TestDatabase } from './db.ts';

/** Base USDC, under the name these tests use. */
export const USDC = BASE_USDC;

/** USDC as micro-USDC: usdc(1.5) = 1500000n. */
export const usdc = (n: number) => BigInt(Math.round(n * 1_000_000));

/**
 * Runs one command line in process, with its output lines (stdout and stderr, in order) captured
 * and logs silent; `io` adds or replaces parts of the command's io (deps, hook, a logger).
 */
export async function tally(
  argv: string[],
  env: Record<string, string | undefined>,
  io: Partial<CommandIo> = {},
): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await runCommand(argv, env, {
    out: (l) => out.push(l),
    err: (l) => out.push(l),
    log: silentLogger,
    progress: () => {},
    ...io,
  });
  return { code, out: out.join('\n') };
}

/** A catalog item: one Base USDC listing paid to `seller`. */
export function oneSellerItem(seller: string) {
  const resource = 'https://seller1.example/api';
  const accepts = [
    {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '10000',
      resource,
      payTo: seller,
      asset: USDC,
      maxTimeoutSeconds: 60,
      description: 'x',
    },
  ];
  return { resource, type: 'http', x402Version: 1, lastUpdated: '2025-10-01T00:00:00Z', accepts };
}

/** Writes a catalog file of one Base USDC listing paid to `seller`. */
export function writeOneSellerCatalog(file: string, seller: string): void {
  writeFileSync(file, JSON.stringify({ resources: [oneSellerItem(seller)] }));
}

/** Where a CLI test runs: the embedded database in a folder, or a Postgres schema of its own. */
export interface Target {
  backend: 'pglite' | 'pg';
  env: Record<string, string | undefined>;
  database?: TestDatabase;
}

/**
 * One target per backend of backends(), each with `common` settings; `dataDir` for the embedded
 * one. Both start migrated (a clone of the Postgres template, a DATA_DIR unpacked from PGlite's),
 * so the first `run` does not migrate; `migrated: false` gives an empty database and a new
 * DATA_DIR, for a test of that first run.
 */
export async function targetsFor(
  common: Record<string, string>,
  dataDir: string,
  options: { migrated?: boolean } = {},
): Promise<Target[]> {
  const migrated = options.migrated !== false;
  const targets: Target[] = [];
  for (const { backend } of backends()) {
    if (backend === 'pg') {
      const database = await freshDatabase('pg', { migrate: migrated });
      targets.push({ backend, env: { ...common, DATABASE_URL: database.url }, database });
    } else {
      if (migrated) await migratedDataDir(dataDir);
      targets.push({ backend, env: { ...common, DATA_DIR: dataDir } });
    }
  }
  return targets;
}

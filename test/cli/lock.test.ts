import { fixedChain } from '../helpers/fixed-chain.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog, storeCatalogSnapshot } from '../../src/catalog/index.ts';
import { loadConfig, BASE_USDC as USDC } from '../../src/config/index.ts';
import { isTemporary, TemporaryError } from '../../src/lib/errors.ts';
import { computeGeneration } from '../../src/method/index.ts';
import { publishGeneration, pruneGenerations } from '../../src/publish/index.ts';
import { runCycle, type CycleDeps } from '../../src/run/cycle.ts';
import { acquireDataDirLock } from '../../src/run/lock.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';

const SELLER = '0x' + '11'.repeat(20);
const ITEM = {
  resource: 'https://api.example/x',
  type: 'http',
  x402Version: 1,
  lastUpdated: '2025-12-01T00:00:00Z',
  accepts: [
    {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '1000',
      resource: 'https://api.example/x',
      payTo: SELLER,
      asset: USDC,
      maxTimeoutSeconds: 60,
    },
  ],
};

// Every stage but the chain is real; the chain is a fixed as-of point with no payments.
function fakeDeps(): CycleDeps {
  return {
    readCatalog: async (source, o) => buildCatalog([ITEM], { source, fetchedAt: new Date('2025-12-31T00:00:00Z') }, o),
    storeCatalogSnapshot,
    ...fixedChain({ number: 100n, hash: `0x${'ab'.repeat(32)}`, timestamp: 1_767_139_200n }),
    computeGeneration,
    publishGeneration,
    pruneGenerations,
  };
}

describe.each(backends())('run lock ($backend)', ({ backend }) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase(backend);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('behavior: a second run while one holds the lock fails at once with a temporary error, then runs after', async () => {
    const config = loadConfig({
      DATABASE_URL: database.url,
      RPC_URL: 'http://127.0.0.1:1',
      CATALOG_SOURCE: 'catalog.json',
    });
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    let leave!: () => void;
    const gate = new Promise<void>((r) => (leave = r));
    const first = runCycle(database, config, fakeDeps(), {
      hook: async (point) => {
        if (point === 'before:catalog') {
          entered();
          await gate;
        }
      },
    });
    await inside;
    const second = await runCycle(database, config, fakeDeps()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(second).toBeInstanceOf(TemporaryError);
    expect(isTemporary(second)).toBe(true);
    leave();
    const report = await first;
    expect(report.generation).toBe(1);
    // Released: the next run takes the lock and publishes the next generation.
    const third = await runCycle(database, config, fakeDeps());
    expect(third.generation).toBe(2);
  });
});

describe('acquireDataDirLock', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-lock-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('behavior: a directory held by a live process is refused (exit 75), then free after release', async () => {
    const lock = acquireDataDirLock(dir);
    expect(() => acquireDataDirLock(dir)).toThrow(TemporaryError);
    await lock.release();
    const again = acquireDataDirLock(dir);
    await again.release();
  });

  it('behavior: a lock left by a process that is gone is taken over', async () => {
    // pid 2^22+1 is above Linux's default pid_max, so no process has it.
    writeFileSync(path.join(dir, 'tally.lock'), String(4_194_305));
    const lock = acquireDataDirLock(dir);
    await lock.release();
  });
});

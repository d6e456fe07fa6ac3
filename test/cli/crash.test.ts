import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config, BASE_USDC as USDC } from '../../src/config/index.ts';
import {
  compareGenerationRows,
  publishedGeneration,
  readGenerationRows,
  type GenerationRows,
} from '../../src/publish/index.ts';
import { runCycle } from '../../src/run/cycle.ts';
import { crashAt, InjectedCrash } from '../helpers/crash.ts';
import { defaultDeps } from '../../src/run/deps.ts';
import { FakeChain, serveJsonRpc, type Hex, type RpcServer } from '../chain/fake-rpc.ts';
import { backends, freshDatabase } from '../helpers/db.ts';

// A chain of 250,000 blocks of 15 s (43.4 days, more than the 31 the window needs), so the
// backfill (from block ~77,000) is three stored chunks of the indexer's 100,000-block alignment
// and a crash can fall between two of them.
const HEAD = 250_000;
const GENESIS = 1_760_000_000;
const seller = (n: number) => `0x${String(n).repeat(40).slice(0, 40)}`;
const payer = (n: number) => `0x${'a'.repeat(39)}${n}`;
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as Hex;

function buildChain(): FakeChain {
  const chain = new FakeChain({ usdc: USDC, head: HEAD, genesisTimestamp: GENESIS, blockTime: 15 });
  let n = 1;
  // Seller 1: six settlements by three payers, spread over the chunks.
  for (const [block, from, value] of [
    [90_000, 1, 100n],
    [120_000, 2, 200n],
    [150_000, 3, 300n],
    [180_000, 1, 400n],
    [210_000, 2, 500n],
    [240_000, 3, 600n],
  ] as const) {
    chain.settle(block, tx(n), payer(from), seller(1), value, BigInt(n));
    n++;
  }
  // Seller 2: two settlements (insufficient evidence) and a plain transfer that is not revenue.
  chain.settle(160_000, tx(n++), payer(4), seller(2), 7_000n, 99n);
  chain.settle(230_000, tx(n++), payer(4), seller(2), 9_000n, 98n);
  chain.transfer(235_000, tx(n++), payer(5), seller(2), 1_000_000n);
  // Before the window: counts nowhere in the 30-day numbers.
  chain.settle(100, tx(n++), payer(1), seller(1), 5_000_000n, 97n);
  return chain;
}

function catalogItems() {
  return [1, 2, 3].map((s) => ({
    resource: `https://seller${s}.example/api`,
    type: 'http',
    x402Version: 1,
    lastUpdated: '2025-12-01T00:00:00Z',
    accepts: [
      {
        scheme: 'exact',
        network: 'base',
        maxAmountRequired: '1000',
        resource: `https://seller${s}.example/api`,
        payTo: seller(s),
        asset: USDC,
        maxTimeoutSeconds: 60,
        description: 'weather data',
      },
    ],
  }));
}

// The points where a run is interrupted: before every stage, between two stored chunks, inside
// the method's transaction and inside the publish transaction.
const CRASH_POINTS = [
  'before:catalog',
  'before:snapshot',
  'before:as_of',
  'before:sync',
  'sync:chunk:1',
  'sync:chunk:2',
  'before:compute',
  'compute:sellers',
  'compute:digests',
  'compute:ready',
  'before:publish',
  'publish:commit',
];

describe.each(backends())('interrupted runs ($backend)', ({ backend }) => {
  let rpc: RpcServer;
  let dir: string;
  let reference: GenerationRows;
  const configFor = (url: string | undefined): Config =>
    loadConfig({
      DATABASE_URL: url,
      RPC_URL: rpc.url,
      CATALOG_SOURCE: path.join(dir, 'catalog.json'),
      AS_OF_BLOCK: String(HEAD),
    });

  beforeAll(async () => {
    const chain = buildChain();
    rpc = await serveJsonRpc((method, params) => chain.call(method, params));
    dir = mkdtempSync(path.join(os.tmpdir(), 'tally-crash-'));
    writeFileSync(path.join(dir, 'catalog.json'), JSON.stringify(catalogItems()));
    const database = await freshDatabase(backend);
    try {
      const report = await runCycle(database, configFor(database.url), defaultDeps());
      reference = await readGenerationRows(database.db, report.generation);
    } finally {
      await database.close();
    }
  });
  afterAll(async () => {
    await rpc?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('default: the uninterrupted run publishes the numbers worked out from the chain', () => {
    const s1 = reference.sellers.find((s) => s.seller_address === seller(1))!;
    const s2 = reference.sellers.find((s) => s.seller_address === seller(2))!;
    const s3 = reference.sellers.find((s) => s.seller_address === seller(3))!;
    // Window: (as_of - 30 d, as_of] = blocks after 250,000 - 172,800 = 77,200. Seller 1: blocks
    // 90,000..240,000 = 100+200+300+400+500+600; the 5 USDC payment at block 100 is outside.
    expect(s1).toMatchObject({
      verified_revenue_30d_micro: 2100n,
      payments_30d: 6,
      payers_30d: 3,
      evidence_state: 'verified',
      median_payment_30d_micro: 300n,
    });
    // Seller 2: the two settlements only; the plain transfer is not revenue.
    expect(s2).toMatchObject({
      verified_revenue_30d_micro: 16_000n,
      payments_30d: 2,
      payers_30d: 1,
      evidence_state: 'insufficient',
    });
    expect(s3).toMatchObject({ verified_revenue_30d_micro: 0n, payments_30d: 0, evidence_state: 'not_observed' });
  });

  // A crash in the backfill needs a database with nothing indexed yet.
  it.each(['sync:chunk:1', 'sync:chunk:2'])(
    'behavior: a run killed at %s (mid-backfill) publishes nothing, and the next run gives the same numbers',
    async (point) => {
      const database = await freshDatabase(backend);
      try {
        const config = configFor(database.url);
        const crashed = await runCycle(database, config, defaultDeps(), { hook: crashAt(point) }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(crashed).toBeInstanceOf(InjectedCrash);
        expect(await publishedGeneration(database.db)).toBeNull();
        const report = await runCycle(database, config, defaultDeps());
        expect(await publishedGeneration(database.db)).toBe(report.generation);
        expect(compareGenerationRows(reference, await readGenerationRows(database.db, report.generation))).toEqual([]);
      } finally {
        await database.close();
      }
    },
  );

  it('behavior: a run killed at any other point leaves the live generation as it was, and the next run gives the same numbers', async () => {
    // One database through every crash point in turn (cheaper than one each, and it also shows
    // that a crashed run leaves nothing that disturbs the runs after it).
    const database = await freshDatabase(backend);
    try {
      const config = configFor(database.url);
      let live: number | null = null;
      for (const point of CRASH_POINTS.filter((p) => !p.startsWith('sync:'))) {
        const crashed = await runCycle(database, config, defaultDeps(), { hook: crashAt(point) }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(crashed, point).toBeInstanceOf(InjectedCrash);
        expect(await publishedGeneration(database.db), point).toBe(live);
        const report = await runCycle(database, config, defaultDeps());
        live = report.generation;
        expect(await publishedGeneration(database.db), point).toBe(live);
        expect(compareGenerationRows(reference, await readGenerationRows(database.db, live)), point).toEqual([]);
      }
    } finally {
      await database.close();
    }
  });

  it('behavior: a run killed after publishing (before prune) leaves a complete generation live', async () => {
    const database = await freshDatabase(backend);
    try {
      const config = configFor(database.url);
      await expect(runCycle(database, config, defaultDeps(), { hook: crashAt('before:prune') })).rejects.toBeInstanceOf(
        InjectedCrash,
      );
      const live = await publishedGeneration(database.db);
      expect(live).not.toBeNull();
      expect(compareGenerationRows(reference, await readGenerationRows(database.db, live!))).toEqual([]);
    } finally {
      await database.close();
    }
  });
});

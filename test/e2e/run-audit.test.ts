import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/index.ts';
import {
  anvilAccount,
  buyerAccount,
  deployUsdc,
  fund,
  latestBlock,
  mine,
  plainTransfer,
  setNextBlockTimestamp,
  settle,
  startAnvil,
  type AnvilInstance,
  type MinedTransfer,
  type UsdcDeployment,
} from '../../src/devchain/index.ts';
import {
  compareGenerationRows,
  formatDifference,
  readGenerationRows,
  type GenerationRows,
} from '../../src/publish/index.ts';
import { backends, freshDatabase, migratedDataDir, type TestDatabase } from '../helpers/db.ts';
import { tally } from '../helpers/e2e.ts';
import { BASE_USDC as USDC } from '../../src/config/index.ts';

// End to end on anvil running Circle's USDC at the Base address: run -> generation 1, more
// payments and 28 more days -> run -> generation 2, audits of both, and a tampered bundle.
const DAY = 86_400n;
const T0 = 1_760_000_000n; // 2025-10-09T08:53:20Z, genesis
const S1 = '0x5e11e50000000000000000000000000000000001' as Address;
const S2 = '0x5e11e50000000000000000000000000000000002' as Address;
const S3 = '0x5e11e50000000000000000000000000000000003' as Address;
const usdc = (n: number) => BigInt(Math.round(n * 1_000_000));

function catalog() {
  const item = (n: number, payTo: string, network = 'base', asset = USDC) => ({
    resource: `https://seller${n}.example/api`,
    type: 'http',
    x402Version: 1,
    lastUpdated: '2025-10-01T00:00:00Z',
    accepts: [
      {
        scheme: 'exact',
        network,
        maxAmountRequired: '10000',
        resource: `https://seller${n}.example/api`,
        payTo,
        asset,
        maxTimeoutSeconds: 60,
        description: 'weather forecast data',
      },
    ],
  });
  // Seller 1 has two listings; one listing is on another rail (not verifiable).
  return {
    resources: [
      item(1, S1),
      item(11, S1),
      item(2, S2),
      item(3, S3),
      item(4, S1, 'base-sepolia', '0x036cbd53842c5426634e7929541ec2318f3dcf7e'),
    ],
  };
}

interface Target {
  backend: 'pglite' | 'pg';
  env: Record<string, string | undefined>;
  database?: TestDatabase;
}

let anvil: AnvilInstance;
let dep: UsdcDeployment;
let dir: string;
const targets: Target[] = [];
const phase1: MinedTransfer[] = [];

async function payAt(ts: bigint, buyer: number, to: Address, value: bigint): Promise<MinedTransfer> {
  await setNextBlockTimestamp(anvil.url, ts);
  return settle(dep, { from: buyerAccount(buyer), to, value });
}

async function rowsOf(target: Target, generation: number): Promise<GenerationRows> {
  const database = target.database ?? (await openDatabase({ dataDir: String(target.env.DATA_DIR) }));
  try {
    return await readGenerationRows(database.db, generation);
  } finally {
    if (!target.database) await database.close();
  }
}

const seller = (rows: GenerationRows, address: string) => rows.sellers.find((s) => s.seller_address === address)!;

beforeAll(async () => {
  anvil = await startAnvil({ timestamp: T0 });
  dep = await deployUsdc(anvil.url);
  for (const n of [0, 1, 2, 3]) await fund(dep, buyerAccount(n).address, usdc(1000));
  dir = mkdtempSync(path.join(os.tmpdir(), 'tally-e2e-'));
  writeFileSync(path.join(dir, 'catalog.json'), JSON.stringify(catalog()));
  const common = {
    RPC_URL: anvil.url,
    CATALOG_SOURCE: path.join(dir, 'catalog.json'),
    CONFIRMATIONS: '0',
    LOG_LEVEL: 'silent',
  };
  for (const { backend } of backends()) {
    if (backend === 'pg') {
      // An empty database: this file's first run migrates Postgres (the CLI's own migration, end to end).
      const database = await freshDatabase('pg', { migrate: false });
      targets.push({ backend, env: { ...common, DATABASE_URL: database.url }, database });
    } else {
      // From the migrated template: bin.test.ts runs on a new DATA_DIR (docs/development.md, "Tests").
      targets.push({ backend, env: { ...common, DATA_DIR: await migratedDataDir(path.join(dir, 'data')) } });
    }
  }

  // Phase 1 (days 1 to 5): seller 1 is paid 1+2+3+4+5 USDC by three buyers; seller 2 0.7 USDC
  // once by a settlement, and 9.99 USDC by a plain transfer (not revenue); seller 3 nothing.
  phase1.push(await payAt(T0 + 1n * DAY, 0, S1, usdc(1)));
  phase1.push(await payAt(T0 + 2n * DAY, 1, S1, usdc(2)));
  phase1.push(await payAt(T0 + 4n * DAY, 2, S1, usdc(3)));
  phase1.push(await payAt(T0 + 4n * DAY + 1800n, 3, S2, usdc(0.7)));
  phase1.push(await payAt(T0 + 4n * DAY + 3600n, 0, S1, usdc(4)));
  phase1.push(await payAt(T0 + 5n * DAY, 1, S1, usdc(5)));
  await setNextBlockTimestamp(anvil.url, T0 + 5n * DAY + 60n);
  await fund(dep, anvilAccount(9).address, usdc(20));
  await plainTransfer(dep, { from: anvilAccount(9), to: S2, value: usdc(9.99) });
});

afterAll(async () => {
  await anvil?.stop();
  for (const t of targets) await t.database?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('run, run again, audit (anvil + real USDC)', () => {
  it('default: run publishes generation 1 with the numbers of the payments sent', async () => {
    for (const target of targets) {
      const { code, out } = await tally(['run'], target.env);
      expect(code, `${target.backend}: ${out}`).toBe(0);
      expect(out).toContain('published generation 1');
      const rows = await rowsOf(target, 1);
      expect(seller(rows, S1)).toMatchObject({
        verified_revenue_30d_micro: usdc(15),
        payments_30d: 5,
        payers_30d: 3,
        median_payment_30d_micro: usdc(3),
        evidence_state: 'verified',
        tier: 'verified',
        rank: 1,
        listing_count: 2,
      });
      expect(seller(rows, S2)).toMatchObject({
        verified_revenue_30d_micro: usdc(0.7),
        payments_30d: 1,
        payers_30d: 1,
        evidence_state: 'insufficient',
        tier: 'listed_only',
        rank: null,
      });
      expect(seller(rows, S3)).toMatchObject({
        verified_revenue_30d_micro: 0n,
        payments_30d: 0,
        evidence_state: 'not_observed',
        median_payment_30d_micro: null,
      });
      // Day 2025-10-13 (T0 + 4 days): 3 + 0.7 + 4 USDC, by buyers 2, 3 and 0, to two sellers.
      expect(rows.marketDaily.find((d) => d.day === '2025-10-13')).toMatchObject({
        payments: 3,
        volume_micro: usdc(7.7),
        payers: 3,
        sellers_paid: 2,
        tracked_sellers: 3,
        tracked_listings: 4,
      });
      expect(rows.listings).toHaveLength(5);
    }
  });

  it('behavior: after more payments and 28 days, run publishes generation 2 with the changed numbers', async () => {
    // Phase 2 (day 33): seller 2 is paid 0.1 USDC by each of four buyers; seller 3 0.05 once.
    // The window is now (day 3, day 33]: seller 1's payments of days 1 and 2 fell out of it.
    await payAt(T0 + 33n * DAY, 0, S2, usdc(0.1));
    await payAt(T0 + 33n * DAY + 10n, 1, S2, usdc(0.1));
    await payAt(T0 + 33n * DAY + 20n, 2, S2, usdc(0.1));
    await payAt(T0 + 33n * DAY + 30n, 3, S2, usdc(0.1));
    await payAt(T0 + 33n * DAY + 40n, 3, S3, usdc(0.05));
    await setNextBlockTimestamp(anvil.url, T0 + 33n * DAY + 3600n);
    await mine(anvil.url, 1);
    const head = await latestBlock(anvil.url);
    for (const target of targets) {
      const { code, out } = await tally(['run'], target.env);
      expect(code, `${target.backend}: ${out}`).toBe(0);
      expect(out).toContain(`published generation 2 as of block ${head.number}`);
      const rows = await rowsOf(target, 2);
      // Seller 1 keeps 3 + 4 + 5 USDC: three payments are fewer than the 5 the evidence needs,
      // so it leaves the ranking; seller 2 (five payments by four buyers) enters it at rank 1.
      expect(seller(rows, S1)).toMatchObject({
        verified_revenue_30d_micro: usdc(12),
        payments_30d: 3,
        payers_30d: 3,
        median_payment_30d_micro: usdc(4),
        evidence_state: 'insufficient',
        tier: 'listed_only',
        rank: null,
      });
      expect(seller(rows, S2)).toMatchObject({
        verified_revenue_30d_micro: usdc(1.1),
        payments_30d: 5,
        payers_30d: 4,
        median_payment_30d_micro: usdc(0.1),
        evidence_state: 'verified',
        tier: 'verified',
        rank: 1,
      });
      expect(seller(rows, S3)).toMatchObject({
        verified_revenue_30d_micro: usdc(0.05),
        payments_30d: 1,
        payers_30d: 1,
        evidence_state: 'insufficient',
        rank: null,
      });
      // Generation 1 is still there, unchanged.
      expect(seller(await rowsOf(target, 1), S1).verified_revenue_30d_micro).toBe(usdc(15));
    }
  });

  // Generation 2 is audited on every backend (the CLI's audit reading Postgres, end to end),
  // generation 1 on the first; every other backend's generation 1 must equal the audited one in
  // everything the audit compares (compareGenerationRows). An audit there would recompute the
  // same: its scratch database is embedded whatever the target's backend, and its inputs (catalog
  // items, as-of block, sources, method) are the published generation's, equal by that comparison.
  it('behavior: audit of both generations recomputes every number (exit 0)', async () => {
    for (const [i, target] of targets.entries()) {
      for (const generation of i === 0 ? ['1', '2'] : ['2']) {
        const { code, out } = await tally(['audit', '--generation', generation], target.env);
        expect(code, `${target.backend} generation ${generation}: ${out}`).toBe(0);
        expect(out).toContain(`identical: every digest and number of generation ${generation}`);
        // The last line is the verdict, with the counts of the published generation (phase 1:
        // 6 payments; phase 2: seller 1's 3 left in the window, seller 2's 5, seller 3's 1).
        const counts = generation === '1' ? '6 payments, 3 sellers, 5 listings' : '9 payments, 3 sellers, 5 listings';
        expect(out.split('\n').at(-1)).toMatch(
          new RegExp(
            `^audit: identical: every digest and number of generation ${generation} recomputed from the chain ` +
              `\\(${counts}, \\d+ market days\\) in \\d+\\.\\d s$`,
          ),
        );
      }
    }
    const audited = await rowsOf(targets[0]!, 1);
    expect(audited.payments).toHaveLength(6); // (not an empty comparison: phase 1's payments)
    for (const target of targets.slice(1))
      expect(compareGenerationRows(await rowsOf(target, 1), audited).map(formatDifference), target.backend).toEqual([]);
  });

  it('error: a bundle with a payment removed and a value changed fails the audit, naming both', async () => {
    const target = targets[0]!;
    const bundle = path.join(dir, 'g2');
    expect((await tally(['export', '--generation', '2', '--out', bundle], target.env)).code).toBe(0);
    // Untouched, the bundle audits clean without our database.
    const clean = await tally(['audit', '--bundle', bundle], { RPC_URL: anvil.url, LOG_LEVEL: 'silent' });
    expect(clean.code, clean.out).toBe(0);

    // Remove seller 1's 3 USDC payment (day 4, in the window) and raise seller 2's revenue.
    const removed = phase1[2]!;
    const paymentsFile = path.join(bundle, 'payments.ndjson');
    const payments = readFileSync(paymentsFile, 'utf8').split('\n').filter(Boolean);
    const kept = payments.filter((l) => !l.includes(removed.hash));
    expect(kept).toHaveLength(payments.length - 1);
    writeFileSync(paymentsFile, kept.map((l) => `${l}\n`).join(''));
    const sellersFile = path.join(bundle, 'sellers.ndjson');
    const sellers = readFileSync(sellersFile, 'utf8');
    expect(sellers).toContain('"verified_revenue_30d_micro":1100000');
    writeFileSync(
      sellersFile,
      sellers.replace('"verified_revenue_30d_micro":1100000', '"verified_revenue_30d_micro":1200000'),
    );

    const { code, out } = await tally(['audit', '--bundle', bundle], { RPC_URL: anvil.url, LOG_LEVEL: 'silent' });
    expect(code).toBe(1);
    expect(out).toContain('bundle file payments.ndjson: sha256 differs from the manifest');
    expect(out).toContain('bundle file sellers.ndjson: sha256 differs from the manifest');
    // (method 3.0.0, the default: a payment is named with its class, seller and digest period;
    // the removed one was mined at T0 + 4 days, in the hour starting 3200 s before it)
    const hour = T0 + 4n * DAY - ((T0 + 4n * DAY) % 3600n);
    expect(hour).toBe(T0 + 4n * DAY - 3200n);
    const period = `${new Date(Number(hour) * 1000).toISOString().replace('.000Z', 'Z')} (${hour})`;
    expect(out).toContain(
      `payment ${removed.hash}:${removed.logIndex} (eip3009, seller ${S1}, period ${period}): published absent, recomputed present`,
    );
    expect(out).toContain(`seller ${S2} verified_revenue_30d_micro: published 1200000, recomputed 1100000`);
    // The last line says it differs, how much (the problems printed above it), and of what (the 8
    // payments left in the bundle).
    const problems = out.split('\n').filter((l) => l.startsWith('bundle file ')).length;
    expect(problems).toBeGreaterThanOrEqual(2);
    expect(out.split('\n').at(-1)).toMatch(
      new RegExp(
        `^audit: generation 2 DIFFERS: \\d+ difference\\(s\\), ${problems} bundle integrity problem\\(s\\) ` +
          `\\(8 payments, 3 sellers, 5 listings, \\d+ market days\\) in \\d+\\.\\d s$`,
      ),
    );
    expect(out.split('\n').filter((l) => l.startsWith('audit: '))).toHaveLength(1);

    // One seller, from its own logs only: the same difference, and nothing of the other seller.
    const one = await tally(['audit', '--bundle', bundle, '--seller', S2.toUpperCase().replace('0X', '0x')], {
      RPC_URL: anvil.url,
      LOG_LEVEL: 'silent',
    });
    expect(one.code, one.out).toBe(1);
    expect(one.out).toContain(`seller ${S2} verified_revenue_30d_micro: published 1200000, recomputed 1100000`);
    expect(one.out).not.toContain(removed.hash);
    expect(one.out.split('\n').at(-1)).toMatch(
      new RegExp(
        `^audit: seller ${S2} DIFFERS: \\d+ difference\\(s\\), ${problems} bundle integrity problem\\(s\\) \\(generation 2, 5 payments\\) in \\d+\\.\\d s$`,
      ),
    );
  });

  it('behavior: audit --seller recomputes one seller from its own logs (exit 0), and refuses a non-seller', async () => {
    const target = targets[0]!;
    const { code, out } = await tally(['audit', '--generation', '2', '--seller', S2], target.env);
    expect(code, out).toBe(0);
    expect(out).toContain(`identical: seller ${S2}'s digests and numbers recomputed from the chain`);
    expect(out.split('\n').at(-1)).toMatch(
      new RegExp(
        `^audit: identical: seller ${S2}'s digests and numbers recomputed from the chain \\(generation 2, 5 payments\\) in \\d+\\.\\d s$`,
      ),
    );
    const bad = await tally(['audit', '--generation', '2', '--seller', `0x${'99'.repeat(20)}`], target.env);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('is not a seller of generation 2');
  });

  it('error: a generation of another method version is refused with exit 1, saying so', async () => {
    const bundle = path.join(dir, 'g1');
    expect((await tally(['export', '--generation', '1', '--out', bundle], targets[0]!.env)).code).toBe(0);
    const manifestFile = path.join(bundle, 'manifest.json');
    writeFileSync(
      manifestFile,
      // (whichever version computed it: the default's, 3.0.0 today)
      readFileSync(manifestFile, 'utf8').replace(/"method_version": "[0-9.]+"/, '"method_version": "0.9.0"'),
    );
    const { code, out } = await tally(['audit', '--bundle', bundle], { RPC_URL: anvil.url, LOG_LEVEL: 'silent' });
    expect(code).toBe(1);
    expect(out).toContain('computed with method 0.9.0; this x402-tally implements methods 1.0.0, 2.0.0');
    expect(out.split('\n').at(-1)).toBe(
      'audit: generation 1 NOT AUDITED: method 0.9.0 is not one this x402-tally implements',
    );
  });

  it('error: an unreachable RPC makes the audit exit 75', async () => {
    const { code, out } = await tally(['audit', '--bundle', path.join(dir, 'g2')], {
      RPC_URL: 'http://127.0.0.1:9',
      LOG_LEVEL: 'silent',
    });
    expect(code, out).toBe(75);
    expect(out.split('\n').at(-1)).toMatch(/^temporary failure \(exit 75\), run again later: /);
    expect(out).not.toMatch(/^audit: /m); // no verdict: nothing was compared
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { openDatabase } from '../../src/db/index.ts';
import {
  compareGenerationRows,
  formatDifference,
  readGenerationRows,
  type GenerationRows,
} from '../../src/publish/index.ts';
import {
  DEMO_CATALOG_PATH,
  demoCatalogItems,
  readCatalogItems,
  startDemoChain,
  X402_DEMO_SELLERS,
  type DemoChain,
} from '../../src/devchain/index.ts';
import { targetsFor, tally, type Target } from '../helpers/e2e.ts';

/**
 * Method 3.0.0 end to end on the demo chain: `run` with METHOD_VERSION=3.0.0 over the demo's
 * x402 scenarios (src/devchain/x402-economy.ts: Permit2 exact and upto through the official
 * client's payloads, batch-settlement channels, a seller funding its payers, two sellers of one
 * operator), with the real USDC code on anvil and the stand-in contracts at the canonical
 * addresses. The expected figures are the scenarios' amounts, summed here by hand (the table in
 * docs/x402-contracts.md, "The demo's x402 scenarios").
 */

// 2025-12-31T00:00:00Z, as in src/devchain/economy.test.ts: every block time is reproducible.
const AS_OF = 1_767_139_200n;

interface Expected {
  payments: number;
  revenue: bigint;
  payers: number;
  classPayments: number[];
  classRevenue: bigint[];
  median: bigint | null;
  external: [revenue: bigint, payments: number, payers: number];
  sellerFunded: [payments: number, revenue: bigint, payers: number];
  sameOperator: [payments: number, revenue: bigint, payers: number];
}

const S = X402_DEMO_SELLERS;
const EXPECTED: Record<string, Expected> = {
  // 4 x 10,000 through the exact proxy, one payer
  [S.exactSeller]: {
    payments: 4,
    revenue: 40_000n,
    payers: 1,
    classPayments: [0, 4, 0, 0],
    classRevenue: [0n, 40_000n, 0n, 0n],
    median: 10_000n,
    external: [40_000n, 4, 1],
    sellerFunded: [0, 0n, 0],
    sameOperator: [0, 0n, 0],
  },
  // charged 12,345, 50,000 and 7 of a signed 50,000: lower median of three is the middle one
  [S.uptoSeller]: {
    payments: 3,
    revenue: 62_352n,
    payers: 1,
    classPayments: [0, 0, 3, 0],
    classRevenue: [0n, 0n, 62_352n, 0n],
    median: 12_345n,
    external: [62_352n, 3, 1],
    sellerFunded: [0, 0n, 0],
    sameOperator: [0, 0n, 0],
  },
  // claims 40,000 + 25,000 + 35,000 (channel 1, opened before the window) and 10,000 + 5,000
  // (channel 2); the repeated total logs nothing; the settle from the contract is no payment;
  // claims are no payment sizes, so no median
  [S.channelSeller]: {
    payments: 5,
    revenue: 115_000n,
    payers: 2,
    classPayments: [0, 0, 0, 5],
    classRevenue: [0n, 0n, 0n, 115_000n],
    median: null,
    external: [115_000n, 5, 2],
    sellerFunded: [0, 0n, 0],
    sameOperator: [0, 0n, 0],
  },
  // 20,000 from an outside payer, 3 x 5,000 from operator B (one host: same_operator)
  [S.operatorA]: {
    payments: 4,
    revenue: 35_000n,
    payers: 2,
    classPayments: [4, 0, 0, 0],
    classRevenue: [35_000n, 0n, 0n, 0n],
    median: 5_000n,
    external: [20_000n, 1, 1],
    sellerFunded: [0, 0n, 0],
    sameOperator: [3, 15_000n, 1],
  },
  [S.operatorB]: {
    payments: 1,
    revenue: 20_000n,
    payers: 1,
    classPayments: [1, 0, 0, 0],
    classRevenue: [20_000n, 0n, 0n, 0n],
    median: 20_000n,
    external: [20_000n, 1, 1],
    sellerFunded: [0, 0n, 0],
    sameOperator: [0, 0n, 0],
  },
  // 8 x 10,000 from 4 payers: payer 2's first (29 d 23 h after its funding), payer 1's two
  // (1 and 25 days after), payer 3's second (1 day after) are seller_funded; payer 2's second
  // (30 d 1 h after), payer 3's first (before its funding) and the outside payer's two are external
  [S.fundingSeller]: {
    payments: 8,
    revenue: 80_000n,
    payers: 4,
    classPayments: [8, 0, 0, 0],
    classRevenue: [80_000n, 0n, 0n, 0n],
    median: 10_000n,
    external: [40_000n, 4, 3],
    sellerFunded: [4, 40_000n, 3],
    sameOperator: [0, 0n, 0],
  },
};

let chain: DemoChain;
let dir: string;
const targets: Target[] = [];

beforeAll(async () => {
  const items = demoCatalogItems(readCatalogItems(DEMO_CATALOG_PATH));
  chain = await startDemoChain({ catalogItems: items, asOfTs: AS_OF });
  dir = mkdtempSync(path.join(os.tmpdir(), 'tally-demo-x402-'));
  writeFileSync(path.join(dir, 'catalog.json'), JSON.stringify({ resources: items }));
  const common = {
    RPC_URL: chain.url,
    CATALOG_SOURCE: path.join(dir, 'catalog.json'),
    USDC_ADDRESS: chain.usdcAddress,
    CHAIN_ID: String(chain.chainId),
    CONFIRMATIONS: '0',
    METHOD_VERSION: '3.0.0',
    LOG_LEVEL: 'silent',
  };
  targets.push(...(await targetsFor(common, path.join(dir, 'data'))));
  for (const target of targets) {
    const { code, out } = await tally(['run'], target.env);
    expect(code, out).toBe(0);
    expect(out).toContain('published generation 1');
  }
}, 600_000);

afterAll(async () => {
  await chain?.stop();
  for (const t of targets) await t.database?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Generation 1 as the target's database holds it (what the audit compares). */
async function readRows(target: Target): Promise<GenerationRows> {
  const database =
    target.backend === 'pg'
      ? await openDatabase({ databaseUrl: target.env.DATABASE_URL })
      : await openDatabase({ dataDir: target.env.DATA_DIR! });
  try {
    return await readGenerationRows(database.db, 1);
  } finally {
    await database.close();
  }
}

async function withApi<T>(target: Target, work: (base: string) => Promise<T>): Promise<T> {
  const database =
    target.backend === 'pg'
      ? await openDatabase({ databaseUrl: target.env.DATABASE_URL })
      : await openDatabase({ dataDir: target.env.DATA_DIR! });
  const app = await buildApi(database.db, { rateLimitPerMinute: 1_000_000, cadenceSeconds: 900 });
  try {
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    return await work(base);
  } finally {
    await app.close();
    await database.close();
  }
}

interface Profile {
  by_class: Record<string, { payments: number; revenue_micro: number | string }> | null;
  internal: Record<string, { payments: number; revenue_micro: number | string; payers: number }> | null;
  metrics: Record<string, { value: number | string | null } | null>;
}

const big = (v: number | string | null | undefined) => (v === null || v === undefined ? null : BigInt(v));

describe('method 3.0.0 on the demo chain (run with METHOD_VERSION=3.0.0)', () => {
  it('behavior: every class and both internal reasons, seller by seller, as the scenarios add up by hand', async () => {
    for (const target of targets) {
      await withApi(target, async (base) => {
        const meta = (await (await fetch(`${base}/api/v1/meta`)).json()) as {
          method_version: string;
          constants: { batch_settlement_deployment_block: number };
          classes: unknown[];
        };
        expect(meta.method_version, target.backend).toBe('3.0.0');
        expect(meta.classes.length, target.backend).toBe(4);
        // a local chain below Base's documented block: ChannelCreated read from genesis
        expect(meta.constants.batch_settlement_deployment_block, target.backend).toBe(0);
        for (const [seller, want] of Object.entries(EXPECTED)) {
          const res = await fetch(`${base}/api/v1/sellers/${seller}`);
          expect(res.status, `${target.backend} ${seller}`).toBe(200);
          const p = (await res.json()) as Profile;
          const at = `${target.backend} ${seller}`;
          const m = p.metrics;
          expect(
            [Number(m.payments_30d?.value), big(m.verified_revenue_30d_micro?.value), Number(m.payers_30d?.value)],
            at,
          ).toEqual([want.payments, want.revenue, want.payers]);
          expect(big(m.median_payment_30d_micro?.value), at).toEqual(want.median);
          const classes = ['eip3009', 'permit2_exact', 'permit2_upto', 'batch_settlement'];
          expect(
            classes.map((c) => [p.by_class?.[c]?.payments, big(p.by_class?.[c]?.revenue_micro)]),
            at,
          ).toEqual(classes.map((_c, i) => [want.classPayments[i], want.classRevenue[i]]));
          expect(
            [
              big(p.metrics.external_revenue_30d_micro?.value),
              Number(p.metrics.external_payments_30d?.value),
              Number(p.metrics.external_payers_30d?.value),
            ],
            at,
          ).toEqual(want.external);
          const reason = (r: string) => [
            p.internal?.[r]?.payments,
            big(p.internal?.[r]?.revenue_micro),
            p.internal?.[r]?.payers,
          ];
          expect(reason('seller_funded'), at).toEqual(want.sellerFunded);
          expect(reason('same_operator'), at).toEqual(want.sameOperator);
        }
      });
    }
  });

  it('behavior: the evidence rows name each payment class and internal reason; claims are the Claimed logs', async () => {
    for (const target of targets) {
      await withApi(target, async (base) => {
        const rows = async (seller: string) =>
          (
            (await (await fetch(`${base}/api/v1/sellers/${seller}/payments?limit=100`)).json()) as {
              payments: { class: string; internal_reason: string | null; value_micro: number | string }[];
            }
          ).payments;
        const channel = await rows(S.channelSeller);
        expect(channel.map((r) => [r.class, big(r.value_micro)]).sort(), target.backend).toEqual(
          [40_000n, 25_000n, 35_000n, 10_000n, 5_000n].map((v) => ['batch_settlement', v]).sort(),
        );
        const reasons = (await rows(S.fundingSeller)).map((r) => r.internal_reason);
        expect(reasons.filter((r) => r === 'seller_funded').length, target.backend).toBe(4);
        expect(reasons.filter((r) => r === null).length, target.backend).toBe(4);
        const ops = (await rows(S.operatorA)).map((r) => r.internal_reason);
        expect(ops.filter((r) => r === 'same_operator').length, target.backend).toBe(3);
      });
    }
  });

  it('behavior: sort=external_revenue orders the rankings by external revenue', async () => {
    for (const target of targets) {
      await withApi(target, async (base) => {
        const page = (await (await fetch(`${base}/api/v1/rankings?sort=external_revenue&limit=100`)).json()) as {
          rankings: { seller_address: string; external_revenue_30d_micro: number | string | null }[];
        };
        const values = page.rankings.map((r) => big(r.external_revenue_30d_micro) ?? -1n);
        expect(values.length, target.backend).toBeGreaterThan(0);
        for (let i = 1; i < values.length; i++) expect(values[i - 1]! >= values[i]!, target.backend).toBe(true);
      });
    }
  });
});

describe('the audit of a 3.0.0 generation', () => {
  // The audit runs on the first target; every other target's generation 1 must equal the audited
  // one in everything the audit compares (compareGenerationRows: digests, method, constants,
  // window, as-of, every row). An audit there would recompute the same: its scratch database is
  // embedded whatever the target's backend, and its inputs (catalog items, as-of block, sources,
  // method) are the published generation's, equal by that comparison and the common settings; only
  // reading the published rows is the backend's, done here too. The CLI's audit on Postgres is run
  // end to end in test/e2e/run-audit.test.ts.
  it('behavior: audit --generation 1 recomputes every number from the chain (exit 0); the other backend publishes the same', async () => {
    const [first, ...others] = targets;
    const { code, out } = await tally(['audit', '--generation', '1'], first!.env);
    expect(code, `${first!.backend}: ${out}`).toBe(0);
    expect(out).toContain('identical: every digest and number of generation 1');
    const audited = await readRows(first!);
    // (not an empty comparison: the scenarios' payments are among the rows)
    for (const [seller, want] of Object.entries(EXPECTED))
      expect(audited.payments.filter((p) => p.seller_address === seller).length, seller).toBe(want.payments);
    for (const target of others)
      expect(compareGenerationRows(await readRows(target), audited).map(formatDifference), target.backend).toEqual([]);
  });

  it("error: a bundle with one claim's value changed fails the audit, naming the seller and the class", async () => {
    const target = targets[0]!;
    const bundle = path.join(dir, 'g1');
    expect((await tally(['export', '--generation', '1', '--out', bundle], target.env)).code).toBe(0);
    const env = { RPC_URL: chain.url, USDC_ADDRESS: chain.usdcAddress, LOG_LEVEL: 'silent' };
    const clean = await tally(['audit', '--bundle', bundle], env);
    expect(clean.code, clean.out).toBe(0);

    // The 25,000 claim of channel 1 becomes 26,000 in the bundle's evidence.
    const file = path.join(bundle, 'payments.ndjson');
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const claim = lines.findIndex((l) => {
      const row = JSON.parse(l) as { class?: string; value?: string | number };
      return row.class === 'batch_settlement' && String(row.value) === '25000';
    });
    expect(claim).toBeGreaterThanOrEqual(0);
    lines[claim] = lines[claim]!.replace(/"value":("?)25000\1/, '"value":$126000$1');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { code, out } = await tally(['audit', '--bundle', bundle], env);
    expect(code, out).toBe(1);
    expect(out).toContain(S.channelSeller);
    expect(out).toContain('batch_settlement');
  });
});

describe('audit --seller of a 3.0.0 generation', () => {
  // Each re-indexes only that seller's logs of every stream (docs/METHOD.md 2.11.5): the proxies'
  // settlements and their receipts, the claims of its channels, its outgoing transfers.
  // (each audit re-indexes the demo chain for one seller into a scratch database: about 100 s on
  // the 2-core machine under load 19, hence a limit above the default, against a hang only)
  const AUDIT_LIMIT_MS = 600_000;
  it.each([
    ['a batch-settlement seller', S.channelSeller],
    ['a Permit2 upto seller', S.uptoSeller],
    ['a seller funding its payers', S.fundingSeller],
  ])(
    'behavior: audit --seller of %s recomputes identical (exit 0)',
    async (_what, seller) => {
      // On the first target: what audit --seller compares (compareSellerRows: the seller's row,
      // listings, payments and digest periods) is part of what the other backend's generation 1
      // was found equal to above.
      const target = targets[0]!;
      const { code, out } = await tally(['audit', '--generation', '1', '--seller', seller], target.env);
      expect(code, `${target.backend} ${seller}: ${out}`).toBe(0);
      expect(out).toContain(`identical: seller ${seller}'s digests and numbers recomputed from the chain`);
    },
    AUDIT_LIMIT_MS,
  );

  it(
    "error: with one claim's value changed in a bundle, audit --seller names that seller's claim; another seller's audit does not",
    async () => {
      const target = targets[0]!;
      const bundle = path.join(dir, 'g1-seller');
      expect((await tally(['export', '--generation', '1', '--out', bundle], target.env)).code).toBe(0);
      const env = { RPC_URL: chain.url, USDC_ADDRESS: chain.usdcAddress, LOG_LEVEL: 'silent' };
      // The 35,000 claim of channel 1 becomes 36,000.
      const file = path.join(bundle, 'payments.ndjson');
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      const claim = lines.findIndex((l) => {
        const row = JSON.parse(l) as { class?: string; value?: string | number };
        return row.class === 'batch_settlement' && String(row.value) === '35000';
      });
      expect(claim).toBeGreaterThanOrEqual(0);
      const tx = (JSON.parse(lines[claim]!) as { tx_hash: string }).tx_hash;
      lines[claim] = lines[claim]!.replace(/"value":("?)35000\1/, '"value":$136000$1');
      writeFileSync(file, `${lines.join('\n')}\n`);

      const one = await tally(['audit', '--bundle', bundle, '--seller', S.channelSeller], env);
      expect(one.code, one.out).toBe(1);
      expect(one.out).toContain(S.channelSeller);
      expect(one.out).toContain('batch_settlement');
      expect(one.out).toContain(tx);

      const other = await tally(['audit', '--bundle', bundle, '--seller', S.uptoSeller], env);
      // (exit 1 all the same: the file's sha256 no longer matches the manifest)
      expect(other.code, other.out).toBe(1);
      expect(other.out).toContain('bundle file payments.ndjson: sha256 differs from the manifest');
      expect(other.out).not.toContain(tx);
    },
    AUDIT_LIMIT_MS,
  );
});

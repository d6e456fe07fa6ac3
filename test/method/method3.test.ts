import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeJson } from '../../src/lib/json.ts';
import {
  BUNDLE_NDJSON_FILES,
  bundleFileText,
  compareGenerationRows,
  formatDifference,
  readGenerationHead,
  readGenerationRows,
} from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertCatalog, insertCoverage } from '../helpers/facts.ts';
import { insertFacts3, insertOutgoing } from '../helpers/facts3.ts';
import { AS_OF_TS, DEC_10, MARKET_FROM_TS, block } from './fixture.ts';
import { NOT_A_SELLER, P3S, S3S, type Fixture3Payment } from './fixture3.ts';
import { compute, loadFixture, loadFixture3 } from './setup.ts';

/**
 * Method 3.0.0's numbers (SPEC section 2, "Method 3.0.0"; docs/METHOD.md section 2.11) on the
 * hand-checked fixture of fixture3.ts. Every expected number below is worked out by hand from the
 * fixture's comments; the digests are recomputed here from the fixture's own list of payments.
 */

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** 3.0.0's composed digest of some payments (docs/METHOD.md 2.9 with the class at the head of each line). */
function composedDigest(payments: Fixture3Payment[]): string {
  const periods = new Map<bigint, string[]>();
  for (const p of payments) {
    const start = p.ts - (p.ts % 3600n);
    const line = `${p.class}:${p.tx}:${p.logIndex}:${p.payer}:${p.seller}:${p.value}\n`;
    periods.set(start, [...(periods.get(start) ?? []), line]);
  }
  const composed = [...periods.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([start, lines]) => `${start}:${lines.length}:${sha256(lines.sort(byBytes).join(''))}\n`)
    .join('');
  return sha256(composed);
}

const { S1, S2, S3, S4 } = S3S;

// Per seller, by hand (fixture3.ts): S1's 12 payments are a..l.
//   class 1: a 100, e 70, f 500, h 30, j 60, k 20, l 15 = 7 payments, 795
//   class 2: b 250, g 80 = 2, 330;  class 3: c 40, i 90 = 2, 130;  class 4: d 1000 = 1, 1000
//   seller_funded: f 500 (P5), i 90 (P8), k 20 (S3) = 3, 610, 3 payers
//   same_operator: e 70 (S3) = 1, 70, 1 payer
//   external: a, b, c, d, g, h, j, l = 8, 1575, 8 payers (P1 P2 P3 P4 P6 P7 P10 P11)
//   payers: those 8, P5, P8, S3 = 11; median over the 11 per-request values
//   15 20 30 40 60 [70] 80 90 100 250 500 = 70 (the lower median: the 6th of 11)
// S2: two claims, 300 and 200: no per-request payment, median null.
// S4: 6 x 100 from P9 (funded by S4 first) + 4 x 100 from P1-P4: internal 600 of 1000, 10 payments:
//   internal_share>0.5 (2 * 600 > 1000); top payer P9 600/1000 = 0.6: no top_payer reason.
const EXPECTED_3 = {
  [S1]: {
    payments_30d: 12,
    payers_30d: 11,
    verified_revenue_30d_micro: 2255n,
    median_payment_30d_micro: 70n,
    evidence_state: 'verified',
    farm_reasons: null,
    rank: 1,
    class_payments_30d: [7, 2, 2, 1],
    class_revenue_30d_micro: [795n, 330n, 130n, 1000n],
    external_payments_30d: 8,
    external_revenue_30d_micro: 1575n,
    external_payers_30d: 8,
    internal_seller_funded_payments_30d: 3,
    internal_seller_funded_revenue_30d_micro: 610n,
    internal_seller_funded_payers_30d: 3,
    internal_same_operator_payments_30d: 1,
    internal_same_operator_revenue_30d_micro: 70n,
    internal_same_operator_payers_30d: 1,
  },
  [S2]: {
    payments_30d: 2,
    payers_30d: 2,
    verified_revenue_30d_micro: 500n,
    median_payment_30d_micro: null,
    evidence_state: 'insufficient',
    farm_reasons: null,
    rank: null,
    class_payments_30d: [0, 0, 0, 2],
    class_revenue_30d_micro: [0n, 0n, 0n, 500n],
    external_payments_30d: 2,
    external_revenue_30d_micro: 500n,
    external_payers_30d: 2,
    internal_seller_funded_payments_30d: 0,
    internal_seller_funded_revenue_30d_micro: 0n,
    internal_seller_funded_payers_30d: 0,
    internal_same_operator_payments_30d: 0,
    internal_same_operator_revenue_30d_micro: 0n,
    internal_same_operator_payers_30d: 0,
  },
  [S3]: {
    payments_30d: 0,
    payers_30d: 0,
    verified_revenue_30d_micro: 0n,
    median_payment_30d_micro: null,
    evidence_state: 'not_observed',
    farm_reasons: null,
    rank: null,
    class_payments_30d: [0, 0, 0, 0],
    class_revenue_30d_micro: [0n, 0n, 0n, 0n],
    external_payments_30d: 0,
    external_revenue_30d_micro: 0n,
    external_payers_30d: 0,
    internal_seller_funded_payments_30d: 0,
    internal_seller_funded_revenue_30d_micro: 0n,
    internal_seller_funded_payers_30d: 0,
    internal_same_operator_payments_30d: 0,
    internal_same_operator_revenue_30d_micro: 0n,
    internal_same_operator_payers_30d: 0,
  },
  [S4]: {
    payments_30d: 10,
    payers_30d: 5,
    verified_revenue_30d_micro: 1000n,
    median_payment_30d_micro: 100n,
    evidence_state: 'verified',
    farm_reasons: '["internal_share>0.5"]',
    rank: 2,
    class_payments_30d: [6, 4, 0, 0],
    class_revenue_30d_micro: [600n, 400n, 0n, 0n],
    external_payments_30d: 4,
    external_revenue_30d_micro: 400n,
    external_payers_30d: 4,
    internal_seller_funded_payments_30d: 6,
    internal_seller_funded_revenue_30d_micro: 600n,
    internal_seller_funded_payers_30d: 1,
    internal_same_operator_payments_30d: 0,
    internal_same_operator_revenue_30d_micro: 0n,
    internal_same_operator_payers_30d: 0,
  },
};

// The same facts under 2.0.0: class 1 (EIP-3009) transfers only, no reasons.
//   S1: a 100, e 70, f 500, h 30, j 60, k 20, l 15 = 7 payments, 795, payers P1 S3 P5 P7 P10 P11 = 6,
//       median of 15 20 30 [60] 70 100 500 = 60
//   S4: 6 x 100 from P9: insufficient (one payer), no farm reason (6 < 10 payments)
const EXPECTED_2 = {
  [S1]: { payments_30d: 7, payers_30d: 6, revenue: 795n, median: 60n, evidence_state: 'verified', rank: 1 },
  [S2]: { payments_30d: 0, payers_30d: 0, revenue: 0n, median: null, evidence_state: 'not_observed', rank: null },
  [S3]: { payments_30d: 0, payers_30d: 0, revenue: 0n, median: null, evidence_state: 'not_observed', rank: null },
  [S4]: { payments_30d: 6, payers_30d: 1, revenue: 600n, median: 100n, evidence_state: 'insufficient', rank: null },
};

const THREE_ONLY_COLUMNS = [
  'class_payments_30d',
  'class_revenue_30d_micro',
  'external_payments_30d',
  'external_revenue_30d_micro',
  'external_payers_30d',
  'internal_seller_funded_payments_30d',
  'internal_seller_funded_revenue_30d_micro',
  'internal_seller_funded_payers_30d',
  'internal_same_operator_payments_30d',
  'internal_same_operator_revenue_30d_micro',
  'internal_same_operator_payers_30d',
] as const;

describe.each(backends())('method 3.0.0 on $backend', ({ backend }) => {
  let t: TestDatabase;
  let fixture: Awaited<ReturnType<typeof loadFixture3>>;
  let g3: number;
  let g2: number;
  let g3again: number;

  beforeAll(async () => {
    t = await freshDatabase(backend);
    fixture = await loadFixture3(t.db);
    g3 = await compute(t.db, fixture.snapshotId, { methodVersion: '3.0.0' });
    g2 = await compute(t.db, fixture.snapshotId, { methodVersion: '2.0.0' });
    g3again = await compute(t.db, fixture.snapshotId, { methodVersion: '3.0.0', runSeq: 2n });
  });
  afterAll(async () => t?.close());

  it('default: every seller number of every class and reason, by hand', async () => {
    const rows = await t.db.selectFrom('gen_sellers').selectAll().where('generation', '=', g3).execute();
    const got = Object.fromEntries(
      rows.map((r) => [
        r.seller_address,
        {
          payments_30d: r.payments_30d,
          payers_30d: r.payers_30d,
          verified_revenue_30d_micro: r.verified_revenue_30d_micro,
          median_payment_30d_micro: r.median_payment_30d_micro,
          evidence_state: r.evidence_state,
          farm_reasons: r.farm_reasons,
          rank: r.rank,
          ...Object.fromEntries(THREE_ONLY_COLUMNS.map((c) => [c, r[c]])),
        },
      ]),
    );
    expect(got).toEqual(EXPECTED_3);
  });

  it('default: the market day of 2025-12-10, by hand; the other days are zeros', async () => {
    // 2025-12-10: S1's a-e, h-l (10 payments, 1675), S2's two claims (500), S4's 10 (1000):
    // 22 payments, 3175; payers P1-P4 P7 P8 P10 P11 S3 P9 = 10; 3 sellers paid. Median over the
    // 19 per-request values 15 20 30 40 60 70 90 100 x 11 250: the 10th = 100. Internal: S1's e
    // 70, i 90, k 20 and S4's 600 = 780, so external 2395. (f and g fall on 2026-01-01: no row.)
    const days = await t.db.selectFrom('gen_market_daily').selectAll().where('generation', '=', g3).execute();
    expect(days).toHaveLength(30);
    const dec10 = days.find((d) => String(d.day).startsWith('2025-12-10'))!;
    expect({
      payments: dec10.payments,
      volume: dec10.volume_micro,
      payers: dec10.payers,
      sellers: dec10.sellers_paid,
      median: dec10.median_payment_micro,
      external: dec10.external_volume_micro,
      tracked: dec10.tracked_sellers,
    }).toEqual({ payments: 22, volume: 3175n, payers: 10, sellers: 3, median: 100n, external: 2395n, tracked: 4 });
    for (const d of days.filter((x) => x !== dec10))
      expect([d.payments, d.volume_micro, d.external_volume_micro, d.median_payment_micro]).toEqual([0, 0n, 0n, null]);
  });

  it('default: the evidence rows name each payment class and internal reason; nothing else is a row', async () => {
    const rows = await t.db
      .selectFrom('generation_payments')
      .select(['tx_hash', 'log_index', 'payer', 'seller_address', 'value', 'class', 'internal_reason', 'in_window'])
      .where('generation', '=', g3)
      .execute();
    const got = rows
      .map(
        (r) => `${r.tx_hash}:${r.log_index}:${r.payer}:${r.seller_address}:${r.value}:${r.class}:${r.internal_reason}`,
      )
      .sort();
    const expected = fixture.facts.counted
      .map((p) => `${p.tx}:${p.logIndex}:${p.payer}:${p.seller}:${p.value}:${p.class}:${p.reason}`)
      .sort();
    expect(got).toEqual(expected);
    expect(rows.every((r) => r.in_window)).toBe(true);
    expect(rows.some((r) => r.seller_address === NOT_A_SELLER)).toBe(false);
  });

  it('default: the digests are the composed digests of the lines `class:tx_hash:log_index:from:to:value`', async () => {
    const rows = await t.db
      .selectFrom('gen_sellers')
      .select(['seller_address', 'evidence_sha256'])
      .where('generation', '=', g3)
      .execute();
    for (const r of rows)
      expect(r.evidence_sha256, r.seller_address).toBe(
        composedDigest(fixture.facts.counted.filter((p) => p.seller === r.seller_address)),
      );
    const gen = await t.db
      .selectFrom('generations')
      .select(['evidence_sha256', 'method_version', 'constants'])
      .where('generation', '=', g3)
      .executeTakeFirstOrThrow();
    expect(gen.evidence_sha256).toBe(composedDigest(fixture.facts.counted));
    expect(gen.method_version).toBe('3.0.0');
    expect(gen.constants).toMatchObject({ funding_lookback_seconds: 2592000, farm_internal_share: 0.5 });
  });

  it('behavior: a 2.0.0 generation beside it counts the EIP-3009 transfers only and has no 3.0.0 field', async () => {
    const rows = await t.db.selectFrom('gen_sellers').selectAll().where('generation', '=', g2).execute();
    expect(
      Object.fromEntries(
        rows.map((r) => [
          r.seller_address,
          {
            payments_30d: r.payments_30d,
            payers_30d: r.payers_30d,
            revenue: r.verified_revenue_30d_micro,
            median: r.median_payment_30d_micro,
            evidence_state: r.evidence_state,
            rank: r.rank,
          },
        ]),
      ),
    ).toEqual(EXPECTED_2);
    for (const r of rows) for (const c of THREE_ONLY_COLUMNS) expect(r[c], c).toBeNull();
    const days = await t.db.selectFrom('gen_market_daily').selectAll().where('generation', '=', g2).execute();
    expect(days.every((d) => d.external_volume_micro === null)).toBe(true);
    const evidence = await t.db
      .selectFrom('generation_payments')
      .select(['tx_hash', 'class', 'internal_reason'])
      .where('generation', '=', g2)
      .execute();
    expect(evidence.map((e) => e.tx_hash).sort()).toEqual(
      fixture.facts.counted
        .filter((p) => p.class === 'eip3009')
        .map((p) => p.tx)
        .sort(),
    );
    expect(evidence.every((e) => e.class === null && e.internal_reason === null)).toBe(true);
  });

  it('behavior: the 3.0.0 bundle carries the 3.0.0 columns, the 2.0.0 bundle none, and the lines are the rows', async () => {
    for (const g of [g3, g2]) {
      const rows = await readGenerationRows(t.db, g);
      const head = await readGenerationHead(t.db, g);
      for (const { name, key } of BUNDLE_NDJSON_FILES) {
        let text = '';
        for await (const chunk of bundleFileText(t.db, head, name)) text += chunk.bytes.toString('utf8');
        const lines = (rows[key] as unknown[]).map((r) => (key === 'catalogItemLines' ? (r as string) : writeJson(r)));
        expect(text, `${g} ${name}`).toBe(lines.map((l) => `${l}\n`).join(''));
      }
      const three = g === g3;
      expect(Object.keys(rows.payments[0]!).includes('internal_reason'), `${g}`).toBe(three);
      expect(Object.keys(rows.sellers[0]!).includes('external_revenue_30d_micro'), `${g}`).toBe(three);
      expect(Object.keys(rows.marketDaily[0]!).includes('external_volume_micro'), `${g}`).toBe(three);
    }
    const rows = await readGenerationRows(t.db, g3);
    const claim = rows.payments.find((p) => p.class === 'batch_settlement' && p.seller_address === S1)!;
    expect(claim).toMatchObject({ value: 1000n, payer: P3S.P4, internal_reason: null });
    const s1 = rows.sellers.find((r) => r.seller_address === S1)!;
    expect(s1.class_revenue_30d_micro).toEqual([795n, 330n, 130n, 1000n]);
  });

  it('behavior: the audit names the class, seller and period of a tampered claim in a 3.0.0 bundle', async () => {
    const published = await readGenerationRows(t.db, g3);
    const claim = published.payments.find((p) => p.class === 'batch_settlement' && p.seller_address === S1)!;
    const tampered = {
      ...published,
      payments: published.payments.map((p) => (p === claim ? { ...p, value: 1001n } : p)),
    };
    const recomputed = await readGenerationRows(t.db, g3again);
    // the claim d of fixture3.ts: the 4th payment of 2025-12-10, in the hour from 00:00Z
    const day = 1_765_324_800;
    expect(compareGenerationRows(tampered, recomputed).map(formatDifference)).toEqual([
      `payment ${String(claim.tx_hash)}:${String(claim.log_index)} (batch_settlement, seller ${S1}, period ` +
        `2025-12-10T00:00:00Z (${day})) value: published 1001, recomputed 1000`,
    ]);
  });

  it('behavior: a 3.0.0 generation after the 2.0.0 one (its state rebuilt) has the same rows as the first', async () => {
    const differences = compareGenerationRows(
      await readGenerationRows(t.db, g3),
      await readGenerationRows(t.db, g3again),
    ).map(formatDifference);
    expect(differences).toEqual([]);
  });
});

describe.each(backends())('method 3.0.0 over EIP-3009 facts only on $backend', ({ backend }) => {
  let t: TestDatabase;
  afterAll(async () => t?.close());

  it('behavior: has the numbers of 2.0.0 (test/method/fixture.ts); only the digests differ', async () => {
    t = await freshDatabase(backend);
    const fixture = await loadFixture(t.db);
    const g2 = await compute(t.db, fixture.snapshotId, { methodVersion: '2.0.0' });
    const g3 = await compute(t.db, fixture.snapshotId, { methodVersion: '3.0.0' });
    const numbers = async (g: number) =>
      (
        await t.db
          .selectFrom('gen_sellers')
          .select([
            'seller_address',
            'payments_30d',
            'payers_30d',
            'verified_revenue_30d_micro',
            'median_payment_30d_micro',
            'evidence_state',
            'tier',
            'farm_reasons',
            'rank',
            'first_payment_ts',
            'last_payment_ts',
            'evidence_sha256',
            'external_revenue_30d_micro',
          ])
          .where('generation', '=', g)
          .orderBy('seller_address')
          .execute()
      ).map(({ evidence_sha256, external_revenue_30d_micro, ...rest }) => ({
        ...rest,
        paid: evidence_sha256 !== sha256(''),
        external: external_revenue_30d_micro,
      }));
    const two = await numbers(g2);
    const three = await numbers(g3);
    // every payment is external (no seller pays another, no outgoing transfer is stored)
    expect(three).toEqual(two.map((r) => ({ ...r, external: r.verified_revenue_30d_micro })));
    const market = async (g: number) =>
      (
        await t.db
          .selectFrom('gen_market_daily')
          .select(['day', 'payments', 'volume_micro', 'payers', 'sellers_paid', 'median_payment_micro'])
          .where('generation', '=', g)
          .orderBy('day')
          .execute()
      ).map((d) => ({ ...d, day: String(d.day) }));
    expect(await market(g3)).toEqual(await market(g2));
    const digests = await t.db
      .selectFrom('generations')
      .select(['generation', 'evidence_sha256'])
      .where('generation', 'in', [g2, g3])
      .execute();
    expect(digests[0]!.evidence_sha256).not.toBe(digests[1]!.evidence_sha256);
  });
});

describe.each(backends())('the worked example of docs/METHOD.md 2.11.6 on $backend', ({ backend }) => {
  let t: TestDatabase;
  afterAll(async () => t?.close());

  it('default: the figures printed there', async () => {
    t = await freshDatabase(backend);
    const S = `0x${'a'.repeat(40)}`;
    const O = `0x${'b'.repeat(40)}`;
    const P = (i: number) => `0x${String(i).repeat(40)}`;
    const tx = (i: number) => `0x${i.toString(16).padStart(64, '0')}`;
    const hour = DEC_10 + 8n * 3600n; // 2025-12-10T08:00Z = 1765353600
    expect(hour).toBe(1_765_353_600n);
    const snapshotId = await insertCatalog(t.db, [
      { listing_id: '1'.padStart(64, '0'), seller_address: S, resource_url: 'https://shop.example.com/a' },
      { listing_id: '2'.padStart(64, '0'), seller_address: O, resource_url: 'https://shop.example.com:8443/b' },
    ]);
    const at = (i: number) => hour + BigInt(2 * i);
    const transfer = (i: number, logIndex: number, from: string, value: bigint, cls: 1 | 2 | 3) => ({
      tx: tx(i),
      logIndex,
      block: block(at(i)),
      ts: at(i),
      from,
      to: S,
      value,
      class: cls,
    });
    await insertFacts3(t.db, {
      transfers: [
        transfer(1, 2, P(1), 100n, 1),
        transfer(2, 3, P(2), 250n, 2),
        transfer(3, 3, P(3), 40n, 3),
        transfer(5, 2, P(5), 500n, 1),
        transfer(6, 2, O, 70n, 1),
      ],
      claims: [{ tx: tx(4), logIndex: 7, block: block(at(4)), ts: at(4), payer: P(4), receiver: S, value: 1000n }],
    });
    const fundedAt = at(5) - 40n * 3600n;
    await insertOutgoing(t.db, [
      { tx: tx(99), logIndex: 1, block: block(fundedAt), ts: fundedAt, from: S, to: P(5), value: 10n },
    ]);
    await insertCoverage(
      t.db,
      [S, O].map((seller) => ({
        seller,
        fromTs: MARKET_FROM_TS,
        fromBlock: block(MARKET_FROM_TS),
        toBlock: block(AS_OF_TS),
      })),
    );
    const g = await compute(t.db, snapshotId, { methodVersion: '3.0.0' });
    const s = await t.db
      .selectFrom('gen_sellers')
      .selectAll()
      .where('generation', '=', g)
      .where('seller_address', '=', S)
      .executeTakeFirstOrThrow();
    expect({
      payments: s.payments_30d,
      revenue: s.verified_revenue_30d_micro,
      payers: s.payers_30d,
      median: s.median_payment_30d_micro,
      classPayments: s.class_payments_30d,
      classRevenue: s.class_revenue_30d_micro,
      external: [s.external_payments_30d, s.external_revenue_30d_micro, s.external_payers_30d],
      sellerFunded: [
        s.internal_seller_funded_payments_30d,
        s.internal_seller_funded_revenue_30d_micro,
        s.internal_seller_funded_payers_30d,
      ],
      sameOperator: [
        s.internal_same_operator_payments_30d,
        s.internal_same_operator_revenue_30d_micro,
        s.internal_same_operator_payers_30d,
      ],
      state: s.evidence_state,
      farm: s.farm_reasons,
      digest: s.evidence_sha256,
    }).toEqual({
      payments: 6,
      revenue: 1960n,
      payers: 6,
      median: 100n,
      classPayments: [3, 1, 1, 1],
      classRevenue: [670n, 250n, 40n, 1000n],
      external: [4, 1390n, 4],
      sellerFunded: [1, 500n, 1],
      sameOperator: [1, 70n, 1],
      state: 'verified',
      farm: null,
      digest: 'e2ed644e6720a85a5a7737a2db4bd175ca8670de9011d71911a11872f1c23301',
    });
    const period = await t.db
      .selectFrom('gen_seller_periods')
      .select(['period_start', 'payments', 'sha256'])
      .where('generation', '=', g)
      .where('seller_address', '=', S)
      .execute();
    expect(period).toEqual([
      {
        period_start: 1_765_353_600n,
        payments: 6,
        sha256: '2057bab2fbd003aded90b458527fcf478d9ba0320586c2ae5f2ee0d889e18992',
      },
    ]);
    const day = await t.db
      .selectFrom('gen_market_daily')
      .select(['payments', 'volume_micro', 'median_payment_micro', 'external_volume_micro'])
      .where('generation', '=', g)
      .where('day', '=', '2025-12-10')
      .executeTakeFirstOrThrow();
    expect(day).toEqual({ payments: 6, volume_micro: 1960n, median_payment_micro: 100n, external_volume_micro: 1390n });
  });
});

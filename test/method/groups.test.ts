import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetDerivedState } from '../../src/method/index.ts';
import { compareGenerationRows, readGenerationRows } from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertTransfers } from '../helpers/facts.ts';
import { MARKET_FROM_TS } from './fixture.ts';
import { DAY, P, S, dec, groupsDatabase, loadGroups, payment, stepsBefore0038 } from './fixture-groups.ts';
import { compute } from './setup.ts';

/**
 * Operator groups and the market summary (docs/METHOD.md 2.12), every number worked out by hand
 * from the economy below.
 *
 * As of 2026-01-01T12:00Z (fixture.ts): the publishable days are 2025-12-02 .. 2025-12-31, so
 * last_7d is Dec 25-31, prev_7d Dec 18-24, last_30d Dec 2-31.
 *
 * Catalog (base_usdc listings and their hosts): A h1.example and h1.example:8443 (one host: the
 * port and case do not count); B h1.example and h2.example; C h2.example; D h3.example; E
 * h4.example. A-B share h1, B-C share h2: one group {A, B, C}, id op_aaaa...; D and E are alone
 * (a host of one seller links nobody), in no group.
 *
 * Payments (EIP-3009, value in micro-USDC):
 *   A <- p1 100 Dec 31, A <- p1 50 Dec 20, A <- B 40 Dec 27 (under 3.0.0 same_operator: internal)
 *   B <- p1 200 Dec 30, B <- p2 300 Dec 19
 *   C <- p3 10 Dec 5
 *   D <- p2 1000 Dec 26
 *   E <- p1 7 Dec 29
 * Group {A,B,C}: payments 3+2+1 = 6, verified revenue 190+500+10 = 700, distinct payers
 * {p1, B, p2, p3} = 4 (the members' payers summed would be 2+2+1 = 5: p1 pays A and B); external
 * revenue (3.0.0) 700 - 40 = 660; hosts [h1.example, h2.example].
 * last_7d: payments A100, A40, B200, D1000, E7 = 5, volume 1347, external 1307, payers {p1, B, p2}
 *   = 3 (p1 pays on Dec 29, 30 and 31: once), sellers {A, B, D, E} = 4.
 * prev_7d: A50 (Dec 20), B300 (Dec 19): payments 2, volume 350, external 350, payers {p1, p2} = 2,
 *   sellers 2.
 * last_30d: payments 8, volume 1347 + 350 + 10 = 1707, external 1667, payers {p1, p2, p3, B} = 4,
 *   sellers 5.
 * change: payments (5-2)/2 = 1.5; volume (1347-350)/350 = 2.848571428... -> 2.848571; external
 *   (1307-350)/350 = 2.734285714... -> 2.734286; payers (3-2)/2 = 0.5; sellers (4-2)/2 = 1.
 */

const summaryOf = async (t: TestDatabase, generation: number) =>
  Object.fromEntries(
    (
      await t.db
        .selectFrom('gen_market_summary')
        .selectAll()
        .where('generation', '=', generation)
        .orderBy('period')
        .execute()
    ).map(({ generation: _g, ...r }) => [r.period, r]),
  );

describe.each(backends())('operator groups and the market summary on $backend', ({ backend }) => {
  let t: TestDatabase;
  let snapshotId: bigint;
  beforeAll(async () => ({ t, snapshotId } = await groupsDatabase(backend)));
  afterAll(() => t.close());

  for (const version of ['2.0.0', '3.0.0'] as const) {
    const v3 = version === '3.0.0';
    it(`default: one group {A, B, C} through a chain of hosts, D and E in none (${version})`, async () => {
      const g = await compute(t.db, snapshotId, { methodVersion: version });
      const groups = await t.db.selectFrom('gen_operator_groups').selectAll().where('generation', '=', g).execute();
      expect(groups).toEqual([
        {
          generation: g,
          group_id: `op_${'a'.repeat(40)}`,
          seller_count: 3,
          seller_addresses: [S.A, S.B, S.C],
          hosts: ['h1.example', 'h2.example'],
          payments_30d: 6,
          payers_30d: 4,
          verified_revenue_30d_micro: 700n,
          external_revenue_30d_micro: v3 ? 660n : null,
        },
      ]);
      const members = await t.db
        .selectFrom('gen_operator_members')
        .select(['seller_address', 'group_id'])
        .where('generation', '=', g)
        .orderBy('seller_address')
        .execute();
      expect(members).toEqual([S.A, S.B, S.C].map((s) => ({ seller_address: s, group_id: `op_${'a'.repeat(40)}` })));
      const outputs = await t.db.selectFrom('gen_outputs').select('output').where('generation', '=', g).execute();
      expect(outputs.map((o) => o.output).sort()).toEqual(['market_summary', 'operator_groups']);
    });

    it(`default: the summary's periods, distinct payers over days, and the change (${version})`, async () => {
      const g = await compute(t.db, snapshotId, { methodVersion: version });
      const none = {
        change_payments: null,
        change_volume: null,
        change_external_volume: null,
        change_payers: null,
        change_sellers_paid: null,
      };
      expect(await summaryOf(t, g)).toEqual({
        last_7d: {
          period: 'last_7d',
          first_day: '2025-12-25',
          last_day: '2025-12-31',
          days: 7,
          payments: 5n,
          volume_micro: 1347n,
          external_volume_micro: v3 ? 1307n : null,
          payers: 3,
          sellers_paid: 4,
          change_payments: '1.500000',
          change_volume: '2.848571',
          change_external_volume: v3 ? '2.734286' : null,
          change_payers: '0.500000',
          change_sellers_paid: '1.000000',
        },
        prev_7d: {
          period: 'prev_7d',
          first_day: '2025-12-18',
          last_day: '2025-12-24',
          days: 7,
          payments: 2n,
          volume_micro: 350n,
          external_volume_micro: v3 ? 350n : null,
          payers: 2,
          sellers_paid: 2,
          ...none,
        },
        last_30d: {
          period: 'last_30d',
          first_day: '2025-12-02',
          last_day: '2025-12-31',
          days: 30,
          payments: 8n,
          volume_micro: 1707n,
          external_volume_micro: v3 ? 1667n : null,
          payers: 4,
          sellers_paid: 5,
          ...none,
        },
      });
    });
  }

  it('default: a steady run reuses the cached periods; a changed day is counted again', async () => {
    await compute(t.db, snapshotId, { methodVersion: '3.0.0' });
    const before = await t.db.selectFrom('acc_market_summary').select(['period', 'set_max']).execute();
    const g = await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq: 2n });
    expect(await t.db.selectFrom('acc_market_summary').select(['period', 'set_max']).execute()).toEqual(before);
    // a payment of p3 to E on Dec 28 (seq 3): last_7d gains a payment, 5 micro and a payer
    await insertTransfers(t.db, [
      payment({ tx: `0x${'f'.repeat(64)}`, logIndex: 99, ts: dec(28), from: P.p3, to: S.E, value: 5n, addedSeq: 3n }),
    ]);
    const g3 = await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq: 3n });
    const [s2, s3] = [await summaryOf(t, g), await summaryOf(t, g3)];
    expect(s2.last_7d!.payers).toBe(3);
    expect([s3.last_7d!.payments, s3.last_7d!.volume_micro, s3.last_7d!.payers]).toEqual([6n, 1352n, 4]);
    expect([s3.last_30d!.payments, s3.last_30d!.payers]).toEqual([9n, 4]); // p3 paid C already: still 4
    expect(s3.prev_7d).toEqual({ ...s2.prev_7d });
  });
});

describe.each(backends())('fewer publishable days on $backend', ({ backend }) => {
  let t: TestDatabase;
  afterAll(() => t.close());

  it('default: 10 covered days make last_30d 10 days and prev_7d 3, so no change; a gen made without the steps audits identical', async () => {
    t = await freshDatabase(backend);
    // coverage from Dec 22: the publishable days are Dec 22 .. 31
    const snapshotId = await loadGroups(t.db, MARKET_FROM_TS + 20n * DAY);
    // a generation as computed before migration 0038's steps: no gen_outputs, no groups, no summary
    const old = await compute(t.db, snapshotId, { methodVersion: '3.0.0', steps: stepsBefore0038('3.0.0') });
    expect(await t.db.selectFrom('gen_outputs').selectAll().where('generation', '=', old).execute()).toEqual([]);
    await forgetDerivedState(t.db);
    const g = await compute(t.db, snapshotId, { methodVersion: '3.0.0' });
    expect(compareGenerationRows(await readGenerationRows(t.db, old), await readGenerationRows(t.db, g))).toEqual([]);
    const s = await summaryOf(t, g);
    expect([s.last_7d!.days, s.prev_7d!.days, s.last_30d!.days]).toEqual([7, 3, 10]);
    expect([s.prev_7d!.first_day, s.prev_7d!.last_day]).toEqual(['2025-12-22', '2025-12-24']);
    // Dec 22-24 have no payment: prev_7d's numbers are zeros, and no change is published
    expect([s.prev_7d!.payments, s.prev_7d!.volume_micro, s.prev_7d!.payers]).toEqual([0n, 0n, 0]);
    expect(s.last_7d!.change_volume).toBeNull();
    // last_30d = Dec 22-31: payments of Dec 26-31 (A100, A40, B200, D1000, E7)
    expect([s.last_30d!.payments, s.last_30d!.volume_micro, s.last_30d!.payers]).toEqual([5n, 1347n, 3]);
  });
});

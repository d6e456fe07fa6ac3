import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertTransfers } from '../helpers/facts.ts';
import { AS_OF_BLOCK, AS_OF_TS, BIG, DEC_10, MARKET_FROM_TS, S } from './fixture.ts';
import { compute, loadFixture } from './setup.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const EMPTY_SHA = sha256('');

/** The evidence digest worked out in TypeScript from the fixture's own list. */
function digestOf(rows: { tx: string; logIndex: number; from: string; to: string; value: bigint }[]): string {
  const lines = rows.map((r) => `${r.tx}:${r.logIndex}:${r.from}:${r.to}:${r.value}\n`);
  lines.sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : Buffer.compare(Buffer.from(a), Buffer.from(b))));
  return sha256(lines.join(''));
}

// Expected per-seller numbers, worked out by hand from test/method/fixture.ts.
const EXPECTED = {
  [S.A]: {
    listing_count: 2,
    payments_30d: 6,
    payers_30d: 3,
    revenue: 1501n,
    median: 200n,
    evidence_state: 'verified',
    farm_reasons: null,
    rank: 2,
  },
  [S.B]: {
    listing_count: 1,
    payments_30d: 4,
    payers_30d: 3,
    revenue: 40n,
    median: 10n,
    evidence_state: 'insufficient',
    farm_reasons: null,
    rank: null,
  },
  [S.C]: {
    listing_count: 1,
    payments_30d: 5,
    payers_30d: 2,
    revenue: 5n,
    median: 1n,
    evidence_state: 'insufficient',
    farm_reasons: null,
    rank: null,
  },
  [S.D]: {
    listing_count: 1,
    payments_30d: 10,
    payers_30d: 2,
    revenue: 1000n,
    median: 100n,
    evidence_state: 'insufficient',
    farm_reasons: null,
    rank: null,
  },
  [S.E]: {
    listing_count: 1,
    payments_30d: 11,
    payers_30d: 3,
    revenue: 999n,
    median: 100n,
    evidence_state: 'verified',
    farm_reasons: '["top_payer_share>0.9"]',
    rank: 4,
  },
  [S.F]: {
    listing_count: 51,
    payments_30d: 0,
    payers_30d: 0,
    revenue: 0n,
    median: null,
    evidence_state: 'not_observed',
    farm_reasons: '["listing_count>50"]',
    rank: null,
  },
  [S.G]: {
    listing_count: 50,
    payments_30d: 0,
    payers_30d: 0,
    revenue: 0n,
    median: null,
    evidence_state: 'not_observed',
    farm_reasons: null,
    rank: null,
  },
  [S.H]: {
    listing_count: 1,
    payments_30d: 5,
    payers_30d: 3,
    revenue: 5n * BIG,
    median: BIG,
    evidence_state: 'verified',
    farm_reasons: null,
    rank: 1,
  },
  [S.I]: {
    listing_count: 1,
    payments_30d: 9,
    payers_30d: 1,
    revenue: 90n,
    median: 10n,
    evidence_state: 'insufficient',
    farm_reasons: null,
    rank: null,
  },
  [S.J]: {
    listing_count: 1,
    payments_30d: 5,
    payers_30d: 3,
    revenue: 999n,
    median: 200n,
    evidence_state: 'verified',
    farm_reasons: null,
    rank: 3,
  },
} as const;

describe.each(backends())('method (numbers of 1.0.0 and 2.0.0) on $backend', ({ backend }) => {
  let database: TestDatabase;
  let generation: number;
  let generation1: number;
  let fixture: Awaited<ReturnType<typeof loadFixture>>;

  beforeAll(async () => {
    database = await freshDatabase(backend);
    fixture = await loadFixture(database.db);
    // (this block tests 2.x's numbers: 2.0.0 pinned, no longer the default; 3.0.0's: method3.test.ts)
    generation = await compute(database.db, fixture.snapshotId, { methodVersion: '2.0.0' });
    generation1 = await compute(database.db, fixture.snapshotId, { methodVersion: '1.0.0' });
  });
  afterAll(async () => database?.close());

  it('default: every seller metric, state, tier and farm reason', async () => {
    const rows = await database.db.selectFrom('gen_sellers').selectAll().where('generation', '=', generation).execute();
    const got = Object.fromEntries(
      rows.map((r) => [
        r.seller_address,
        {
          listing_count: r.listing_count,
          payments_30d: r.payments_30d,
          payers_30d: r.payers_30d,
          revenue: r.verified_revenue_30d_micro,
          median: r.median_payment_30d_micro,
          evidence_state: r.evidence_state,
          farm_reasons: r.farm_reasons,
          rank: r.rank,
        },
      ]),
    );
    expect(got).toEqual(EXPECTED);
    for (const r of rows) {
      expect(r.tier).toBe(r.evidence_state === 'verified' ? 'verified' : 'listed_only');
      expect(r.farm_flag).toBe(r.farm_reasons === null ? 0 : 1);
    }
  });

  it('behavior: window edges — a payment at exactly as_of_ts - window is out, one at as_of_ts is in', async () => {
    const a = await database.db
      .selectFrom('gen_sellers')
      .selectAll()
      .where('generation', '=', generation)
      .where('seller_address', '=', S.A)
      .executeTakeFirstOrThrow();
    expect(a.first_payment_ts).toBe(DEC_10 + 21_600n);
    expect(a.last_payment_ts).toBe(AS_OF_TS);
  });

  it('behavior: a value above 2^53 is kept exact', async () => {
    const h = await database.db
      .selectFrom('gen_sellers')
      .select(['verified_revenue_30d_micro'])
      .where('generation', '=', generation)
      .where('seller_address', '=', S.H)
      .executeTakeFirstOrThrow();
    expect(h.verified_revenue_30d_micro).toBe(5_764_607_523_034_234_880n);
  });

  it('behavior: categories of a seller are its distinct listing categories, sorted', async () => {
    const a = await database.db
      .selectFrom('gen_sellers')
      .select(['categories'])
      .where('generation', '=', generation)
      .where('seller_address', '=', S.A)
      .executeTakeFirstOrThrow();
    expect(a.categories).toEqual(['data-access', 'inference']);
  });

  it('behavior: listing rows carry their seller metrics; other_rail rows carry nulls', async () => {
    const rows = await database.db
      .selectFrom('gen_listings')
      .selectAll()
      .where('generation', '=', generation)
      .execute();
    expect(rows).toHaveLength(2 + 7 + 51 + 50 + 2);
    const other = rows.filter((r) => r.verifiability === 'other_rail');
    expect(other).toHaveLength(2);
    for (const r of other) {
      expect(r).toMatchObject({
        seller_address: null,
        verified_revenue_30d_micro: null,
        median_payment_30d_micro: null,
        farm_flag: null,
        farm_reasons: null,
        evidence_state: 'not_observed',
        tier: 'listed_only',
        sibling_listings: 0,
      });
    }
    const f = rows.filter((r) => r.seller_address === S.F);
    expect(f).toHaveLength(51);
    expect(f[0]).toMatchObject({
      sibling_listings: 51,
      farm_flag: 1,
      farm_reasons: '["listing_count>50"]',
      verified_revenue_30d_micro: 0n,
      median_payment_30d_micro: null,
      tier: 'listed_only',
    });
    const a = rows.filter((r) => r.seller_address === S.A);
    expect(
      a.map((r) => [r.sibling_listings, r.tier, r.verified_revenue_30d_micro, r.median_payment_30d_micro]),
    ).toEqual([
      [2, 'verified', 1501n, 200n],
      [2, 'verified', 1501n, 200n],
    ]);
  });

  it('behavior: market daily has the 30 covered, ended days with hand-computed totals', async () => {
    const days = await database.db
      .selectFrom('gen_market_daily')
      .selectAll()
      .where('generation', '=', generation)
      .orderBy('day')
      .execute();
    expect(days).toHaveLength(30);
    expect(days[0]!.day).toBe('2025-12-02');
    expect(days[29]!.day).toBe('2025-12-31');
    const tracked = { tracked_sellers: 10, tracked_listings: 110 };
    expect(days[0]).toMatchObject({
      payments: 1,
      volume_micro: 7777n,
      payers: 1,
      sellers_paid: 1,
      median_payment_micro: 7777n,
      ...tracked,
    });
    expect(days.find((d) => d.day === '2025-12-10')).toMatchObject({
      payments: 54,
      volume_micro: 4633n + 5n * BIG,
      payers: 3,
      sellers_paid: 8,
      median_payment_micro: 100n,
      ...tracked,
    });
    const quiet = days.filter((d) => d.day !== '2025-12-02' && d.day !== '2025-12-10');
    expect(quiet).toHaveLength(28);
    for (const d of quiet)
      expect(d).toMatchObject({
        payments: 0,
        volume_micro: 0n,
        payers: 0,
        sellers_paid: 0,
        median_payment_micro: null,
      });
  });

  it('behavior: a 1.0.0 generation has the same numbers as the 2.0.0 one, its own version and constants', async () => {
    const rows = (n: number) =>
      database.db
        .selectFrom('gen_sellers')
        .selectAll()
        .where('generation', '=', n)
        .orderBy('seller_address')
        .execute()
        .then((r) => r.map(({ generation: _g, evidence_sha256: _e, ...rest }) => rest));
    expect(await rows(generation1)).toEqual(await rows(generation));
    const g = await database.db
      .selectFrom('generations')
      .select(['method_version', 'constants'])
      .where('generation', 'in', [generation, generation1])
      .orderBy('generation')
      .execute();
    expect(g.map((r) => r.method_version)).toEqual(['2.0.0', '1.0.0']);
    expect((g[0]!.constants as Record<string, unknown>).digest_period_seconds).toBe(3600);
    expect(Object.hasOwn(g[1]!.constants as object, 'digest_period_seconds')).toBe(false);
    const periods = await database.db
      .selectFrom('gen_seller_periods')
      .select('generation')
      .where('generation', '=', generation1)
      .execute();
    expect(periods).toEqual([]);
  });

  it('behavior: 1.0.0 evidence digests, of the generation and of each seller, match the sorted lines', async () => {
    const counted = fixture.transfers.filter((t) => t.counted);
    const g = await database.db
      .selectFrom('generations')
      .select(['evidence_sha256', 'status'])
      .where('generation', '=', generation1)
      .executeTakeFirstOrThrow();
    expect(g).toEqual({ evidence_sha256: digestOf(counted), status: 'ready' });
    const sellers = await database.db
      .selectFrom('gen_sellers')
      .select(['seller_address', 'evidence_sha256'])
      .where('generation', '=', generation1)
      .execute();
    for (const s of sellers) {
      const own = counted.filter((t) => t.to === s.seller_address);
      expect(s.evidence_sha256).toBe(own.length === 0 ? EMPTY_SHA : digestOf(own));
    }
  });
});

describe.each(backends())('method coverage and visibility on $backend', ({ backend }) => {
  it('behavior: a seller covered only from 2025-12-05 makes the earlier days unpublishable', async () => {
    const database = await freshDatabase(backend);
    try {
      const { snapshotId } = await loadFixture(database.db, {
        coverageFromTs: { [S.B]: MARKET_FROM_TS + 3n * 86_400n },
      });
      const g = await compute(database.db, snapshotId);
      const days = await database.db
        .selectFrom('gen_market_daily')
        .select('day')
        .where('generation', '=', g)
        .orderBy('day')
        .execute();
      expect(days.map((d) => d.day)[0]).toBe('2025-12-05');
      expect(days).toHaveLength(27);
    } finally {
      await database.close();
    }
  });

  it('behavior: a seller not covered up to the as-of block leaves no publishable day', async () => {
    const database = await freshDatabase(backend);
    try {
      const { snapshotId } = await loadFixture(database.db);
      await database.db
        .updateTable('seller_coverage')
        .set({ to_block: AS_OF_BLOCK - 1n })
        .where('seller_address', '=', S.C)
        .execute();
      const g = await compute(database.db, snapshotId);
      const days = await database.db.selectFrom('gen_market_daily').select('day').where('generation', '=', g).execute();
      expect(days).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it('behavior: rows added after the run, or removed by a reorg at or before it, are not seen', async () => {
    const database = await freshDatabase(backend);
    try {
      const { snapshotId, transfers } = await loadFixture(database.db);
      // Seller B's four payments: one added by a later run (seq 3), one removed by the run
      // itself (seq 2), one removed only by a later run (seq 3: still seen).
      const b = transfers.filter((t) => t.to === S.B);
      // (visibility is a block version's: each moved transfer is stored again in a version of its own)
      const restore = async (t: (typeof b)[number], seqs: { addedSeq?: bigint; removedSeq?: bigint }) => {
        await sql`delete from transfers where tx_hash = decode(substr(${t.tx}, 3), 'hex')`.execute(database.db);
        await insertTransfers(database.db, [{ ...t, ...seqs }]);
      };
      await restore(b[0]!, { addedSeq: 3n });
      await restore(b[1]!, { removedSeq: 2n });
      await restore(b[2]!, { removedSeq: 3n });
      const g = await compute(database.db, snapshotId, { runSeq: 2n });
      const row = await database.db
        .selectFrom('gen_sellers')
        .select(['payments_30d', 'verified_revenue_30d_micro'])
        .where('generation', '=', g)
        .where('seller_address', '=', S.B)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ payments_30d: 2, verified_revenue_30d_micro: 20n });
    } finally {
      await database.close();
    }
  });
});

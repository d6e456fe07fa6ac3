import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertCatalog, insertCoverage, insertTransfers } from '../helpers/facts.ts';
import { AS_OF_BLOCK, AS_OF_TS, DEC_10, MARKET_FROM_TS, S, block } from './fixture.ts';
import { compute, loadFixture } from './setup.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

interface Pay {
  tx: string;
  logIndex: number;
  from: string;
  to: string;
  value: bigint;
  ts: bigint;
}

/** Method 2.0.0 worked out in TypeScript: the periods (start, count, digest) and the composed digest. */
function periodsOf(rows: Pay[], periodSeconds = 3600n) {
  const byPeriod = new Map<bigint, string[]>();
  for (const r of rows) {
    const start = r.ts - (r.ts % periodSeconds);
    byPeriod.set(start, [...(byPeriod.get(start) ?? []), `${r.tx}:${r.logIndex}:${r.from}:${r.to}:${r.value}\n`]);
  }
  return [...byPeriod.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([start, lines]) => ({
      period_start: start,
      payments: lines.length,
      sha256: sha256(lines.sort(byBytes).join('')),
    }));
}
const compose = (periods: ReturnType<typeof periodsOf>) =>
  sha256(periods.map((p) => `${p.period_start}:${p.payments}:${p.sha256}\n`).join(''));

/** A generation's closed periods of every seller, by seller and period. */
const sellerPeriods = (database: TestDatabase, generation: number) =>
  database.db
    .selectFrom('gen_seller_periods')
    .select(['seller_address', 'period_start', 'payments', 'sha256'])
    .where('generation', '=', generation)
    .orderBy('seller_address')
    .orderBy('period_start')
    .execute();

describe.each(backends())('method 2.0.0 composed digests on $backend', ({ backend }) => {
  let database: TestDatabase;
  let generation: number;
  let counted: Pay[];

  beforeAll(async () => {
    database = await freshDatabase(backend);
    const fixture = await loadFixture(database.db);
    counted = fixture.transfers.filter((t) => t.counted);
    generation = await compute(database.db, fixture.snapshotId, { methodVersion: '2.0.0' });
  });
  afterAll(async () => database?.close());

  it('default: the fixture falls in two periods: 2025-12-10T06:00Z and the as-of hour (one payment, at as_of_ts)', async () => {
    const periods = await database.db
      .selectFrom('gen_periods')
      .select(['period_start', 'payments', 'sha256'])
      .where('generation', '=', generation)
      .orderBy('period_start')
      .execute();
    // hand count: every counted payment but A's last one is 2 s apart from 06:00:00 on 2025-12-10
    expect(periods.map((p) => [p.period_start, p.payments])).toEqual([
      [DEC_10 + 21_600n, counted.length - 1],
      [AS_OF_TS, 1],
    ]);
    expect(periods).toEqual(periodsOf(counted));
  });

  it('behavior: the generation digest is the sha256 of the period lines, not the flat 1.0.0 digest', async () => {
    const g = await database.db
      .selectFrom('generations')
      .select(['evidence_sha256', 'method_version'])
      .where('generation', '=', generation)
      .executeTakeFirstOrThrow();
    expect(g).toEqual({ evidence_sha256: compose(periodsOf(counted)), method_version: '2.0.0' });
    const flat = sha256(
      counted
        .map((r) => `${r.tx}:${r.logIndex}:${r.from}:${r.to}:${r.value}\n`)
        .sort(byBytes)
        .join(''),
    );
    expect(g.evidence_sha256).not.toBe(flat);
  });

  it('behavior: each seller digest composes its own periods; a seller without payments has the empty digest and no period', async () => {
    const sellers = await database.db
      .selectFrom('gen_sellers')
      .select(['seller_address', 'evidence_sha256'])
      .where('generation', '=', generation)
      .execute();
    const periods = await sellerPeriods(database, generation);
    for (const s of sellers) {
      const own = periodsOf(counted.filter((t) => t.to === s.seller_address));
      expect(
        periods.filter((p) => p.seller_address === s.seller_address).map(({ seller_address: _s, ...p }) => p),
      ).toEqual(own);
      expect(s.evidence_sha256).toBe(compose(own));
    }
    expect(sellers.find((s) => s.seller_address === S.F)!.evidence_sha256).toBe(sha256(''));
    expect(periods.filter((p) => p.seller_address === S.A).map((p) => p.payments)).toEqual([5, 1]);
  });
});

describe.each(backends())('the worked example of docs/METHOD.md section 2.9 on $backend', ({ backend }) => {
  it('default: the three payments give the period digests and the seller digest printed there', async () => {
    const database = await freshDatabase(backend);
    try {
      const seller = `0x${'a'.repeat(40)}`;
      const [p1, p2] = [`0x${'7'.repeat(40)}`, `0x${'8'.repeat(40)}`];
      const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
      const snapshotId = await insertCatalog(database.db, [{ listing_id: '01'.repeat(32), seller_address: seller }]);
      const pay = (n: number, logIndex: number, from: string, value: bigint, ts: bigint) => ({
        tx: tx(n),
        logIndex,
        block: block(ts),
        ts,
        from,
        to: seller,
        value,
        authorizer: from,
      });
      await insertTransfers(database.db, [
        pay(1, 1, p1, 100n, 1_765_346_410n), // 2025-12-10T06:00:10Z
        pay(2, 3, p2, 300n, 1_765_349_999n), // 2025-12-10T06:59:59Z
        pay(3, 1, p1, 200n, 1_765_350_000n), // 2025-12-10T07:00:00Z: the next period
      ]);
      await insertCoverage(database.db, [
        { seller, fromTs: MARKET_FROM_TS, fromBlock: block(MARKET_FROM_TS), toBlock: AS_OF_BLOCK },
      ]);
      const g = await compute(database.db, snapshotId, { methodVersion: '2.0.0' });
      const periods = await database.db
        .selectFrom('gen_seller_periods')
        .select(['period_start', 'payments', 'sha256'])
        .where('generation', '=', g)
        .orderBy('period_start')
        .execute();
      expect(periods).toEqual([
        {
          period_start: 1_765_346_400n,
          payments: 2,
          sha256: '6fc68804bcf34aae98d5b0ebbbc1e6b25ceb968d00c7a3d0b50de8febc4ea68d',
        },
        {
          period_start: 1_765_350_000n,
          payments: 1,
          sha256: '9923d2fa4705a1d1cf54e6e8c86d745c8af96d0cbc2fced33624b3ba88ab0d69',
        },
      ]);
      const s = await database.db
        .selectFrom('gen_sellers')
        .select('evidence_sha256')
        .where('generation', '=', g)
        .executeTakeFirstOrThrow();
      expect(s.evidence_sha256).toBe('eed01f26257cfc7a0fe7b8896e8825ff96582c1b4f907aaa0aa9cb52913c6c0e');
      const gen = await database.db
        .selectFrom('generations')
        .select('evidence_sha256')
        .where('generation', '=', g)
        .executeTakeFirstOrThrow();
      expect(gen.evidence_sha256).toBe(s.evidence_sha256); // one seller: the same periods
    } finally {
      await database.close();
    }
  });
});

/**
 * The cold grouping (m_cold_periods, sql/method/01b_digests.sql) hands its per-group sorts rows
 * already ordered by compact keys (hash bytes, `log_index || ':'`, ...) instead of the lines; the
 * digests must still be those of the lines in byte order. Lines that differ only where a compact
 * key could part from the text's order: log indexes 1, 2, 9, 10, 19, 100 of one transaction
 * (`10:` sorts before `1:`, whose colon is above every digit, although 1 < 10 and '1' < '10'),
 * equal hashes and log indexes with different payers, hashes that differ in their last nibble,
 * values 5 and 50 (`5\n` before `50\n`), and two sellers in one hour (the period over all sellers).
 */
describe.each(backends())('evidence lines in byte order, cold, on $backend', ({ backend }) => {
  it('behavior: adversarial lines give the digests of the byte-sorted lines', async () => {
    const database = await freshDatabase(backend);
    try {
      const [s1, s2] = [`0x${'a'.repeat(40)}`, `0x${'1b'.repeat(20)}`];
      const [p1, p2] = [`0x${'7'.repeat(40)}`, `0x${'8'.repeat(40)}`];
      const snapshotId = await insertCatalog(database.db, [
        { listing_id: '01'.repeat(32), seller_address: s1 },
        { listing_id: '02'.repeat(32), seller_address: s2 },
      ]);
      const hour = 1_765_346_400n; // 2025-12-10T06:00:00Z
      const tx = (last: string) => `0x${'c'.repeat(63)}${last}`;
      let n = 0;
      // (one block per payment, two seconds apart: the fixture's clock)
      const pay = (
        t: string,
        logIndex: number,
        from: string,
        to: string,
        value: bigint,
      ): Pay & {
        block: bigint;
        authorizer: string;
      } => {
        const ts = hour + 2n * BigInt(++n);
        return { tx: t, logIndex, block: block(ts), ts, from, to, value, authorizer: from };
      };
      const rows = [
        ...[1, 2, 9, 10, 19, 100].map((li) => pay(tx('0'), li, p1, s1, 7n)),
        pay(tx('0'), 10, p2, s2, 7n), // the same hash and log index as one of s1's, another payer and seller
        pay(tx('9'), 3, p1, s1, 5n),
        pay(tx('a'), 3, p1, s1, 50n), // hashes parted by their last nibble, 9 < a
        pay(tx('a'), 4, p2, s2, 5n),
        pay(tx('a'), 4, p1, s2, 5n), // ... and equal hashes and log indexes, payers 7... < 8...
        pay(tx('1'), 1, p2, s2, 50n),
      ];
      // distinct blocks, so distinct (block, log index): the same hash in several blocks is the
      // chain's concern, not the method's (it reads what the facts hold)
      await insertTransfers(database.db, rows);
      await insertCoverage(
        database.db,
        [s1, s2].map((seller) => ({
          seller,
          fromTs: MARKET_FROM_TS,
          fromBlock: block(MARKET_FROM_TS),
          toBlock: AS_OF_BLOCK,
        })),
      );
      const g = await compute(database.db, snapshotId, { methodVersion: '2.0.0' });
      // (the byte order is neither the numeric nor the text order of the log indexes)
      const lines = rows.filter((r) => r.to === s1 && r.tx === tx('0')).map((r) => `${r.tx}:${r.logIndex}:`);
      expect([...lines].sort(byBytes).map((l) => l.split(':')[1])).toEqual(['100', '10', '19', '1', '2', '9']);
      const periods = await sellerPeriods(database, g);
      expect(periods).toEqual(
        [s2, s1].flatMap((s) => periodsOf(rows.filter((r) => r.to === s)).map((p) => ({ seller_address: s, ...p }))),
      );
      const all = await database.db
        .selectFrom('gen_periods')
        .select(['period_start', 'payments', 'sha256'])
        .where('generation', '=', g)
        .execute();
      expect(all).toEqual(periodsOf(rows));
      expect(all).toHaveLength(1);
    } finally {
      await database.close();
    }
  });
});

import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { AS_OF_TS, DEC_10, S } from './fixture.ts';
import { compute, loadFixture } from './setup.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

interface Pay { tx: string; logIndex: number; from: string; to: string; value: bigint; ts: bigint }

/** Method 2.0.0 worked out in TypeScript: the periods (start, count, digest) and the composed digest. */
function periodsOf(rows: Pay[], periodSeconds = 3600n) {
  const byPeriod = new Map<bigint, string[]>();
  for (const r of rows) {
    const start = r.ts - (r.ts % periodSeconds);
    byPeriod.set(start, [...(byPeriod.get(start) ?? []), `${r.tx}:${r.logIndex}:${r.from}:${r.to}:${r.value}\n`]);
  }
  return [...byPeriod.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([start, lines]) => ({ period_start: start, payments: lines.length, sha256: sha256(lines.sort(byBytes).join('')) }));
}
const compose = (periods: ReturnType<typeof periodsOf>) =>
  sha256(periods.map((p) => `${p.period_start}:${p.payments}:${p.sha256}\n`).join(''));

describe.each(backends())('method 2.0.0 composed digests on $backend', ({ backend }) => {
  let database: TestDatabase;
  let generation: number;
  let counted: Pay[];

  beforeAll(async () => {
    database = await freshDatabase(backend);
    const fixture = await loadFixture(database.db);
    counted = fixture.transfers.filter((t) => t.counted);
    generation = await compute(database.db, fixture.snapshotId);
  });
  afterAll(async () => database?.close());

  it('default: the fixture falls in two periods: 2025-12-10T06:00Z and the as-of hour (one payment, at as_of_ts)', async () => {
    const periods = await database.db.selectFrom('gen_periods').select(['period_start', 'payments', 'sha256'])
      .where('generation', '=', generation).orderBy('period_start').execute();
    // hand count: every counted payment but A's last one is 2 s apart from 06:00:00 on 2025-12-10
    expect(periods.map((p) => [p.period_start, p.payments])).toEqual([[DEC_10 + 21_600n, counted.length - 1], [AS_OF_TS, 1]]);
    expect(periods).toEqual(periodsOf(counted));
  });

  it('behavior: the generation digest is the sha256 of the period lines, not the flat 1.0.0 digest', async () => {
    const g = await database.db.selectFrom('generations').select(['evidence_sha256', 'method_version'])
      .where('generation', '=', generation).executeTakeFirstOrThrow();
    expect(g).toEqual({ evidence_sha256: compose(periodsOf(counted)), method_version: '2.0.0' });
    const flat = sha256(counted.map((r) => `${r.tx}:${r.logIndex}:${r.from}:${r.to}:${r.value}\n`).sort(byBytes).join(''));
    expect(g.evidence_sha256).not.toBe(flat);
  });

  it('behavior: each seller digest composes its own periods; a seller without payments has the empty digest and no period', async () => {
    const sellers = await database.db.selectFrom('gen_sellers').select(['seller_address', 'evidence_sha256'])
      .where('generation', '=', generation).execute();
    const periods = await database.db.selectFrom('gen_seller_periods').select(['seller_address', 'period_start', 'payments', 'sha256'])
      .where('generation', '=', generation).orderBy('seller_address').orderBy('period_start').execute();
    for (const s of sellers) {
      const own = periodsOf(counted.filter((t) => t.to === s.seller_address));
      expect(periods.filter((p) => p.seller_address === s.seller_address).map(({ seller_address: _s, ...p }) => p)).toEqual(own);
      expect(s.evidence_sha256).toBe(compose(own));
    }
    expect(sellers.find((s) => s.seller_address === S.F)!.evidence_sha256).toBe(sha256(''));
    expect(periods.filter((p) => p.seller_address === S.A).map((p) => p.payments)).toEqual([5, 1]);
  });
});

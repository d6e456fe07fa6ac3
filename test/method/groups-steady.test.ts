import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetDerivedState } from '../../src/method/index.ts';
import { backends, type TestDatabase } from '../helpers/db.ts';
import { insertTransfers } from '../helpers/facts.ts';
import { block } from './fixture.ts';
import { P, S, dec, groupsDatabase, outputsOf0038, payment } from './fixture-groups.ts';
import { compute } from './setup.ts';

/**
 * Operator groups in steady runs (docs/METHOD.md 2.12.1, "How a run computes them"): a group with
 * the same members takes the previous generation's distinct payers and moves them by the payers
 * its members gained and lost. The economy is groups.test.ts's (fixture-groups.ts): group
 * {A, B, C}, payers {p1, B, p2, p3} = 4 (p1 pays A and B; p2 pays B; p3 pays C; B pays A).
 *
 *   seq 2: p2 pays C (Dec 10; p2 already pays B: still 4) and p4, new, pays A (Dec 29): 5
 *   seq 3: a reorg removes B <- p2 (Dec 19; p2 still pays C: no change) and C <- p3 (Dec 5; p3
 *          paid no other member: -1), in one run: 4 = {p1, B, p2, p4}
 *   seq 4: a reorg removes C <- p2 (Dec 10): p2 pays no member now: 3 = {p1, B, p4}
 * Each run's group row equals a from-scratch computation's over the same facts.
 */

const p4 = `0x${'6'.repeat(40)}`;
const GROUP = `op_${'a'.repeat(40)}`;

const removeBlockOf = (t: TestDatabase, day: number, seq: bigint) =>
  sql`update blocks set removed_seq = ${seq} where removed_seq is null and block_id >> 20 = ${block(dec(day))}`.execute(
    t.db,
  );

describe.each(backends())('operator groups in steady runs on $backend', ({ backend }) => {
  let t: TestDatabase;
  let snapshotId: bigint;
  beforeAll(async () => ({ t, snapshotId } = await groupsDatabase(backend)));
  afterAll(() => t.close());

  const payersOf = async (g: number) =>
    (
      await t.db
        .selectFrom('gen_operator_groups')
        .select('payers_30d')
        .where('generation', '=', g)
        .where('group_id', '=', GROUP)
        .executeTakeFirstOrThrow()
    ).payers_30d;

  /** The generation computed again from the facts alone (a cold run) has the same outputs. */
  const sameAsFromScratch = async (g: number, runSeq: bigint) => {
    const incremental = await outputsOf0038(t.db, g);
    await forgetDerivedState(t.db);
    const scratch = await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq });
    expect(incremental).toEqual(await outputsOf0038(t.db, scratch));
  };

  it('behavior: payers gained and lost by members move the group count once per payer', async () => {
    const g1 = await compute(t.db, snapshotId, { methodVersion: '3.0.0' });
    expect(await payersOf(g1)).toBe(4);

    await insertTransfers(t.db, [
      payment({ tx: `0x${'e1'.repeat(32)}`, logIndex: 91, ts: dec(10), from: P.p2, to: S.C, value: 20n, addedSeq: 2n }),
      payment({
        tx: `0x${'e2'.repeat(32)}`,
        logIndex: 92,
        ts: dec(29) + 10n,
        from: p4,
        to: S.A,
        value: 30n,
        addedSeq: 2n,
      }),
    ]);
    const g2 = await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq: 2n });
    expect(await payersOf(g2)).toBe(5);
    await sameAsFromScratch(g2, 2n);

    // (the from-scratch generation is now the previous one: computed at seq 2 too, it is at the
    // state the accumulators hold, so the next run moves its count)
    await removeBlockOf(t, 19, 3n);
    await removeBlockOf(t, 5, 3n);
    const g3 = await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq: 3n });
    expect(await payersOf(g3)).toBe(4);
    await sameAsFromScratch(g3, 3n);

    await removeBlockOf(t, 10, 4n);
    const g4 = await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq: 4n });
    expect(await payersOf(g4)).toBe(3);
    await sameAsFromScratch(g4, 4n);
  });

  it('behavior: the count comes from the previous generation only when it is at the accumulators’ state', async () => {
    // A previous count made wrong on purpose shows through in a steady run (the count is moved,
    // not read again) ...
    const base = await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq: 4n });
    const right = await payersOf(base);
    await sql`update gen_operator_groups set payers_30d = payers_30d + 100 where generation = ${base}`.execute(t.db);
    const next = await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq: 5n });
    expect(await payersOf(next)).toBe(right + 100);
    // ... but not after a generation of another payment set (2.0.0 at the same seq: the run after
    // it is cold, every group counted from the accumulators) ...
    const other = await compute(t.db, snapshotId, { methodVersion: '2.0.0', runSeq: 5n });
    await sql`update gen_operator_groups set payers_30d = payers_30d + 100 where generation = ${other}`.execute(t.db);
    expect(await payersOf(await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq: 5n }))).toBe(right);
    // ... nor at another seq than the accumulators' (a generation deleted after its run)
    const last = await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq: 6n });
    await sql`update gen_operator_groups set payers_30d = payers_30d + 100 where generation < ${last}`.execute(t.db);
    await sql`delete from generations where generation = ${last}`.execute(t.db);
    expect(await payersOf(await compute(t.db, snapshotId, { methodVersion: '3.0.0', runSeq: 7n }))).toBe(right);
  });
});

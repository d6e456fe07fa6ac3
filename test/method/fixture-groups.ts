import type { Kysely } from 'kysely';
import type { Schema } from '../../src/db/schema.ts';
import { loadMethodSteps, type MethodStep } from '../../src/method/sql-files.ts';
import { freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertCatalog, insertCoverage, insertTransfers, type FixtureTransfer } from '../helpers/facts.ts';
import { AS_OF_BLOCK, MARKET_FROM_TS, block } from './fixture.ts';

/** The economy of the operator groups and market summary tests (groups.test.ts explains each number). */
const a = (c: string) => `0x${c.repeat(40)}`;
export const S = { A: a('a'), B: a('b'), C: a('c'), D: a('d'), E: a('e') };
export const P = { p1: a('7'), p2: a('8'), p3: a('9') };
export const DAY = 86_400n;
export const dec = (d: number) => MARKET_FROM_TS + BigInt(d - 2) * DAY + 3_600n; // 01:00 UTC on Dec d

const LISTINGS = [
  { seller: S.A, url: 'https://h1.example/a' },
  { seller: S.A, url: 'https://H1.example:8443/b' },
  { seller: S.B, url: 'https://h1.example/x' },
  { seller: S.B, url: 'https://h2.example/y' },
  { seller: S.C, url: 'https://h2.example/z' },
  { seller: S.D, url: 'https://h3.example/' },
  { seller: S.E, url: 'https://h4.example/e' },
];

const PAYS: [string, string, bigint, number][] = [
  [S.A, P.p1, 100n, 31],
  [S.A, P.p1, 50n, 20],
  [S.A, S.B, 40n, 27],
  [S.B, P.p1, 200n, 30],
  [S.B, P.p2, 300n, 19],
  [S.C, P.p3, 10n, 5],
  [S.D, P.p2, 1000n, 26],
  [S.E, P.p1, 7n, 29],
];

/**
 * A verified payment of `value` micro-USDC from `from` (its own authorizer) to `to` at `ts`, in the
 * block of that time, added at `addedSeq` (1 unless given).
 */
export function payment(p: {
  tx: string;
  logIndex: number;
  ts: bigint;
  from: string;
  to: string;
  value: bigint;
  addedSeq?: bigint;
}): FixtureTransfer {
  return { ...p, block: block(p.ts), authorizer: p.from };
}

export async function loadGroups(db: Kysely<Schema>, coverageFrom = MARKET_FROM_TS) {
  const snapshotId = await insertCatalog(
    db,
    LISTINGS.map((l, i) => ({
      listing_id: (i + 1).toString(16).padStart(64, '0'),
      seller_address: l.seller,
      category: 'inference',
      resource_url: l.url,
    })),
  );
  await insertTransfers(
    db,
    PAYS.map(([to, from, value, day], i) =>
      payment({ tx: `0x${(i + 1).toString(16).padStart(64, '0')}`, logIndex: i, ts: dec(day), from, to, value }),
    ),
  );
  await insertCoverage(
    db,
    Object.values(S).map((seller) => ({
      seller,
      fromTs: coverageFrom,
      fromBlock: block(coverageFrom),
      toBlock: AS_OF_BLOCK,
    })),
  );
  return snapshotId;
}

/** A fresh database on `backend` with this economy loaded, and its catalog snapshot. */
export async function groupsDatabase(backend: 'pglite' | 'pg'): Promise<{ t: TestDatabase; snapshotId: bigint }> {
  const t = await freshDatabase(backend);
  return { t, snapshotId: await loadGroups(t.db) };
}

/**
 * The steps of `version` as they were before migration 0038: without the operator groups and the
 * summary.
 */
export function stepsBefore0038(version: string): MethodStep[] {
  return loadMethodSteps(version).filter((s) => s.name !== 'operator_groups' && s.name !== 'market_summary');
}

/**
 * A generation's outputs of migration 0038 (operator groups, members, summary periods, and which
 * it has), without the generation number: what an incremental run and a from-scratch one over
 * the same facts must agree on (incremental.test.ts, incremental3.test.ts).
 */
export async function outputsOf0038(db: Kysely<Schema>, generation: number) {
  const without = <T extends { generation: number }>(rows: T[]) => rows.map(({ generation: _g, ...r }) => r);
  return {
    outputs: without(
      await db.selectFrom('gen_outputs').selectAll().where('generation', '=', generation).orderBy('output').execute(),
    ),
    groups: without(
      await db
        .selectFrom('gen_operator_groups')
        .selectAll()
        .where('generation', '=', generation)
        .orderBy('group_id')
        .execute(),
    ),
    members: without(
      await db
        .selectFrom('gen_operator_members')
        .selectAll()
        .where('generation', '=', generation)
        .orderBy('seller_address')
        .execute(),
    ),
    summary: without(
      await db
        .selectFrom('gen_market_summary')
        .selectAll()
        .where('generation', '=', generation)
        .orderBy('period')
        .execute(),
    ),
  };
}

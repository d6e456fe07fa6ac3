import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../src/db/schema.ts';
import { computeGeneration, DERIVED_TABLES, type ComputeOptions } from '../../src/method/index.ts';
import { blockHash, insertCatalog, insertCoverage, insertTransfers } from '../helpers/facts.ts';
import { channelOf, insertChannelCreated, insertFacts3, insertOutgoing } from '../helpers/facts3.ts';
import {
  AS_OF_BLOCK,
  AS_OF_TS,
  MARKET_FROM_TS,
  WINDOW_START_TS,
  block,
  fixtureListings,
  fixtureTransfers,
} from './fixture.ts';
import { fixture3, fixture3Listings, P3S, S3S } from './fixture3.ts';

export const ASOF = { number: AS_OF_BLOCK, hash: blockHash(AS_OF_BLOCK), timestamp: AS_OF_TS };

/** Loads the hand-checked fixture: catalog, chain facts, and full coverage of every seller. */
export async function loadFixture(db: Kysely<Schema>, options: { coverageFromTs?: Record<string, bigint> } = {}) {
  const listings = fixtureListings();
  const snapshotId = await insertCatalog(db, listings);
  const transfers = fixtureTransfers();
  await insertTransfers(db, transfers);
  const sellers = [...new Set(listings.map((l) => l.seller_address).filter((s): s is string => s !== null))];
  await insertCoverage(
    db,
    sellers.map((seller) => {
      const fromTs = options.coverageFromTs?.[seller] ?? MARKET_FROM_TS;
      return { seller, fromTs, fromBlock: block(fromTs), toBlock: AS_OF_BLOCK };
    }),
  );
  return { snapshotId, transfers, sellers };
}

/**
 * Loads method 3.0.0's hand-checked fixture (fixture3.ts): catalog, facts of every class, the
 * sellers' outgoing transfers, the channels, and full coverage of every seller.
 */
export async function loadFixture3(db: Kysely<Schema>) {
  const snapshotId = await insertCatalog(db, fixture3Listings());
  const facts = fixture3();
  await insertFacts3(db, facts);
  await insertOutgoing(db, facts.outgoing);
  // S1's channel with P4 was created before the window; a channel of another token to S1, and
  // one whose receiver is no seller (its claim, x2, is stored and must be ignored)
  await insertChannelCreated(db, {
    channel: channelOf(facts.claims.find((c) => c.receiver === S3S.S1)!),
    payer: P3S.P4,
    receiver: S3S.S1,
    block: block(WINDOW_START_TS - 3600n),
  });
  await insertChannelCreated(db, {
    channel: `0x${'e1'.repeat(32)}`,
    payer: P3S.P1,
    receiver: S3S.S1,
    token: `0x${'77'.repeat(20)}`,
    block: block(WINDOW_START_TS + 3600n),
  });
  await insertCoverage(
    db,
    Object.values(S3S).map((seller) => ({
      seller,
      fromTs: MARKET_FROM_TS,
      fromBlock: block(MARKET_FROM_TS),
      toBlock: block(AS_OF_TS),
    })),
  );
  return { snapshotId, facts };
}

export function compute(db: Kysely<Schema>, snapshotId: bigint, extra: Partial<ComputeOptions> = {}) {
  return computeGeneration(db, {
    runSeq: 1n,
    asOf: ASOF,
    catalogSnapshotId: snapshotId,
    sources: [{ name: 'catalog', source: 'fixture' }],
    generatedAt: new Date('2026-01-01T12:05:00Z'),
    ...extra,
  });
}

/**
 * Empties a database of generations, derived state, chain facts and catalogs, then covers each
 * of `sellers` for every block: the start of a random history (the property tests).
 */
export async function resetHistory(db: Kysely<Schema>, sellers: readonly string[]): Promise<void> {
  for (const table of [
    'generations',
    ...DERIVED_TABLES,
    'transfers',
    'blocks',
    'addresses',
    'address_prune_due',
    'catalog_snapshots',
    'seller_coverage',
  ]) {
    await sql`delete from ${sql.table(table)}`.execute(db);
  }
  await db
    .insertInto('seller_coverage')
    .values(sellers.map((s) => ({ seller_address: s, from_block: 0n, from_ts: 0n, to_block: 10n ** 15n })))
    .execute();
}

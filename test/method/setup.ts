import type { Kysely } from 'kysely';
import type { Schema } from '../../src/db/schema.ts';
import { computeGeneration, type ComputeOptions } from '../../src/method/index.ts';
import { blockHash, insertCatalog, insertCoverage, insertTransfers } from '../helpers/facts.ts';
import { AS_OF_BLOCK, AS_OF_TS, MARKET_FROM_TS, block, fixtureListings, fixtureTransfers } from './fixture.ts';

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

import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../src/db/schema.ts';
import { computeGeneration, DERIVED_TABLES, type ComputeOptions } from '../../src/method/index.ts';
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

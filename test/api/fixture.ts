import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { UNNUMBERED, type Schema } from '../../src/db/schema.ts';
import { openSellerPartition } from '../helpers/seller-numbers.ts';
import { writeFactRows } from '../../src/db/load-facts.ts';
import { BASE_USDC } from '../../src/config/index.ts';
import { METHOD_CONSTANTS_1_0_0 as METHOD_CONSTANTS } from '../../src/method/constants.ts';

/**
 * A small published generation written straight into the tables, with its expected values worked
 * out by hand (below, next to each number). Four sellers and seven listings:
 *
 * - A (0xabab..) verified, rank 1: 5 payments from 3 payers, 1 + 2 + 3 + 4 USDC and
 *   9,007,199,244.740993 USDC, so revenue = 9,007,199,254,740,993 micro = 2^53 + 1 (not a double);
 *   lower median of 5 values = the 3rd = 3,000,000. Two listings (inference, data-access).
 *   Also: one verified payment just before the window (in the view, in_window false), one plain
 *   transfer without AuthorizationUsed, one after the as-of block: none may show as evidence.
 * - B (0xbcbc..) verified, rank 2, farm: payer P1 8 x 10 USDC, P2 and P3 1 USDC each: revenue
 *   82,000,000; 10 * 80,000,000 > 9 * 82,000,000 so top_payer_share>0.9; lower median of 10 = 5th
 *   ascending = 10,000,000.
 * - C (0xcdcd..) insufficient: 100,000 + 200,000 from 2 payers; lower median 100,000.
 * - D (0xdede..) not observed: no payments.
 * - two other_rail listings (solana, base-sepolia) with null metrics.
 * Market rows are arbitrary values served as stored (the API computes nothing).
 */
export const A = `0x${'ab'.repeat(20)}`;
export const B = `0x${'bc'.repeat(20)}`;
export const C = `0x${'cd'.repeat(20)}`;
export const D = `0x${'de'.repeat(20)}`;
const X = `0x${'01'.repeat(20)}`;
const Y = `0x${'02'.repeat(20)}`;
const Z = `0x${'03'.repeat(20)}`;

export const AS_OF_BLOCK = 40_000_000;
export const AS_OF_TS = 1_767_236_400; // 2026-01-01T03:00:00Z
export const WINDOW_START_TS = AS_OF_TS - 2_592_000; // 2025-12-02T03:00:00Z
export const MARKET_FROM_TS = 1_764_633_600; // 2025-12-02T00:00:00Z
/** Block time of block b: 2-second blocks ending at the as-of block. */
export const tsOf = (b: number) => AS_OF_TS - 2 * (AS_OF_BLOCK - b);
export const listingId = (n: number) => n.toString(16).padStart(2, '0').repeat(32);
export const txHash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const blockHash = (b: number) => `0x${b.toString(16).padStart(64, 'b')}`;

export interface Payment {
  tx: number;
  block: number;
  log: number;
  payer: string;
  seller: string;
  value: bigint;
  auth?: boolean;
}

/** Verified payments in the window (the evidence), per seller. */
export const PAYMENTS: Payment[] = [
  { tx: 1, block: 39_000_001, log: 3, payer: X, seller: A, value: 1_000_000n },
  { tx: 2, block: 39_100_000, log: 0, payer: Y, seller: A, value: 2_000_000n },
  { tx: 3, block: 39_200_000, log: 5, payer: Z, seller: A, value: 3_000_000n },
  { tx: 4, block: 39_200_000, log: 7, payer: X, seller: A, value: 4_000_000n },
  { tx: 5, block: 39_500_000, log: 1, payer: Y, seller: A, value: 9_007_199_244_740_993n },
  ...[0, 1, 2, 3, 4, 5, 6, 7].map((i) => ({
    tx: 10 + i,
    block: 39_600_000 + i,
    log: 0,
    payer: `0x${'11'.repeat(20)}`,
    seller: B,
    value: 10_000_000n,
  })),
  { tx: 20, block: 39_610_000, log: 2, payer: `0x${'12'.repeat(20)}`, seller: B, value: 1_000_000n },
  { tx: 21, block: 39_620_000, log: 4, payer: `0x${'13'.repeat(20)}`, seller: B, value: 1_000_000n },
  { tx: 30, block: 39_700_000, log: 0, payer: `0x${'21'.repeat(20)}`, seller: C, value: 100_000n },
  { tx: 31, block: 39_800_000, log: 1, payer: `0x${'22'.repeat(20)}`, seller: C, value: 200_000n },
];
/** Transfers to A that are not evidence of the window. */
const NOT_EVIDENCE: Payment[] = [
  { tx: 40, block: AS_OF_BLOCK - 1_297_800, log: 0, payer: X, seller: A, value: 777n }, // 2025-12-02T02:00Z: before the window
  { tx: 41, block: 39_300_000, log: 0, payer: Z, seller: A, value: 555n, auth: false }, // plain transfer
  { tx: 42, block: AS_OF_BLOCK + 10, log: 0, payer: X, seller: A, value: 999n }, // after the as-of block
];

function evidenceSha(payments: Payment[]): string {
  const lines = payments.map((p) => `${txHash(p.tx)}:${p.log}:${p.payer}:${p.seller}:${p.value}\n`).sort();
  return createHash('sha256').update(lines.join('')).digest('hex');
}
export const sellerEvidence = (s: string) => evidenceSha(PAYMENTS.filter((p) => p.seller === s));

type ListingSeed = [
  n: number,
  seller: string | null,
  category: string,
  source: 'auto' | 'seller_asserted',
  network: string,
  title: string | null,
  description: string | null,
];
export const LISTINGS: ListingSeed[] = [
  [1, A, 'inference', 'seller_asserted', 'base', 'Alpha inference', 'LLM completions'],
  [2, A, 'data-access', 'auto', 'eip155:8453', null, null],
  [3, B, 'inference', 'auto', 'base', 'Beta', 'Chat "quoted" \\ text'],
  [4, C, 'search-retrieval', 'auto', 'base', 'Gamma search', null],
  [5, D, 'inference', 'seller_asserted', 'base', 'Delta', 'idle'],
  [6, null, 'inference', 'auto', 'solana', null, null],
  [7, null, 'media-generation', 'auto', 'base-sepolia', 'Testnet art', 'images'],
];

interface SellerSeed {
  address: string;
  listings: number;
  payments: number;
  payers: number;
  revenue: bigint;
  median: bigint | null;
  evidence: 'verified' | 'insufficient' | 'not_observed';
  tier: 'verified' | 'listed_only';
  farm: 0 | 1;
  reasons: string | null;
  rank: number | null;
  categories: string[];
  firstBlock: number | null;
  lastBlock: number | null;
}
export const SELLERS: SellerSeed[] = [
  {
    address: A,
    listings: 2,
    payments: 5,
    payers: 3,
    revenue: 9_007_199_254_740_993n,
    median: 3_000_000n,
    evidence: 'verified',
    tier: 'verified',
    farm: 0,
    reasons: null,
    rank: 1,
    categories: ['data-access', 'inference'],
    firstBlock: 39_000_001,
    lastBlock: 39_500_000,
  },
  {
    address: B,
    listings: 1,
    payments: 10,
    payers: 3,
    revenue: 82_000_000n,
    median: 10_000_000n,
    evidence: 'verified',
    tier: 'verified',
    farm: 1,
    reasons: '["top_payer_share>0.9"]',
    rank: 2,
    categories: ['inference'],
    firstBlock: 39_600_000,
    lastBlock: 39_620_000,
  },
  {
    address: C,
    listings: 1,
    payments: 2,
    payers: 2,
    revenue: 300_000n,
    median: 100_000n,
    evidence: 'insufficient',
    tier: 'listed_only',
    farm: 0,
    reasons: null,
    rank: null,
    categories: ['search-retrieval'],
    firstBlock: 39_700_000,
    lastBlock: 39_800_000,
  },
  {
    address: D,
    listings: 1,
    payments: 0,
    payers: 0,
    revenue: 0n,
    median: null,
    evidence: 'not_observed',
    tier: 'listed_only',
    farm: 0,
    reasons: null,
    rank: null,
    categories: ['inference'],
    firstBlock: null,
    lastBlock: null,
  },
];

export const CATALOG_SHA = 'c5'.repeat(32);
export const SOURCES = [
  {
    name: 'catalog',
    source: 'bazaar-catalog-2025-12-31.json',
    fetched_at: '2026-01-01T03:00:05.000Z',
    items: 9,
    listings: 7,
    rejected: 2,
    sha256: CATALOG_SHA,
  },
  {
    name: 'base_usdc',
    chain_id: 8453,
    contract: BASE_USDC,
    indexed_to_block: AS_OF_BLOCK,
    indexed_to_timestamp: '2026-01-01T03:00:00.000Z',
    lag_seconds: 30,
  },
];
export const MARKET = [
  {
    day: '2025-12-29',
    payments: 0,
    volume_micro: 0n,
    payers: 0,
    sellers_paid: 0,
    median_payment_micro: null,
    tracked_sellers: 4,
    tracked_listings: 5,
  },
  {
    day: '2025-12-30',
    payments: 1,
    volume_micro: 2_000_000n,
    payers: 1,
    sellers_paid: 1,
    median_payment_micro: 2_000_000n,
    tracked_sellers: 4,
    tracked_listings: 5,
  },
  {
    day: '2025-12-31',
    payments: 2,
    volume_micro: 9_007_199_254_740_993n,
    payers: 2,
    sellers_paid: 1,
    median_payment_micro: 1_000_000n,
    tracked_sellers: 4,
    tracked_listings: 5,
  },
];

/** Chain facts and the catalog snapshot (shared by every generation of the fixture). */
export async function insertChainAndCatalog(db: Kysely<Schema>): Promise<bigint> {
  const snap = await db
    .insertInto('catalog_snapshots')
    .values({
      source: 'bazaar-catalog-2025-12-31.json',
      fetched_at: '2026-01-01T03:00:05Z',
      sha256: CATALOG_SHA,
      items_count: 9,
      listings_count: 7,
      rejected_count: 2,
    })
    .returning('snapshot_id')
    .executeTakeFirstOrThrow();
  const id = snap.snapshot_id;
  await db
    .insertInto('catalog_listings')
    .values(
      LISTINGS.map(([n, seller, category, source, network, title, description]) => ({
        snapshot_id: id,
        listing_id: listingId(n),
        item_index: n,
        accept_index: 0,
        resource_url: `https://l${n}.example/api`,
        network,
        canonical_network: network === 'base' ? 'eip155:8453' : network,
        pay_to: seller ?? `pay-${n}`,
        asset: seller ? BASE_USDC : 'other',
        verifiability: seller ? 'base_usdc' : 'other_rail',
        seller_address: seller,
        title,
        description,
        category,
        category_source: source,
      })),
    )
    .execute();
  const all = [...PAYMENTS, ...NOT_EVIDENCE];
  await writeFactRows(
    db,
    all.map((p) => ({
      tx: txHash(p.tx),
      logIndex: p.log,
      blockHash: blockHash(p.block),
      block: BigInt(p.block),
      ts: BigInt(tsOf(p.block)),
      from: p.payer,
      to: p.seller,
      value: BigInt(p.value),
      addedSeq: 1n,
      removedSeq: null,
      authorized: p.auth !== false,
      pairLogIndex: p.log + 1000,
      nonce: `0x${'00'.repeat(32)}`,
    })),
  );
  return id;
}

/**
 * Inserts generation `n` (its rows as above; `titleSuffix` marks a later generation's titles) with
 * the given status. Returns nothing; run inside a transaction to publish atomically.
 */
export async function insertGeneration(
  db: Kysely<Schema>,
  snapshotId: bigint,
  n: number,
  status: 'published' | 'ready',
  titleSuffix = '',
  publishedAt = '2026-01-01T03:12:00Z',
): Promise<void> {
  await db
    .insertInto('generations')
    .values({
      generation: n,
      status,
      run_seq: 1,
      method_version: '1.0.0',
      generated_at: '2026-01-01T03:10:00Z',
      published_at: status === 'published' ? publishedAt : null,
      as_of_block: AS_OF_BLOCK,
      as_of_block_hash: `0x${'ee'.repeat(32)}`,
      as_of_ts: AS_OF_TS,
      window_seconds: 2_592_000,
      window_start_ts: WINDOW_START_TS,
      market_from_ts: MARKET_FROM_TS,
      catalog_snapshot_id: snapshotId,
      catalog_sha256: CATALOG_SHA,
      evidence_sha256: evidenceSha(PAYMENTS),
      constants: JSON.stringify(METHOD_CONSTANTS),
      sources: JSON.stringify(SOURCES),
    })
    .execute();
  await openSellerPartition(db, n);
  await db
    .insertInto('gen_sellers')
    .values(
      SELLERS.map((s) => ({
        generation: n,
        seller_address: s.address,
        listing_count: s.listings,
        payments_30d: s.payments,
        payers_30d: s.payers,
        verified_revenue_30d_micro: s.revenue,
        median_payment_30d_micro: s.median,
        evidence_state: s.evidence,
        tier: s.tier,
        farm_flag: s.farm,
        farm_reasons: s.reasons,
        rank: s.rank,
        categories: s.categories,
        evidence_sha256: sellerEvidence(s.address),
        first_payment_ts: s.firstBlock === null ? null : tsOf(s.firstBlock),
        last_payment_ts: s.lastBlock === null ? null : tsOf(s.lastBlock),
        first_block: s.firstBlock,
        last_block: s.lastBlock,
        ...UNNUMBERED,
      })),
    )
    .execute();
  await sql`select gen_sellers_set_numbers(${n})`.execute(db);
  const bySeller = new Map(SELLERS.map((s) => [s.address, s]));
  await db
    .insertInto('gen_listings_fixed')
    .values(
      LISTINGS.map(([i, seller, category, source, network, title, description]) => {
        const s = seller ? bySeller.get(seller)! : undefined;
        return {
          generation: n,
          listing_id: listingId(i),
          seller_address: seller,
          verifiability: seller ? ('base_usdc' as const) : ('other_rail' as const),
          resource_url: `https://l${i}.example/api`,
          title: title === null ? null : title + titleSuffix,
          network,
          description,
          category,
          category_source: source,
          tier: s?.tier ?? 'listed_only',
          evidence_state: s?.evidence ?? 'not_observed',
          verified_revenue_30d_micro: s ? s.revenue : null,
          median_payment_30d_micro: s ? s.median : null,
          farm_flag: s ? s.farm : null,
          farm_reasons: s ? s.reasons : null,
          sibling_listings: s?.listings ?? 0,
        };
      }),
    )
    .execute();
  await db
    .insertInto('gen_market_daily')
    .values(MARKET.map((m) => ({ generation: n, ...m })))
    .execute();
}

/** Publishes generation n as publishing does: one transaction, rows + status + pointer switch. */
export async function publishGeneration(
  db: Kysely<Schema>,
  snapshotId: bigint,
  n: number,
  titleSuffix = '',
  publishedAt?: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await insertGeneration(trx, snapshotId, n, 'published', titleSuffix, publishedAt);
    const updated = await trx.updateTable('published_pointer').set({ generation: n }).executeTakeFirst();
    if (updated.numUpdatedRows === 0n) await trx.insertInto('published_pointer').values({ generation: n }).execute();
  });
}

/** The standard fixture: generation 1 published, generation 3 built but never published. */
export async function seedFixture(db: Kysely<Schema>): Promise<{ snapshotId: bigint }> {
  const snapshotId = await insertChainAndCatalog(db);
  await publishGeneration(db, snapshotId, 1);
  await insertGeneration(db, snapshotId, 3, 'ready');
  return { snapshotId };
}

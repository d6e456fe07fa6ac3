import { sql, type Kysely } from 'kysely';
import { UNNUMBERED, type Schema } from '../../src/db/schema.ts';
import { BASE_USDC } from '../../src/config/index.ts';
import { openSellerPartition } from '../helpers/seller-numbers.ts';
import { METHOD_CONSTANTS_2_0_0 } from '../../src/method/constants.ts';
import {
  A,
  AS_OF_BLOCK,
  AS_OF_TS,
  B,
  C,
  CATALOG_SHA,
  D,
  insertChainAndCatalog,
  listingId,
  MARKET,
  MARKET_FROM_TS,
  sellerEvidence,
  SELLERS,
  SOURCES,
  tsOf,
  txHash,
  WINDOW_START_TS,
} from './fixture.ts';

/**
 * A published method 3.0.0 generation (4, the latest) beside a published method 2.0.0 one (2),
 * both over the chain facts and catalog of test/api/fixture.ts, with rows written by hand as the
 * method would publish them: the API only reads published rows, so this is its real input. There
 * is no 3.0.0 computation on this branch: every 3.0.0 number below is chosen here and checked by
 * hand against the others of its row (classes sum to the totals, external + internal = total).
 *
 * Catalog: fixture.ts's seven listings, plus
 * - 8: paid to the canonical x402 Permit2 exact proxy on Base USDC: a seller under 2.0.0 (the
 *   catalog says base_usdc), `other_rail` and no seller under 3.0.0;
 * - 9 (E, inference) and 10 (F, data-access): two more ranked sellers.
 *
 * Generation 4 (3.0.0), ranked sellers, default order by verified revenue:
 *
 * | seller | rank | revenue                | external   | by class (payments / revenue)                      | internal |
 * |--------|------|------------------------|------------|-----------------------------------------------------|----------|
 * | A      | 1    | 9,007,199,254,740,993  | 10,000,000 | eip3009 2 / 9,007,199,245,740,993; exact 1 / 2,000,000; upto 1 / 3,000,000; batch 1 / 4,000,000 | seller_funded 1 / 9,007,199,244,740,993, payer Y |
 * | B      | 2    | 82,000,000             | 2,000,000  | eip3009 2 / 2,000,000; batch 8 / 80,000,000         | same_operator 8 / 80,000,000, 1 payer |
 * | E      | 3    | 50,000,000             | 50,000,000 | exact 5 / 50,000,000                                | none |
 * | F      | 4    | 10,000,000             | 10,000,000 | upto 3 / 6,000,000; batch 2 / 4,000,000             | none |
 *
 * By external revenue, ties in the default order: E (50M), A (10M, rank 1), F (10M, rank 4), B (2M).
 * B is flagged `internal_share>0.5`: 10 payments >= 10 and 2 x 80,000,000 > 82,000,000.
 *
 * Medians are over per-request classes only: A's 1, 2, 3 and 9,007,199,244.740993 USDC -> the 2nd,
 * 2,000,000; B's two 1 USDC -> 1,000,000.
 *
 * A's evidence rows (fixture.ts's payments) are labelled with the classes above: tx 1 eip3009, tx 2
 * permit2_exact, tx 3 permit2_upto, tx 4 batch_settlement, tx 5 eip3009 seller_funded (payer Y).
 *
 * Generation 2 (2.0.0) holds fixture.ts's rows for A-D, and E, F and the proxy listed, unpaid (2.x
 * counts none of their classes). The two generations are independent hand-made publications; the
 * API serves each as stored.
 */
export const E = `0x${'e5'.repeat(20)}`;
export const F = `0x${'f6'.repeat(20)}`;
/** The canonical x402 Permit2 exact proxy (SPEC "Method 3.0.0"), as a listing's payTo. */
export const EXACT_PROXY = '0x402085c248eea27d92e8b30b2c58ed07f9e20001';
export const GEN2 = 2;
export const GEN3 = 4;

export interface Seller3 {
  address: string;
  rank: number | null;
  revenue: bigint;
  payments: number;
  payers: number;
  median: bigint | null;
  evidence: 'verified' | 'insufficient' | 'not_observed';
  categories: string[];
  reasons: string | null;
  listings: number;
  external: { revenue: bigint; payments: number; payers: number };
  /** [eip3009, permit2_exact, permit2_upto, batch_settlement] */
  classPayments: [number, number, number, number];
  classRevenue: [bigint, bigint, bigint, bigint];
  sellerFunded: { payments: number; revenue: bigint; payers: number };
  sameOperator: { payments: number; revenue: bigint; payers: number };
}

const none = { payments: 0, revenue: 0n, payers: 0 };
const of = (address: string) => SELLERS.find((s) => s.address === address)!;

export const SELLERS3: Seller3[] = [
  {
    address: A,
    rank: 1,
    revenue: 9_007_199_254_740_993n,
    payments: 5,
    payers: 3,
    median: 2_000_000n,
    evidence: 'verified',
    categories: ['data-access', 'inference'],
    reasons: null,
    listings: 2,
    external: { revenue: 10_000_000n, payments: 4, payers: 3 },
    classPayments: [2, 1, 1, 1],
    classRevenue: [9_007_199_245_740_993n, 2_000_000n, 3_000_000n, 4_000_000n],
    sellerFunded: { payments: 1, revenue: 9_007_199_244_740_993n, payers: 1 },
    sameOperator: none,
  },
  {
    address: B,
    rank: 2,
    revenue: 82_000_000n,
    payments: 10,
    payers: 3,
    median: 1_000_000n, // per-request payments only: the two eip3009 ones
    evidence: 'verified',
    categories: ['inference'],
    reasons: '["top_payer_share>0.9","internal_share>0.5"]',
    listings: 1,
    external: { revenue: 2_000_000n, payments: 2, payers: 2 },
    classPayments: [2, 0, 0, 8],
    classRevenue: [2_000_000n, 0n, 0n, 80_000_000n],
    sellerFunded: none,
    sameOperator: { payments: 8, revenue: 80_000_000n, payers: 1 },
  },
  {
    address: E,
    rank: 3,
    revenue: 50_000_000n,
    payments: 5,
    payers: 5,
    median: 10_000_000n,
    evidence: 'verified',
    categories: ['inference'],
    reasons: null,
    listings: 1,
    external: { revenue: 50_000_000n, payments: 5, payers: 5 },
    classPayments: [0, 5, 0, 0],
    classRevenue: [0n, 50_000_000n, 0n, 0n],
    sellerFunded: none,
    sameOperator: none,
  },
  {
    address: F,
    rank: 4,
    revenue: 10_000_000n,
    payments: 5,
    payers: 4,
    median: 2_000_000n,
    evidence: 'verified',
    categories: ['data-access'],
    reasons: null,
    listings: 1,
    external: { revenue: 10_000_000n, payments: 5, payers: 4 },
    classPayments: [0, 0, 3, 2],
    classRevenue: [0n, 0n, 6_000_000n, 4_000_000n],
    sellerFunded: none,
    sameOperator: none,
  },
  ...[C, D].map((address): Seller3 => ({
    address,
    rank: null,
    revenue: of(address).revenue,
    payments: of(address).payments,
    payers: of(address).payers,
    median: of(address).median,
    evidence: of(address).evidence,
    categories: of(address).categories,
    reasons: null,
    listings: 1,
    external: { revenue: of(address).revenue, payments: of(address).payments, payers: of(address).payers },
    classPayments: [of(address).payments, 0, 0, 0],
    classRevenue: [of(address).revenue, 0n, 0n, 0n],
    sellerFunded: none,
    sameOperator: none,
  })),
];

/** A's evidence rows in generation 4: tx number -> [class, internal_reason]. */
export const A_LABELS = new Map<number, [string, string | null]>([
  [1, ['eip3009', null]],
  [2, ['permit2_exact', null]],
  [3, ['permit2_upto', null]],
  [4, ['batch_settlement', null]],
  [5, ['eip3009', 'seller_funded']],
]);

/** Market days of generation 4: fixture.ts's, with the external part of each day's volume. */
export const EXTERNAL_VOLUME = new Map<string, bigint>([
  ['2025-12-29', 0n],
  ['2025-12-30', 2_000_000n],
  ['2025-12-31', 10_000_000n],
]);

/** 3.0.0's constants as the method would record them (SPEC "Method 3.0.0": two new ones). */
export const CONSTANTS3 = { ...METHOD_CONSTANTS_2_0_0, funding_lookback_seconds: 2_592_000, farm_internal_share: 0.5 };

export async function insertGenerationRow(
  db: Kysely<Schema>,
  n: number,
  version: string,
  constants: object,
  snap: bigint,
) {
  await db
    .insertInto('generations')
    .values({
      generation: n,
      status: 'published',
      run_seq: 1,
      method_version: version,
      generated_at: '2026-01-01T03:10:00Z',
      published_at: '2026-01-01T03:12:00Z',
      as_of_block: AS_OF_BLOCK,
      as_of_block_hash: `0x${'ee'.repeat(32)}`,
      as_of_ts: AS_OF_TS,
      window_seconds: 2_592_000,
      window_start_ts: WINDOW_START_TS,
      market_from_ts: MARKET_FROM_TS,
      catalog_snapshot_id: snap,
      catalog_sha256: CATALOG_SHA,
      evidence_sha256: 'ab'.repeat(32),
      constants: JSON.stringify(constants),
      sources: JSON.stringify(SOURCES),
      listings_derived: true,
    })
    .execute();
}

/** A gen_sellers row's 2.x columns. */
const row = (
  n: number,
  s: Omit<Seller3, 'external' | 'classPayments' | 'classRevenue' | 'sellerFunded' | 'sameOperator'>,
) => ({
  generation: n,
  seller_address: s.address,
  listing_count: s.listings,
  payments_30d: s.payments,
  payers_30d: s.payers,
  verified_revenue_30d_micro: s.revenue,
  median_payment_30d_micro: s.median,
  evidence_state: s.evidence,
  tier: s.evidence === 'verified' ? ('verified' as const) : ('listed_only' as const),
  farm_flag: s.reasons ? 1 : 0,
  farm_reasons: s.reasons,
  rank: s.rank,
  categories: s.categories,
  evidence_sha256: s.address === A ? sellerEvidence(A) : 'cd'.repeat(32),
  first_payment_ts: s.payments > 0 ? tsOf(39_000_001) : null,
  last_payment_ts: s.payments > 0 ? tsOf(39_800_000) : null,
  first_block: s.payments > 0 ? 39_000_001 : null,
  last_block: s.payments > 0 ? 39_800_000 : null,
  ...UNNUMBERED,
});

/** A seller listed once, never paid (not_observed). */
const unpaid = (address: string, category: string) => ({
  address,
  rank: null,
  revenue: 0n,
  payments: 0,
  payers: 0,
  median: null,
  evidence: 'not_observed' as const,
  categories: [category],
  reasons: null,
  listings: 1,
});

/**
 * The evidence view with generation 4's labels: a stand-in for the view of the migration that
 * computes 3.0.0 (another branch), which gives each payment its class and internal reason. The
 * view of main (migration 0029) is kept, renamed, underneath; only the two columns are joined in.
 */
async function labelEvidence(db: Kysely<Schema>) {
  await sql`create table test_payment_labels (generation int, tx_hash text, log_index int, class text, internal_reason text)`.execute(
    db,
  );
  await sql`alter view generation_payments rename to generation_payments_0029`.execute(db);
  await sql`create view generation_payments as
    select v.generation, v.tx_hash, v.log_index, v.block_number, v.block_hash, v.block_timestamp, v.payer,
           v.seller_address, v.value, v.in_window,
           coalesce(l.class, v.class) as class, coalesce(l.internal_reason, v.internal_reason) as internal_reason
      from generation_payments_0029 v
      left join test_payment_labels l
        on l.generation = v.generation and l.tx_hash = v.tx_hash and l.log_index = v.log_index`.execute(db);
  const logOf = new Map([
    [1, 3],
    [2, 0],
    [3, 5],
    [4, 7],
    [5, 1],
  ]);
  for (const [tx, [cls, reason]] of A_LABELS)
    await sql`insert into test_payment_labels values (${GEN3}, ${txHash(tx)}, ${logOf.get(tx)!}, ${cls}, ${reason})`.execute(
      db,
    );
}

/** Seeds generations 2 (2.0.0) and 4 (3.0.0, the latest published) as described above. */
export async function seedFixture3(db: Kysely<Schema>): Promise<void> {
  const snap = await insertChainAndCatalog(db);
  const extra: [number, string, string, string][] = [
    [8, EXACT_PROXY, 'inference', 'Proxy as payTo'],
    [9, E, 'inference', 'Echo inference'],
    [10, F, 'data-access', 'Foxtrot data'],
  ];
  await db
    .insertInto('catalog_listings')
    .values(
      extra.map(([n, payTo, category, title]) => ({
        snapshot_id: snap,
        listing_id: listingId(n),
        item_index: n,
        accept_index: 0,
        resource_url: `https://l${n}.example/api`,
        network: 'base',
        canonical_network: 'eip155:8453',
        pay_to: payTo,
        asset: BASE_USDC,
        verifiability: 'base_usdc' as const,
        seller_address: payTo,
        title,
        description: null,
        category,
        category_source: 'auto' as const,
      })),
    )
    .execute();

  await insertGenerationRow(db, GEN2, '2.0.0', METHOD_CONSTANTS_2_0_0, snap);
  await openSellerPartition(db, GEN2);
  await db
    .insertInto('gen_sellers')
    .values([
      ...SELLERS.map((s) => row(GEN2, { ...s, median: s.median, reasons: s.reasons })),
      row(GEN2, unpaid(E, 'inference')),
      row(GEN2, unpaid(F, 'data-access')),
      // Under 2.0.0 the proxy is a seller like any payTo: listed, never paid.
      row(GEN2, unpaid(EXACT_PROXY, 'inference')),
    ])
    .execute();
  await sql`select gen_sellers_set_numbers(${GEN2})`.execute(db);
  await db
    .insertInto('gen_market_daily')
    .values(MARKET.map((m) => ({ generation: GEN2, ...m })))
    .execute();

  await insertGenerationRow(db, GEN3, '3.0.0', CONSTANTS3, snap);
  await openSellerPartition(db, GEN3);
  await db
    .insertInto('gen_sellers')
    .values(
      SELLERS3.map((s) => ({
        ...row(GEN3, s),
        external_revenue_30d_micro: s.external.revenue,
        external_payments_30d: s.external.payments,
        external_payers_30d: s.external.payers,
        class_payments_30d: s.classPayments,
        class_revenue_30d_micro: s.classRevenue.map(String),
        internal_seller_funded_payments_30d: s.sellerFunded.payments,
        internal_seller_funded_revenue_30d_micro: s.sellerFunded.revenue,
        internal_seller_funded_payers_30d: s.sellerFunded.payers,
        internal_same_operator_payments_30d: s.sameOperator.payments,
        internal_same_operator_revenue_30d_micro: s.sameOperator.revenue,
        internal_same_operator_payers_30d: s.sameOperator.payers,
      })),
    )
    .execute();
  await sql`select gen_sellers_set_numbers(${GEN3})`.execute(db);
  await db
    .insertInto('gen_market_daily')
    .values(MARKET.map((m) => ({ generation: GEN3, ...m, external_volume_micro: EXTERNAL_VOLUME.get(m.day)! })))
    .execute();
  await db.insertInto('published_pointer').values({ generation: GEN3 }).execute();
  await labelEvidence(db);
}

/**
 * Generation `n` (3.0.0, published on the fixture's catalog, never the latest) with one seller per
 * entry: listed once in inference, never paid (not_observed), with the verified and external
 * revenue given. For orders and pages the fixture's six sellers do not show.
 */
export async function insertUnpaidGeneration(
  db: Kysely<Schema>,
  n: number,
  sellers: { address: string; revenue: bigint; external: bigint | null }[],
): Promise<void> {
  const snap = await db.selectFrom('catalog_snapshots').select('snapshot_id').executeTakeFirstOrThrow();
  await insertGenerationRow(db, n, '3.0.0', CONSTANTS3, snap.snapshot_id);
  await openSellerPartition(db, n);
  await db
    .insertInto('gen_sellers')
    .values(
      sellers.map(({ address, revenue, external }) => ({
        ...row(n, unpaid(address, 'inference')),
        verified_revenue_30d_micro: revenue,
        external_revenue_30d_micro: external,
        class_payments_30d: [0, 0, 0, 0],
      })),
    )
    .execute();
  await sql`select gen_sellers_set_numbers(${n})`.execute(db);
}

import type { Address } from 'viem';
import type { CatalogSeller } from './economy-sellers.ts';
import { createRng, type Rng } from './prng.ts';

/** 30 days, the method's window (SPEC section 2). */
const WINDOW = 2_592_000n;
const DAY = 86_400n;
/** The history spans 36 days before as-of: six days of payments older than the window. */
export const HISTORY_SECONDS = 36n * DAY;
/** One block every two hours of history (plus the exact-timestamp blocks of boundary cases). */
const BLOCK_SPACING = 7_200n;
/** Number of deterministic buyers (buyerAccount(0..BUYERS-1)). */
export const DEMO_BUYERS = 160;

/** Why a seller was given its traffic: what the method should make of it (docs, tests). */
export type SellerScenario =
  | 'verified' // many payers, spread over the whole history
  | 'many_listings' // the catalog's payTo with the most listings, also busy
  | 'insufficient_payments' // 4 payments from 4 payers in the window
  | 'insufficient_payers' // 6 payments from 2 payers in the window
  | 'evidence_boundary' // exactly 5 payments from exactly 3 payers in the window
  | 'top_payer' // 12 payments, one payer > 90% of revenue
  | 'top_payer_boundary' // 11 payments, one payer exactly 90% (not > 90%)
  | 'top_payer_few_payments' // 9 payments, one payer > 90%, fewer than 10 payments
  | 'old_only' // payments only before the window
  | 'plain_only' // only plain ERC-20 transfers, no settlement
  | 'self_paid' // settlements plus authorized transfers from itself to itself
  | 'window_edge' // payments exactly at as_of - 30 days (outside) and one second later (inside)
  | 'batched'; // several settlements per transaction (Multicall3) and an unauthorized transfer beside one

/** One call of a planned transaction. */
export type PlannedCall =
  /** buyer signs, facilitator submits transferWithAuthorization */
  | { type: 'settle'; buyer: number; to: Address; value: bigint; form: 'vrs' | 'bytes' }
  /** the seller's own (contract wallet) authorization, from = to = seller */
  | { type: 'self'; seller: Address; value: bigint }
  /** buyer's plain ERC-20 transfer */
  | { type: 'plain'; buyer: number; to: Address; value: bigint }
  /** Multicall3 transfers its own USDC (in a batch beside other buyers' authorizations) */
  | { type: 'batcher'; to: Address; value: bigint };

/** A transaction: one call, or several through Multicall3 (`batch`). */
export type PlannedTx = { calls: PlannedCall[]; batch: boolean };

export interface PlannedBlock {
  /** unix seconds */
  timestamp: bigint;
  txs: PlannedTx[];
}

export interface EconomyPlan {
  asOfTs: bigint;
  /** unix seconds of the first payment block (funding happens before it) */
  startTs: bigint;
  buyers: number;
  sellers: { address: Address; scenario: SellerScenario; catalogListings: number }[];
  /** addresses that need USDC minted before the history: sellers paying themselves, Multicall3 */
  selfPayers: Address[];
  batcherFunding: bigint;
  /** strictly increasing timestamps, the last one = asOfTs */
  blocks: PlannedBlock[];
}

/** A typical x402 price: mostly the seller's own price, sometimes another, rarely a big one. */
function amount(rng: Rng, price: bigint): bigint {
  const r = rng.next();
  if (r < 0.8) return price;
  if (r < 0.97) return BigInt(rng.int(1_000, 100_000));
  return BigInt(rng.int(200_000, 5_000_000));
}
const PRICES = [1_000n, 2_000n, 5_000n, 10_000n, 10_000n, 20_000n, 50_000n, 100_000n];

/**
 * The demo economy as data: which buyer pays which seller how much, in which block at which
 * timestamp. Pure and deterministic (seeded PRNG): the same sellers and asOfTs give the same plan.
 * Needs at least 40 sellers.
 */
export function planEconomy(
  catalog: readonly CatalogSeller[],
  asOfTs: bigint,
  seed = 'x402-tally demo economy v1',
): EconomyPlan {
  // The crawl has a payTo of 0x000…000: a seller by the rules, but USDC cannot be sent to it.
  const sellers = catalog.filter((s) => !/^0x0{40}$/.test(s.address));
  if (sellers.length < 40)
    throw new RangeError(`planEconomy: needs at least 40 catalog sellers, got ${sellers.length}`);
  const rng = createRng(seed);
  const startTs = asOfTs - HISTORY_SECONDS;
  const windowStart = asOfTs - WINDOW; // payments at windowStart are outside, windowStart + 1 inside
  const slots = Number(HISTORY_SECONDS / BLOCK_SPACING); // grid blocks: startTs + k * spacing, k < slots
  const byTs = new Map<bigint, PlannedTx[]>();
  const at = (ts: bigint, tx: PlannedTx): void => {
    if (ts < startTs || ts > asOfTs) throw new RangeError('planEconomy: timestamp outside the history');
    const list = byTs.get(ts);
    if (list) list.push(tx);
    else byTs.set(ts, [tx]);
  };
  const gridTs = (slot: number): bigint => startTs + BigInt(slot) * BLOCK_SPACING;
  // A grid slot whose block is inside the window, or before it.
  const firstWindowSlot = Number((windowStart - startTs) / BLOCK_SPACING) + 1;
  const inWindowSlot = (): number => rng.int(firstWindowSlot, slots - 1);
  const oldSlot = (): number => rng.int(0, firstWindowSlot - 1);
  const anySlot = (): number => rng.int(0, slots - 1);
  const settle = (buyer: number, to: Address, value: bigint): PlannedTx => ({
    calls: [{ type: 'settle', buyer, to, value, form: rng.next() < 0.5 ? 'vrs' : 'bytes' }],
    batch: false,
  });

  // The payTo with the most listings first, the rest in a seeded order.
  const byListings = [...sellers].sort((a, b) => b.listings - a.listings || (a.address < b.address ? -1 : 1));
  const busiest = byListings[0]!;
  const others = rng.shuffle(sellers.filter((s) => s.address !== busiest.address));
  const planned: EconomyPlan['sellers'] = [];
  const take = (scenario: SellerScenario, seller?: CatalogSeller): Address => {
    const s = seller ?? others.shift()!;
    planned.push({ address: s.address, scenario, catalogListings: s.listings });
    return s.address;
  };
  // Buyers 0..9 are reserved for the hand-built cases; the busy sellers draw from 10..DEMO_BUYERS-1.
  const crowd = (n: number): number[] =>
    rng.shuffle(Array.from({ length: DEMO_BUYERS - 10 }, (_, i) => i + 10)).slice(0, n);

  const busy = (address: Address, payments: number, payers: number): void => {
    const pool = crowd(payers);
    const price = rng.pick(PRICES);
    for (let i = 0; i < payments; i++) {
      // Skewed towards the first payers of the pool (regulars), every payer at least once.
      const buyer = i < pool.length ? pool[i]! : pool[Math.floor(pool.length * rng.next() ** 2)]!;
      at(gridTs(anySlot()), settle(buyer, address, amount(rng, price)));
    }
  };

  busy(take('many_listings', busiest), 80, 25);
  for (let i = 0; i < 24; i++) busy(take('verified'), rng.int(15, 110), rng.int(5, 40));

  // Hand-built evidence and farm cases, all payments inside the window.
  const fixed = (address: Address, payments: [buyer: number, value: bigint][]): void => {
    for (const [buyer, value] of payments) at(gridTs(inWindowSlot()), settle(buyer, address, value));
  };
  fixed(take('insufficient_payments'), [
    [0, 10_000n],
    [1, 10_000n],
    [2, 20_000n],
    [3, 5_000n],
  ]);
  fixed(take('insufficient_payers'), [
    [0, 1_000n],
    [0, 1_000n],
    [0, 2_000n],
    [1, 1_000n],
    [1, 3_000n],
    [1, 1_000n],
  ]);
  fixed(take('evidence_boundary'), [
    [4, 50_000n],
    [4, 50_000n],
    [5, 25_000n],
    [6, 10_000n],
    [6, 10_000n],
  ]);
  fixed(take('top_payer'), [
    ...Array.from({ length: 10 }, (): [number, bigint] => [7, 100_000n]),
    [8, 20_000n],
    [9, 30_000n],
  ]);
  fixed(take('top_payer_boundary'), [
    ...Array.from({ length: 9 }, (): [number, bigint] => [7, 100_000n]),
    [8, 50_000n],
    [9, 50_000n],
  ]);
  fixed(take('top_payer_few_payments'), [
    ...Array.from({ length: 8 }, (): [number, bigint] => [8, 50_000n]),
    [9, 1_000n],
  ]);

  const oldOnly = take('old_only');
  for (let i = 0; i < 6; i++) at(gridTs(oldSlot()), settle(crowd(1)[0]!, oldOnly, BigInt(rng.int(1_000, 100_000))));

  // Plain transfers: to a seller with no settlement at all, and beside settlements of busy sellers.
  const plainOnly = take('plain_only');
  for (let i = 0; i < 6; i++) {
    at(gridTs(inWindowSlot()), {
      calls: [{ type: 'plain', buyer: crowd(1)[0]!, to: plainOnly, value: 25_000n }],
      batch: false,
    });
  }
  for (const s of planned.filter((p) => p.scenario === 'verified').slice(0, 8)) {
    at(gridTs(anySlot()), {
      calls: [{ type: 'plain', buyer: crowd(1)[0]!, to: s.address, value: BigInt(rng.int(1_000, 2_000_000)) }],
      batch: false,
    });
  }

  // A seller that also authorizes transfers to itself (a contract wallet signing for itself).
  const selfPaid = take('self_paid');
  fixed(selfPaid, [
    [0, 10_000n],
    [1, 10_000n],
    [2, 10_000n],
    [3, 10_000n],
    [4, 10_000n],
    [5, 10_000n],
  ]);
  for (let i = 0; i < 3; i++)
    at(gridTs(inWindowSlot()), { calls: [{ type: 'self', seller: selfPaid, value: 500_000n }], batch: false });

  // Exactly on the window's edge: as_of - 30 d is outside, one second later is inside.
  const edge = take('window_edge');
  at(windowStart, settle(0, edge, 40_000n));
  at(windowStart + 1n, settle(1, edge, 30_000n));
  fixed(edge, [
    [2, 20_000n],
    [3, 20_000n],
    [4, 20_000n],
    [5, 20_000n],
  ]);

  // Several authorizations per transaction, and a Multicall3 transfer of its own USDC beside them
  // (Transfer from an address that authorized nothing: not revenue).
  const batched = take('batched');
  for (let i = 0; i < 4; i++) {
    const [a, b, c] = crowd(3);
    at(gridTs(inWindowSlot()), {
      batch: true,
      calls: [
        { type: 'settle', buyer: a!, to: batched, value: 10_000n, form: 'vrs' },
        { type: 'settle', buyer: b!, to: batched, value: 20_000n, form: 'bytes' },
        ...(i % 2 === 0
          ? [{ type: 'settle' as const, buyer: c!, to: batched, value: 30_000n, form: 'vrs' as const }]
          : []),
      ],
    });
  }
  at(gridTs(inWindowSlot()), {
    batch: true,
    calls: [
      { type: 'settle', buyer: crowd(1)[0]!, to: batched, value: 15_000n, form: 'bytes' },
      { type: 'batcher', to: batched, value: 900_000n },
    ],
  });

  // The last block is exactly at as-of, so a run as of the latest block has as_of_ts = asOfTs.
  at(asOfTs, settle(rng.int(10, DEMO_BUYERS - 1), planned[1]!.address, 10_000n));

  const blocks = [...byTs]
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([timestamp, txs]) => ({ timestamp, txs }));
  return {
    asOfTs,
    startTs,
    buyers: DEMO_BUYERS,
    sellers: planned,
    selfPayers: [selfPaid],
    batcherFunding: 900_000n,
    blocks,
  };
}

import type { FixtureListing, FixtureTransfer } from '../helpers/facts.ts';

/**
 * A small economy whose every number is worked out by hand in method.test.ts.
 *
 * Time: as of 2026-01-01T12:00:00Z. The window is (2025-12-02T12:00Z, 2026-01-01T12:00Z]; the
 * market's first day is 2025-12-02, so days 2025-12-02 .. 2025-12-31 (30 days) are publishable.
 * Blocks: one every 2 s from block 100 at 2025-12-02T00:00Z.
 */
export const AS_OF_TS = 1_767_268_800n; // 2026-01-01T12:00:00Z
export const WINDOW_START_TS = AS_OF_TS - 2_592_000n; // 2025-12-02T12:00:00Z
export const MARKET_FROM_TS = 1_764_633_600n; // 2025-12-02T00:00:00Z
export const block = (ts: bigint) => 100n + (ts - MARKET_FROM_TS) / 2n;
export const AS_OF_BLOCK = block(AS_OF_TS);
export const DEC_10 = 1_765_324_800n; // 2025-12-10T00:00:00Z

const addr = (c: string) => `0x${c.repeat(40)}`;
export const S = {
  A: addr('a'), // verified, 6 payments incl. one at exactly as_of_ts
  B: addr('b'), // 4 payments, 3 payers: insufficient
  C: addr('c'), // 5 payments, 2 payers: insufficient
  D: addr('d'), // 10 payments, top payer exactly 0.9: no flag
  E: addr('e'), // 11 payments, top payer above 0.9: flagged, verified
  F: addr('f'), // 51 listings, no payment: flagged, not_observed
  G: `0x${'12'.repeat(20)}`, // 50 listings: no flag
  H: `0x${'34'.repeat(20)}`, // revenue above 2^53
  I: `0x${'56'.repeat(20)}`, // 9 payments from one payer: below the 10-payment floor of the farm rule
  J: `0x${'11'.repeat(20)}`, // revenue 999 like E: ranks before E by address
};
export const P = { p1: addr('7'), p2: addr('8'), p3: addr('9') };
export const NOT_A_SELLER = `0x${'45'.repeat(20)}`;
export const BIG = 2n ** 60n;

export function fixtureListings(): FixtureListing[] {
  const out: FixtureListing[] = [];
  const id = (n: number) => n.toString(16).padStart(64, '0');
  let n = 1;
  out.push({ listing_id: id(n++), seller_address: S.A, category: 'inference' });
  out.push({ listing_id: id(n++), seller_address: S.A, category: 'data-access' });
  for (const s of [S.B, S.C, S.D, S.E, S.H, S.I, S.J])
    out.push({ listing_id: id(n++), seller_address: s, category: 'search-retrieval' });
  for (let i = 0; i < 51; i++) out.push({ listing_id: id(n++), seller_address: S.F, category: 'other' });
  for (let i = 0; i < 50; i++) out.push({ listing_id: id(n++), seller_address: S.G, category: 'storage-state' });
  out.push({ listing_id: id(n++), seller_address: null, category: 'inference', network: 'solana' });
  out.push({ listing_id: id(n++), seller_address: null, category: 'other', network: 'base-sepolia' });
  return out;
}

/** Every transfer of the fixture; `counted` says whether the method must count it in the window. */
export function fixtureTransfers(): (FixtureTransfer & { counted: boolean; market: boolean })[] {
  const out: (FixtureTransfer & { counted: boolean; market: boolean })[] = [];
  let tx = 0;
  let second = 0;
  const pay = (
    to: string,
    from: string,
    value: bigint,
    opts: { ts?: bigint; authorizer?: string | null; counted?: boolean; market?: boolean; blockNumber?: bigint } = {},
  ) => {
    tx++;
    const ts = opts.ts ?? DEC_10 + 21_600n + BigInt(2 * second++); // 2025-12-10T06:00Z onwards
    const counted = opts.counted ?? true;
    out.push({
      tx: `0x${tx.toString(16).padStart(64, '0')}`,
      logIndex: 1,
      block: opts.blockNumber ?? block(ts),
      ts,
      from,
      to,
      value,
      authorizer: opts.authorizer === undefined ? from : opts.authorizer,
      counted,
      market: opts.market ?? counted,
    });
  };
  // A: 5 ordinary payments + one at exactly as_of_ts (in the window, on 2026-01-01: no market day)
  pay(S.A, P.p1, 100n);
  pay(S.A, P.p2, 300n);
  pay(S.A, P.p3, 200n);
  pay(S.A, P.p1, 500n);
  pay(S.A, P.p2, 400n);
  pay(S.A, P.p3, 1n, { ts: AS_OF_TS, blockNumber: AS_OF_BLOCK, market: false });
  // A: edge cases that never count in the window
  pay(S.A, P.p3, 7777n, { ts: WINDOW_START_TS, counted: false, market: true }); // window start: out (market day 12-02: in)
  pay(S.A, P.p1, 5000n, { ts: AS_OF_TS + 2n, blockNumber: AS_OF_BLOCK + 1n, counted: false }); // after the as-of block
  pay(S.A, P.p1, 9999n, { authorizer: null, counted: false }); // a plain transfer
  pay(S.A, P.p2, 8888n, { authorizer: P.p3, counted: false }); // an authorization of someone else
  pay(S.A, S.A, 6666n, { counted: false }); // a self-payment
  pay(S.A, P.p1, 0n, { counted: false }); // zero value
  pay(NOT_A_SELLER, P.p1, 4444n, { counted: false }); // not a seller of the catalog
  // B: 4 payments from 3 payers
  for (const p of [P.p1, P.p2, P.p3, P.p1]) pay(S.B, p, 10n);
  // C: 5 payments from 2 payers
  for (const p of [P.p1, P.p1, P.p1, P.p2, P.p2]) pay(S.C, p, 1n);
  // D: top payer 900 of 1000 (exactly 0.9)
  for (let i = 0; i < 9; i++) pay(S.D, P.p1, 100n);
  pay(S.D, P.p2, 100n);
  // E: top payer 900 of 999 (above 0.9), 3 payers
  for (let i = 0; i < 9; i++) pay(S.E, P.p1, 100n);
  pay(S.E, P.p2, 50n);
  pay(S.E, P.p3, 49n);
  // H: five payments of 2^60
  for (const p of [P.p1, P.p2, P.p3, P.p1, P.p2]) pay(S.H, p, BIG);
  // I: nine payments from one payer
  for (let i = 0; i < 9; i++) pay(S.I, P.p1, 10n);
  // J: 999 from 3 payers
  for (const [p, v] of [
    [P.p1, 199n],
    [P.p2, 200n],
    [P.p3, 200n],
    [P.p1, 200n],
    [P.p2, 200n],
  ] as const)
    pay(S.J, p, v);
  return out;
}

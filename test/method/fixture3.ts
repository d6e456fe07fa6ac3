import type { FixtureListing } from '../helpers/facts.ts';
import type { Claim, ClassedTransfer, Outgoing } from '../helpers/facts3.ts';
import { AS_OF_TS, DEC_10, block } from './fixture.ts';

/**
 * A small economy of method 3.0.0 whose every number is worked out by hand in method3.test.ts
 * (docs/METHOD.md section 2.11.6 is a smaller example). The time frame is fixture.ts's:
 * as of 2026-01-01T12:00:00Z, window (2025-12-02T12:00Z, 2026-01-01T12:00Z], one block every 2 s.
 * funding_lookback_seconds = 2,592,000 (30 days).
 */

const addr = (c: string) => `0x${c.repeat(20)}`;
export const S3S = {
  S1: addr('a1'), // every class and both reasons (host shop.example.com)
  S2: addr('a2'), // two claims only: median null
  S3: addr('a3'), // listed on S1's host (as Shop.Example.com:8443): pays S1, no payment of its own
  S4: addr('a4'), // 10 payments, 6 funded by itself: farm reason internal_share>0.5
};
export const P3S = {
  P1: addr('01'),
  P2: addr('02'),
  P3: addr('03'),
  P4: addr('04'), // a channel's payer
  P5: addr('05'), // funded by S1 just inside the lookback
  P6: addr('06'), // funded by S1 exactly the lookback before: outside
  P7: addr('07'), // funded by S1 after paying
  P8: addr('08'), // funded in the payment's block, at a lower log index
  P9: addr('09'), // funded by S4
  P10: addr('10'), // funded in the payment's block, at a higher log index
  P11: addr('11'), // sent 0 by S1 before paying
  SUBMITTER: addr('5b'), // submits claims (Claimed.sender): never a payer
};
export const NOT_A_SELLER = addr('45');
const LOOKBACK = 2_592_000n;

export function fixture3Listings(): FixtureListing[] {
  const id = (n: number) => n.toString(16).padStart(64, 'f');
  return [
    { listing_id: id(1), seller_address: S3S.S1, resource_url: 'https://shop.example.com/a' },
    { listing_id: id(2), seller_address: S3S.S2, resource_url: 'https://other.example.org/b' },
    { listing_id: id(3), seller_address: S3S.S3, resource_url: 'https://user@Shop.Example.com:8443/c?x=1' },
    { listing_id: id(4), seller_address: S3S.S4, resource_url: 'https://farm.example.net/d' },
    { listing_id: id(5), seller_address: null, resource_url: 'https://shop.example.com/solana' },
  ];
}

export interface Fixture3Payment {
  name: string;
  tx: string;
  logIndex: number;
  ts: bigint;
  payer: string;
  seller: string;
  value: bigint;
  class: 'eip3009' | 'permit2_exact' | 'permit2_upto' | 'batch_settlement';
  reason: 'seller_funded' | 'same_operator' | null;
}

/** The fixture's facts, and the payments the method must count (by hand: see each comment). */
export function fixture3() {
  const transfers: ClassedTransfer[] = [];
  const claims: Claim[] = [];
  const outgoing: Outgoing[] = [];
  const counted: Fixture3Payment[] = [];
  let n = 0;
  const tx = () => `0x${(++n).toString(16).padStart(64, '0')}`;
  let slot = 0;
  const nextTs = () => DEC_10 + BigInt(2 * slot++); // 2025-12-10T00:00Z onwards, one block each
  const CLASS_CODE = { eip3009: 1, permit2_exact: 2, permit2_upto: 3 } as const;

  const pay = (
    name: string,
    cls: Fixture3Payment['class'],
    payer: string,
    seller: string,
    value: bigint,
    reason: Fixture3Payment['reason'],
    opts: { ts?: bigint; logIndex?: number; counted?: boolean } = {},
  ) => {
    const ts = opts.ts ?? nextTs();
    const hash = tx();
    const logIndex = opts.logIndex ?? 2;
    if (cls === 'batch_settlement')
      claims.push({ tx: hash, logIndex, block: block(ts), ts, payer, receiver: seller, value });
    else
      transfers.push({
        tx: hash,
        logIndex,
        block: block(ts),
        ts,
        from: payer,
        to: seller,
        value,
        class: CLASS_CODE[cls],
      });
    if (opts.counted !== false)
      counted.push({ name, tx: hash, logIndex, ts, payer, seller, value, class: cls, reason });
    return ts;
  };
  const fund = (from: string, to: string, value: bigint, ts: bigint, logIndex = 1) =>
    outgoing.push({ tx: tx(), logIndex, block: block(ts), ts, from, to, value });

  const { S1, S2, S3, S4 } = S3S;
  const { P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11 } = P3S;
  // S1: one payment of each class, external
  pay('a', 'eip3009', P1, S1, 100n, null);
  pay('b', 'permit2_exact', P2, S1, 250n, null);
  pay('c', 'permit2_upto', P3, S1, 40n, null); // an upto charge of 40 (the listing's price is a maximum)
  pay('d', 'batch_settlement', P4, S1, 1000n, null); // a claim: payer P4 is the channel's, not the submitter
  // S1: a seller on S1's host pays it (same_operator), before S1 ever sent it anything
  pay('e', 'eip3009', S3, S1, 70n, 'same_operator');
  // S1: funded just inside the lookback (lookback - 2 s before): seller_funded
  const tsF = AS_OF_TS - 100n;
  fund(S1, P5, 10n, tsF - (LOOKBACK - 2n));
  pay('f', 'eip3009', P5, S1, 500n, 'seller_funded', { ts: tsF });
  // S1: funded exactly the lookback before: outside, external
  const tsG = AS_OF_TS - 200n;
  fund(S1, P6, 10n, tsG - LOOKBACK);
  pay('g', 'permit2_exact', P6, S1, 80n, null, { ts: tsG });
  // S1: funded after the payment: external
  const tsH = pay('h', 'eip3009', P7, S1, 30n, null);
  fund(S1, P7, 10n, tsH + 10n, 9);
  // S1: funded in the payment's block at a lower log index: seller_funded
  const tsI = nextTs();
  fund(S1, P8, 10n, tsI, 3);
  pay('i', 'permit2_upto', P8, S1, 90n, 'seller_funded', { ts: tsI, logIndex: 5 });
  // S1: funded in the payment's block at a higher log index: external
  const tsJ = nextTs();
  pay('j', 'eip3009', P10, S1, 60n, null, { ts: tsJ, logIndex: 5 });
  fund(S1, P10, 10n, tsJ, 7);
  // S1: S1 funds S3, then S3 pays again: both reasons, counted as seller_funded
  fund(S1, S3, 1n, nextTs());
  pay('k', 'eip3009', S3, S1, 20n, 'seller_funded');
  // S1: a transfer of 0 is no funding: external
  fund(S1, P11, 0n, nextTs());
  pay('l', 'eip3009', P11, S1, 15n, null);
  // Never counted: a self-payment through a proxy, a plain transfer, a claim to no seller
  pay('x1', 'permit2_exact', S1, S1, 5555n, null, { counted: false });
  const tsPlain = nextTs();
  transfers.push({
    tx: tx(),
    logIndex: 2,
    block: block(tsPlain),
    ts: tsPlain,
    from: P1,
    to: S1,
    value: 9999n,
    class: 0,
  });
  pay('x2', 'batch_settlement', P1, NOT_A_SELLER, 5000n, null, { counted: false });
  // S2: two claims
  pay('m', 'batch_settlement', P1, S2, 300n, null);
  pay('n', 'batch_settlement', P2, S2, 200n, null);
  // S4: funds P9, which pays it 6 x 100; four outside payers pay 100 each
  fund(S4, P9, 1000n, nextTs());
  for (let i = 0; i < 6; i++) pay(`o${i}`, 'eip3009', P9, S4, 100n, 'seller_funded');
  for (const p of [P1, P2, P3, P4]) pay(`q${p.slice(2, 4)}`, 'permit2_exact', p, S4, 100n, null);
  return { transfers, claims, outgoing, counted };
}

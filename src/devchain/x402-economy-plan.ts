/**
 * The demo's x402 scenarios beyond EIP-3009, as data: who the actors are (keys the demo holds,
 * buyerAccount(n) for n >= 9000, never a real seller of the crawl), their synthetic catalog
 * listings on the reserved `.invalid` domain, and the dated steps that ./x402-economy.ts sends
 * into the demo's history. Each scenario is small and dated, so the figures it should produce can
 * be checked by hand (docs/x402-contracts.md, "The demo's x402 scenarios").
 */
import { getAddress, type Address } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { buyerAccount } from './accounts.ts';

export const DAY = 86_400n;
const HOUR = 3_600n;
export const NETWORK = 'eip155:8453';
const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

/** The demo's actors of this module: buyerAccount(n) of these n (keys the demo holds). */
export const ACTOR = {
  exactSeller: 9001,
  uptoSeller: 9002,
  channelSeller: 9003,
  operatorA: 9004,
  operatorB: 9005,
  fundingSeller: 9006,
  exactPayer: 9101,
  uptoPayer: 9102,
  channelPayer1: 9103,
  channelPayer2: 9104,
  fundedPayer1: 9105,
  fundedPayer2: 9106,
  fundedPayer3: 9107,
  externalPayer: 9108,
} as const;
export type Actor = keyof typeof ACTOR;

export const address = (actor: Actor): Address => buyerAccount(ACTOR[actor]).address.toLowerCase() as Address;
export const account = (actor: Actor): LocalAccount => buyerAccount(ACTOR[actor]);

/** The synthetic sellers of this module, by role (lowercase addresses). */
export const X402_DEMO_SELLERS = Object.freeze({
  exactSeller: address('exactSeller'),
  uptoSeller: address('uptoSeller'),
  channelSeller: address('channelSeller'),
  operatorA: address('operatorA'),
  operatorB: address('operatorB'),
  fundingSeller: address('fundingSeller'),
});
const SELLER_SET: ReadonlySet<string> = new Set(Object.values(X402_DEMO_SELLERS));

/** Whether an address is one of this module's synthetic sellers (the EIP-3009 economy leaves them alone). */
export function isX402DemoSeller(a: string): boolean {
  return SELLER_SET.has(a.toLowerCase());
}

/**
 * Their catalog listings, in the Bazaar's x402 v2 item shape. operatorA's and operatorB's URLs
 * share one host (the second in capitals and with a port: a host is compared lowercase, without
 * the port), which makes them one operator.
 */
export function x402DemoCatalogItems(): unknown[] {
  const listing = (
    actor: Actor,
    url: string,
    scheme: string,
    amount: string,
    title: string,
    extra: Record<string, unknown> = {},
  ) => ({
    x402Version: 2,
    type: 'http',
    resource: {
      url,
      description: `Synthetic demo listing: ${title} (paid through x402 ${scheme}; see docs/METHOD.md)`,
      mimeType: 'application/json',
    },
    accepts: [
      {
        scheme,
        network: NETWORK,
        amount,
        asset: BASE_USDC,
        payTo: getAddress(address(actor)),
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2', ...extra },
      },
    ],
    lastUpdated: '2025-12-30T00:00:00.000Z',
    metadata: { title },
  });
  return [
    listing(
      'exactSeller',
      'https://permit2.demo.x402-tally.invalid/api/quote',
      'exact',
      '10000',
      'Demo Permit2 quotes',
      {
        assetTransferMethod: 'permit2',
      },
    ),
    listing(
      'uptoSeller',
      'https://upto.demo.x402-tally.invalid/api/complete',
      'upto',
      '50000',
      'Demo metered completions',
      {
        assetTransferMethod: 'permit2',
      },
    ),
    listing(
      'channelSeller',
      'https://channels.demo.x402-tally.invalid/api/stream',
      'batch-settlement',
      '1000',
      'Demo streamed data',
    ),
    listing('operatorA', 'https://ops.demo.x402-tally.invalid/api/a', 'exact', '20000', 'Demo operator, API A'),
    listing('operatorB', 'https://OPS.demo.x402-tally.invalid:8443/api/b', 'exact', '20000', 'Demo operator, API B'),
    listing(
      'fundingSeller',
      'https://probe.demo.x402-tally.invalid/api/check',
      'exact',
      '10000',
      'Demo self-funded probes',
    ),
  ];
}
/** What a scenario's payment is meant to be under method 3.0.0 (checked by hand in docs/METHOD.md). */
export type X402DemoIntent = 'external' | 'seller_funded' | 'same_operator';

export type Step =
  | { kind: 'eip3009'; at: bigint; payer: Actor; seller: Actor; value: bigint; intended: X402DemoIntent }
  | { kind: 'exact'; at: bigint; payer: Actor; seller: Actor; value: bigint }
  | { kind: 'upto'; at: bigint; payer: Actor; seller: Actor; maximum: bigint; charged: bigint }
  | { kind: 'fund'; at: bigint; seller: Actor; payer: Actor; value: bigint }
  | { kind: 'deposit3009'; at: bigint; channel: 1; amount: bigint }
  | { kind: 'depositPermit2'; at: bigint; channel: 2; amount: bigint }
  | { kind: 'claim'; at: bigint; channel: 1 | 2; total: bigint }
  | { kind: 'settleChannel'; at: bigint };

/**
 * Scenario times sit this far before the whole days and hours they are written as, so they never
 * fall on a block time of the EIP-3009 economy (which uses whole-day edges such as the window's).
 */
export const X402_DEMO_TIME_OFFSET = 420n;

/**
 * The dated scenarios, as offsets before the as-of point (the window is the last 30 days; the
 * history starts 36 days back). Values in micro-USDC.
 */
export function plan(asOfTs: bigint): Step[] {
  const ago = (days: bigint, hours = 0n) => asOfTs - days * DAY - hours * HOUR - X402_DEMO_TIME_OFFSET;
  const steps: Step[] = [
    // Permit2 exact: four payments of the listed price.
    ...[25n, 14n, 7n, 2n].map((d): Step => ({
      kind: 'exact',
      at: ago(d),
      payer: 'exactPayer',
      seller: 'exactSeller',
      value: 10_000n,
    })),
    // Permit2 upto: signed for up to 50,000; charged what the request used, below the price too.
    { kind: 'upto', at: ago(21n), payer: 'uptoPayer', seller: 'uptoSeller', maximum: 50_000n, charged: 12_345n },
    { kind: 'upto', at: ago(11n), payer: 'uptoPayer', seller: 'uptoSeller', maximum: 50_000n, charged: 50_000n },
    { kind: 'upto', at: ago(4n), payer: 'uptoPayer', seller: 'uptoSeller', maximum: 50_000n, charged: 7n },
    // Channel 1: created 34 days back (before the window), claimed three times in it; a repeated
    // total is a claim of 0 (no log); the seller settles (a transfer from the contract, no payment).
    { kind: 'deposit3009', at: ago(34n), channel: 1, amount: 100_000n },
    { kind: 'claim', at: ago(20n), channel: 1, total: 40_000n },
    { kind: 'claim', at: ago(10n), channel: 1, total: 65_000n },
    { kind: 'claim', at: ago(10n, -1n), channel: 1, total: 65_000n },
    { kind: 'claim', at: ago(3n), channel: 1, total: 100_000n },
    // Channel 2: opened in the window through the Permit2 deposit collector.
    { kind: 'depositPermit2', at: ago(12n), channel: 2, amount: 30_000n },
    { kind: 'claim', at: ago(6n), channel: 2, total: 10_000n },
    { kind: 'claim', at: ago(1n), channel: 2, total: 15_000n },
    { kind: 'settleChannel', at: ago(0n, 12n) },
    // One operator, two sellers on one host: B paying A is internal (same_operator).
    {
      kind: 'eip3009',
      at: ago(16n),
      payer: 'externalPayer',
      seller: 'operatorA',
      value: 20_000n,
      intended: 'external',
    },
    {
      kind: 'eip3009',
      at: ago(13n),
      payer: 'externalPayer',
      seller: 'operatorB',
      value: 20_000n,
      intended: 'external',
    },
    ...[12n, 6n, 2n].map((d): Step => ({
      kind: 'eip3009',
      at: ago(d),
      payer: 'operatorB',
      seller: 'operatorA',
      value: 5_000n,
      intended: 'same_operator',
    })),
    // The funding seller: funds payer 2 35 days back, so its payments 5 days and an hour back
    // (29 days 23 hours after the funding) and 5 days less an hour back (30 days 1 hour after) fall
    // just inside and just outside the 30-day lookback; funds payer 1 28 days back, who pays twice
    // in the lookback; funds payer 3 after its first payment (which stays external) and before its
    // second.
    { kind: 'fund', at: ago(35n), seller: 'fundingSeller', payer: 'fundedPayer2', value: 1_000_000n },
    {
      kind: 'eip3009',
      at: ago(5n, 1n),
      payer: 'fundedPayer2',
      seller: 'fundingSeller',
      value: 10_000n,
      intended: 'seller_funded',
    },
    {
      kind: 'eip3009',
      at: ago(5n, -1n),
      payer: 'fundedPayer2',
      seller: 'fundingSeller',
      value: 10_000n,
      intended: 'external',
    },
    { kind: 'fund', at: ago(28n), seller: 'fundingSeller', payer: 'fundedPayer1', value: 200_000n },
    ...[27n, 3n].map((d): Step => ({
      kind: 'eip3009',
      at: ago(d),
      payer: 'fundedPayer1',
      seller: 'fundingSeller',
      value: 10_000n,
      intended: 'seller_funded',
    })),
    {
      kind: 'eip3009',
      at: ago(20n),
      payer: 'fundedPayer3',
      seller: 'fundingSeller',
      value: 10_000n,
      intended: 'external',
    },
    { kind: 'fund', at: ago(19n), seller: 'fundingSeller', payer: 'fundedPayer3', value: 50_000n },
    {
      kind: 'eip3009',
      at: ago(18n),
      payer: 'fundedPayer3',
      seller: 'fundingSeller',
      value: 10_000n,
      intended: 'seller_funded',
    },
    ...[15n, 8n].map((d): Step => ({
      kind: 'eip3009',
      at: ago(d),
      payer: 'externalPayer',
      seller: 'fundingSeller',
      value: 10_000n,
      intended: 'external',
    })),
  ];
  return steps.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

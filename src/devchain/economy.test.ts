import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createPublicClient, http, parseAbiItem, type Address, type Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../lib/paths.ts';
import {
  catalogSellers,
  planEconomy,
  startDemoChain,
  X402_CONTRACTS,
  X402_DEMO_SELLERS,
  X402_TOPIC0,
  type DemoChain,
  type SellerScenario,
} from './index.ts';

// 2025-12-31T00:00:00Z: a fixed as-of makes every block timestamp of this test reproducible.
const AS_OF = 1_767_139_200n;
const WINDOW = 2_592_000n;
const MULTICALL3 = '0xca11bde05977b3631167028862be2a173976ca11';
const crawl = JSON.parse(
  readFileSync(path.join(projectRoot, 'fixtures', 'catalog', 'bazaar-catalog-2025-12-31.json'), 'utf8'),
) as { resources: { accepts?: { network?: string; payTo?: string; asset?: string }[] }[] };

interface ChainTransfer {
  tx: Hash;
  logIndex: number;
  block: bigint;
  ts: bigint;
  from: string;
  to: string;
  value: bigint;
}
let demo: DemoChain;
let transfers: ChainTransfer[];
let authorizers: Map<Hash, string[]>;
/**
 * Plain viem, independent of the seeding code. 60 s a request rather than viem's 10 s: these read
 * the logs of the whole chain at once, beside other work on the 2-core CI machine (a bound on a
 * hang, not a speed claim).
 */
const reader = () => createPublicClient({ transport: http(demo.url, { timeout: 60_000 }) });

beforeAll(async () => {
  demo = await startDemoChain({ catalogItems: crawl.resources, asOfTs: AS_OF });
  // Read the chain back with plain viem, independently of the seeding code.
  const client = reader();
  const [transferLogs, usedLogs] = await Promise.all([
    client.getLogs({
      address: demo.usdcAddress,
      event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
      fromBlock: 0n,
      toBlock: 'latest',
    }),
    client.getLogs({
      address: demo.usdcAddress,
      event: parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)'),
      fromBlock: 0n,
      toBlock: 'latest',
    }),
  ]);
  const blockTs = new Map<bigint, bigint>();
  for (const n of new Set(transferLogs.map((l) => l.blockNumber)))
    blockTs.set(n, (await client.getBlock({ blockNumber: n })).timestamp);
  transfers = transferLogs.map((l) => ({
    tx: l.transactionHash,
    logIndex: l.logIndex,
    block: l.blockNumber,
    ts: blockTs.get(l.blockNumber)!,
    from: l.args.from!.toLowerCase(),
    to: l.args.to!.toLowerCase(),
    value: l.args.value!,
  }));
  authorizers = new Map();
  for (const l of usedLogs)
    authorizers.set(l.transactionHash, [
      ...(authorizers.get(l.transactionHash) ?? []),
      l.args.authorizer!.toLowerCase(),
    ]);
});

afterAll(async () => {
  await demo?.stop();
});

/** SPEC section 2, rules 1-3 and the window, written out here on raw logs. */
function verifiedInWindow(seller: string): ChainTransfer[] {
  return transfers.filter(
    (t) =>
      t.to === seller &&
      t.from !== t.to &&
      t.value > 0n &&
      (authorizers.get(t.tx) ?? []).includes(t.from) &&
      t.ts > AS_OF - WINDOW &&
      t.ts <= AS_OF,
  );
}
function metrics(seller: string) {
  const payments = verifiedInWindow(seller);
  const bySender = new Map<string, bigint>();
  for (const p of payments) bySender.set(p.from, (bySender.get(p.from) ?? 0n) + p.value);
  const revenue = payments.reduce((sum, p) => sum + p.value, 0n);
  const top = [...bySender.values()].reduce((a, b) => (a > b ? a : b), 0n);
  return { payments: payments.length, payers: bySender.size, revenue, top };
}
const sellerOf = (scenario: SellerScenario): string => {
  const found = demo.summary.sellers.filter((s) => s.scenario === scenario);
  expect(found.length).toBeGreaterThan(0);
  return found[0]!.address;
};

describe('demo economy', () => {
  it('default: every Transfer to a demo seller on chain is in the summary, with the same tx, log index, value and time', () => {
    const sellers = new Set(demo.summary.sellers.map((s) => s.address));
    const onChain = transfers.filter((t) => sellers.has(t.to as Address));
    expect(demo.summary.transfers.map((t) => [t.txHash, t.logIndex, t.from, t.to, t.value, t.blockTimestamp])).toEqual(
      onChain.map((t) => [t.tx, t.logIndex, t.from, t.to, t.value, t.ts]),
    );
    for (const s of demo.summary.sellers)
      expect(s.transfers.length).toBe(onChain.filter((t) => t.to === s.address).length);
  });

  it('default: 1,000-3,000 transactions over more than 31 days, ending exactly at as-of', () => {
    expect(demo.summary.transactions).toBeGreaterThanOrEqual(1_000);
    expect(demo.summary.transactions).toBeLessThanOrEqual(3_000);
    const times = transfers.map((t) => t.ts);
    const first = times.reduce((a, b) => (a < b ? a : b));
    const last = times.reduce((a, b) => (a > b ? a : b));
    expect(last - first).toBeGreaterThan(31n * 86_400n);
    expect(demo.summary.head.timestamp).toBe(AS_OF);
    expect(last).toBe(AS_OF);
    expect(demo.usdcAddress).toBe('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
  });

  it('default: every payee is a Base-USDC payTo of the real crawl; the busiest is its most-listed payTo', () => {
    const accepts = crawl.resources.flatMap((i) => i.accepts ?? []);
    const basePayTo = new Map<string, number>();
    for (const a of accepts) {
      if (
        (a.network === 'base' || a.network === 'eip155:8453') &&
        /0x833589fcd6edb6e08f4c7c32d4f71b54bda02913$/i.test(a.asset ?? '')
      ) {
        const k = (a.payTo ?? '').toLowerCase();
        basePayTo.set(k, (basePayTo.get(k) ?? 0) + 1);
      }
    }
    for (const s of demo.summary.sellers) expect(basePayTo.has(s.address)).toBe(true);
    const mostListed = [...basePayTo].sort((a, b) => b[1] - a[1])[0]!;
    expect(sellerOf('many_listings')).toBe(mostListed[0]);
    expect(metrics(mostListed[0]).payments).toBeGreaterThanOrEqual(5);
  });

  it('behavior: the evidence cases land on both sides of 5 payments / 3 payers', () => {
    expect(metrics(sellerOf('insufficient_payments'))).toMatchObject({ payments: 4, payers: 4 });
    expect(metrics(sellerOf('insufficient_payers'))).toMatchObject({ payments: 6, payers: 2 });
    expect(metrics(sellerOf('evidence_boundary'))).toMatchObject({ payments: 5, payers: 3 });
    for (const s of demo.summary.sellers.filter((x) => x.scenario === 'verified')) {
      const m = metrics(s.address);
      expect(m.payments, s.address).toBeGreaterThanOrEqual(5);
      expect(m.payers, s.address).toBeGreaterThanOrEqual(3);
    }
  });

  it('behavior: the top-payer cases land on both sides of 90% and of 10 payments', () => {
    const flagged = (m: ReturnType<typeof metrics>) => m.payments >= 10 && 10n * m.top > 9n * m.revenue;
    const top = metrics(sellerOf('top_payer'));
    expect([top.payments, flagged(top)]).toEqual([12, true]);
    const edge = metrics(sellerOf('top_payer_boundary'));
    expect([edge.payments, 10n * edge.top === 9n * edge.revenue, flagged(edge)]).toEqual([11, true, false]);
    const few = metrics(sellerOf('top_payer_few_payments'));
    expect([few.payments, 10n * few.top > 9n * few.revenue, flagged(few)]).toEqual([9, true, false]);
  });

  it('behavior: old, plain, self and unauthorized transfers exist on chain but are not verified payments', () => {
    const old = sellerOf('old_only');
    expect(transfers.filter((t) => t.to === old).length).toBe(6);
    expect(metrics(old).payments).toBe(0);
    const plain = sellerOf('plain_only');
    expect(transfers.filter((t) => t.to === plain).length).toBe(6);
    expect(metrics(plain).payments).toBe(0);
    const self = sellerOf('self_paid');
    const selfAuthorized = transfers.filter(
      (t) => t.to === self && t.from === self && (authorizers.get(t.tx) ?? []).includes(self),
    );
    expect(selfAuthorized.length).toBe(3);
    expect(metrics(self).payments).toBe(6);
    const batched = sellerOf('batched');
    const fromBatcher = transfers.filter((t) => t.to === batched && t.from === MULTICALL3);
    expect(fromBatcher.length).toBe(1);
    expect((authorizers.get(fromBatcher[0]!.tx) ?? []).length).toBe(1);
    const multiAuth = new Set(
      transfers.filter((t) => t.to === batched && (authorizers.get(t.tx) ?? []).length >= 2).map((t) => t.tx),
    );
    expect(multiAuth.size).toBe(4);
    expect(metrics(batched).payments).toBe(11);
  });

  it('behavior: a payment at exactly as-of minus 30 days is outside the window, one second later inside', () => {
    const edge = sellerOf('window_edge');
    const authorized = transfers.filter((t) => t.to === edge && (authorizers.get(t.tx) ?? []).includes(t.from));
    expect(authorized.filter((t) => t.ts === AS_OF - WINDOW).length).toBe(1);
    expect(authorized.filter((t) => t.ts === AS_OF - WINDOW + 1n).length).toBe(1);
    expect(metrics(edge).payments).toBe(authorized.filter((t) => t.ts > AS_OF - WINDOW).length);
    expect(metrics(edge).payments).toBe(5);
  });

  it('behavior: settlement amounts are typical x402 prices, a few larger', () => {
    const values = demo.summary.transfers.filter((t) => t.kind === 'settlement').map((t) => t.value);
    const typical = values.filter((v) => v >= 1_000n && v <= 100_000n).length;
    const large = values.filter((v) => v > 100_000n).length;
    expect(typical / values.length).toBeGreaterThan(0.9);
    expect(large).toBeGreaterThan(0);
    expect(values.every((v) => v > 0n && v <= 5_000_000n)).toBe(true);
  });

  it('behavior: the plan is deterministic and moves with as-of', () => {
    const sellers = catalogSellers(crawl.resources);
    const a = planEconomy(sellers, AS_OF);
    const b = planEconomy(sellers, AS_OF + 1_000n);
    expect(planEconomy(sellers, AS_OF)).toEqual(a);
    expect(b.sellers).toEqual(a.sellers);
    expect(b.blocks.map((x) => x.timestamp - 1_000n)).toEqual(a.blocks.map((x) => x.timestamp));
    expect(planEconomy(sellers, AS_OF, 'another seed').sellers).not.toEqual(a.sellers);
  });
});

/**
 * The x402 scenarios of x402-economy.ts, read back from the chain with plain viem. Expected values
 * are the scenarios' own amounts and dates, written out here.
 */
describe('demo x402 scenarios (Permit2 proxies, channels, internal payments)', () => {
  const DAY = 86_400n;
  const SEVEN_MINUTES = 420n; // the scenarios' times sit 7 minutes before their whole days
  const client = reader;
  const to = (seller: string) => transfers.filter((t) => t.to === seller);

  it('behavior: each Permit2 payment is a Transfer to the seller followed, in its transaction, by the proxy Settled(); upto charges 12,345, 50,000 and 7', async () => {
    const logsOf = async (address: Address) =>
      client().getLogs({ address, fromBlock: 0n, toBlock: 'latest' } as Parameters<
        ReturnType<typeof client>['getLogs']
      >[0]);
    for (const [seller, proxy, values] of [
      [X402_DEMO_SELLERS.exactSeller, X402_CONTRACTS.exactProxy, [10_000n, 10_000n, 10_000n, 10_000n]],
      [X402_DEMO_SELLERS.uptoSeller, X402_CONTRACTS.uptoProxy, [12_345n, 50_000n, 7n]],
    ] as const) {
      const paid = to(seller);
      expect(paid.map((t) => t.value)).toEqual(values);
      const settled = (await logsOf(proxy)).filter((l) => l.topics[0] === X402_TOPIC0.proxySettled);
      expect(settled.map((l) => l.transactionHash)).toEqual(paid.map((t) => t.tx));
      for (const [i, log] of settled.entries()) expect(log.logIndex).toBe(paid[i]!.logIndex + 1);
      // No EIP-3009 authorization: method 2.0.0 does not count these.
      for (const t of paid) expect(authorizers.get(t.tx)).toBeUndefined();
    }
  });

  it('behavior: channel claims log 40,000, 25,000, 35,000 and 10,000, 5,000 for the channel seller; a repeated total logs none; channel 1 opens before the window', async () => {
    const claimed = parseAbiItem(
      'event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)',
    );
    const created = await client().getLogs({
      address: X402_CONTRACTS.batchSettlement,
      event: parseAbiItem(
        'event ChannelCreated(bytes32 indexed channelId, (address payer, address payerAuthorizer, address receiver, address receiverAuthorizer, address token, uint40 withdrawDelay, bytes32 salt) config)',
      ),
      fromBlock: 0n,
      toBlock: 'latest',
    });
    expect(created.length).toBe(2);
    for (const c of created) expect(c.args.config!.receiver.toLowerCase()).toBe(X402_DEMO_SELLERS.channelSeller);
    const openedAt = async (n: number) => (await client().getBlock({ blockNumber: created[n]!.blockNumber })).timestamp;
    expect(await openedAt(0)).toBe(AS_OF - 34n * DAY - SEVEN_MINUTES);
    expect(await openedAt(1)).toBe(AS_OF - 12n * DAY - SEVEN_MINUTES);
    const claims = await client().getLogs({
      address: X402_CONTRACTS.batchSettlement,
      event: claimed,
      fromBlock: 0n,
      toBlock: 'latest',
    });
    const byChannel = (n: number) =>
      claims.filter((l) => l.args.channelId === created[n]!.args.channelId).map((l) => l.args.claimAmount);
    expect(byChannel(0)).toEqual([40_000n, 25_000n, 35_000n]);
    expect(byChannel(1)).toEqual([10_000n, 5_000n]);
    // The seller's only incoming Transfer is the channel's settle, from the contract: not a payment.
    expect(to(X402_DEMO_SELLERS.channelSeller).map((t) => [t.from, t.value])).toEqual([
      [X402_CONTRACTS.batchSettlement, 115_000n],
    ]);
  });

  it('behavior: the funding seller pays its payers 35, 28 and 19 days back; the lookback edges fall an hour either side of 30 days', () => {
    const seller = X402_DEMO_SELLERS.fundingSeller;
    const fundings = transfers.filter((t) => t.from === seller);
    expect(fundings.map((t) => [AS_OF - t.ts, t.value])).toEqual([
      [35n * DAY + SEVEN_MINUTES, 1_000_000n],
      [28n * DAY + SEVEN_MINUTES, 200_000n],
      [19n * DAY + SEVEN_MINUTES, 50_000n],
    ]);
    const payer2 = fundings[0]!.to;
    const paid = to(seller).filter((t) => t.from === payer2);
    expect(paid.map((t) => t.ts - fundings[0]!.ts)).toEqual([30n * DAY - 3_600n, 30n * DAY + 3_600n]);
  });

  it('behavior: operator B pays operator A three times; their listings share one host', () => {
    const fromB = to(X402_DEMO_SELLERS.operatorA).filter((t) => t.from === X402_DEMO_SELLERS.operatorB);
    expect(fromB.map((t) => t.value)).toEqual([5_000n, 5_000n, 5_000n]);
    for (const t of fromB) expect(authorizers.get(t.tx)).toEqual([X402_DEMO_SELLERS.operatorB]);
  });

  it('default: the summary lists every x402 payment with its class', () => {
    const x402 = demo.summary.x402!;
    const count = (c: string) => x402.payments.filter((p) => p.class === c).length;
    expect([count('eip3009'), count('permit2_exact'), count('permit2_upto'), count('batch_settlement')]).toEqual([
      13, 4, 3, 5,
    ]);
    expect(x402.payments.filter((p) => p.intended === 'seller_funded').length).toBe(4);
    expect(x402.payments.filter((p) => p.intended === 'same_operator').length).toBe(3);
    expect(x402.outgoing.length).toBe(3);
  });
});

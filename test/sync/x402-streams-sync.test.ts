import { ExactEvmScheme as ExactClient } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactFacilitator } from '@x402/evm/exact/facilitator';
import { UptoEvmScheme as UptoClient } from '@x402/evm/upto/client';
import { UptoEvmScheme as UptoFacilitator } from '@x402/evm/upto/facilitator';
import { sql, type Kysely } from 'kysely';
import { encodeFunctionData, getAddress, parseEther, type Address, type Hex, type TransactionReceipt } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChainClient, resolveAsOf, type AsOf, type ClaimedLog } from '../../src/chain/index.ts';
import type { Schema } from '../../src/db/index.ts';
import {
  buyerAccount,
  deployUsdc,
  fiatTokenAbi,
  fund,
  mine,
  setNextBlockTimestamp,
  waitForReceipt,
  type UsdcDeployment,
} from '../../src/devchain/index.ts';
import { rpcRequest } from '../../src/devchain/rpc.ts';
import { syncChain, type SyncOptions } from '../../src/sync/index.ts';
import { storeClaimsChunk } from '../../src/sync/streams-store.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { InjectedCrash } from '../helpers/crash.ts';
import { nowSeconds, paymentPayload, startX402Anvil, type Channel, type X402Anvil } from '../helpers/x402-anvil.ts';

/**
 * The sync of method 3.0.0's streams (src/sync/streams.ts) into the tables of migrations 0029 and
 * 0032, on anvil. Real: anvil, Circle's USDC code, the official `@x402/evm` 2.27.0 client and
 * facilitator (Permit2 exact, exact with an EIP-2612 permit, upto), Postgres and PGlite. Stand-ins:
 * Permit2, the proxies and the batch contract at their canonical addresses (installX402Contracts).
 * Each expected row is written from the amounts and accounts this test chose and the log indexes
 * of the receipts the node returned (read with viem), not from the code under test.
 *
 * Timeline: the chain starts 10 days before the clock. Then: a seller pays a payer back (outside
 * the lookback), a USDC channel is created (before the window). The chain jumps to the clock:
 * Permit2 exact, exact with permit and upto payments to SELLER; the channel is refunded, funded
 * again (ChannelCreated again, same id) and claimed; a channel in another token is created and
 * claimed; the seller pays a payer back (inside the lookback). Window 2 days, lookback 3 days.
 */

const DAY = 86_400;
const WINDOW = 2 * DAY;
const LOOKBACK = 3 * DAY;
const OTHER_TOKEN: Address = '0x07e7070707070707070707070707070707070707';
const BATCH_SELLER: Address = '0xba7c45e11e5e11e5e11e5e11e5e11e5e11e5e11e';

let x: X402Anvil;
let dep: UsdcDeployment;
let other: UsdcDeployment;
const seller = buyerAccount(200);
const payers = {
  exact: buyerAccount(110),
  permit: buyerAccount(111),
  upto: buyerAccount(112),
  channel: buyerAccount(114),
  otherChannel: buyerAccount(115),
};
const sent: Record<string, TransactionReceipt> = {};
let usdcChannel: Channel;
let otherChannel: Channel;
const lower = (a: string) => a.toLowerCase();
const hash = (r: TransactionReceipt) => lower(r.transactionHash);
const indexOf = (r: TransactionReceipt, i: number) => r.logs[i]!.logIndex;
const SELLERS = () => [lower(seller.address), lower(BATCH_SELLER)];

async function payBack(to: Address, value: bigint): Promise<TransactionReceipt> {
  const data = encodeFunctionData({ abi: fiatTokenAbi, functionName: 'transfer', args: [getAddress(to), value] });
  return waitForReceipt(dep.clients.public, await dep.sender.send(seller, { to: dep.address, data, gas: 100_000n }));
}

beforeAll(async () => {
  x = await startX402Anvil({
    timestamp: nowSeconds() - 10n * BigInt(DAY),
    before: async (node) => {
      other = await deployUsdc(node.url, { address: OTHER_TOKEN });
      await fund(other, payers.otherChannel.address, 1_000_000n);
    },
  });
  dep = x.dep;
  for (const p of Object.values(payers)) await fund(dep, p.address, 1_000_000n);
  await fund(dep, seller.address, 1_000n);
  await dep.clients.test.setBalance({ address: seller.address, value: parseEther('1') });
  for (const p of [payers.exact, payers.upto, payers.channel]) await x.approvePermit2(p);
  await x.approvePermit2(payers.otherChannel, OTHER_TOKEN);

  // 10 days ago: outside the lookback and the window.
  sent.earlyOutgoing = await payBack(payers.exact.address, 5n);
  usdcChannel = x.channel(payers.channel, dep.address, BATCH_SELLER, `0x${'00'.repeat(31)}c1`);
  sent.deposit1 = await x.depositThroughPermit2Collector(payers.channel, usdcChannel, 10_000n, 1n);

  // Now: the x402 code checks its deadlines against the clock.
  await setNextBlockTimestamp(x.anvil.url, nowSeconds());
  await mine(x.anvil.url, 1);
  const exact = new ExactFacilitator(x.facilitator);
  let accepted = x.requirements('exact', 1_500n, seller.address);
  let created = await new ExactClient(x.clientSigner(payers.exact)).createPaymentPayload(2, accepted);
  sent.exact = await x.settled(await exact.settle(paymentPayload(accepted, created), accepted));
  // [Approval, Transfer, SettledWithPermit()]
  accepted = x.requirements('exact', 2_750n, seller.address);
  created = await new ExactClient(x.clientSigner(payers.permit)).createPaymentPayload(2, accepted, {
    extensions: { eip2612GasSponsoring: {} },
  });
  sent.permit = await x.settled(await exact.settle(paymentPayload(accepted, created), accepted));
  const upto = new UptoFacilitator(x.facilitator);
  accepted = x.requirements('upto', 5_000n, seller.address, upto.getExtra('eip155:8453') ?? {});
  created = await new UptoClient(x.clientSigner(payers.upto)).createPaymentPayload(2, accepted);
  sent.upto = await x.settled(await upto.settle(paymentPayload(accepted, created), { ...accepted, amount: '3200' }));

  sent.refund = await x.refund(usdcChannel, 10_000n);
  sent.deposit2 = await x.depositThroughPermit2Collector(payers.channel, usdcChannel, 8_000n, 2n);
  sent.claim = await x.claim(payers.channel, usdcChannel, 2_500n);
  otherChannel = x.channel(payers.otherChannel, OTHER_TOKEN, BATCH_SELLER, `0x${'00'.repeat(31)}c2`);
  sent.otherDeposit = await x.depositThroughPermit2Collector(payers.otherChannel, otherChannel, 5_000n, 3n);
  sent.otherClaim = await x.claim(payers.otherChannel, otherChannel, 400n);
  sent.outgoing = await payBack(payers.exact.address, 77n);
}, 600_000);

afterAll(async () => {
  await x?.anvil.stop();
});

async function nextSeq(db: Kysely<Schema>): Promise<bigint> {
  const { rows } = await sql<{ seq: string }>`select nextval('ingest_seq') as seq`.execute(db);
  return BigInt(rows[0]!.seq);
}

async function sync(
  db: Kysely<Schema>,
  options: {
    asOf?: AsOf;
    confirmations?: number;
    blockRange?: number;
    onChunk?: (s: string) => void;
    beforePairingPass?: () => void;
    /** Without the 3.0.0 streams: the USDC stream alone, as before issue 22. */
    noStreams?: boolean;
  } = {},
) {
  const client = createChainClient({ rpcUrls: [x.anvil.url], chainId: 8453, retryCount: 1, retryDelayMs: 5 });
  const asOf = options.asOf ?? (await resolveAsOf(client, { confirmations: options.confirmations ?? 0 }));
  const runSeq = await nextSeq(db);
  const sync: SyncOptions = {
    usdcAddress: dep.address,
    sellers: SELLERS(),
    asOf,
    windowSeconds: WINDOW,
    runSeq,
    blockRange: options.blockRange ?? 64,
    requestSpan: 8,
    streams: {
      lookbackSeconds: LOOKBACK,
      channelsFromBlock: 0n,
      ...(options.onChunk ? { onChunk: options.onChunk } : {}),
      ...(options.beforePairingPass ? { beforePairingPass: options.beforePairingPass } : {}),
    },
  };
  if (options.noStreams) delete sync.streams;
  const stats = await syncChain(db, client, sync);
  return { asOf, runSeq, stats };
}

/** Every stored row of the streams and the transfers, as text, sorted. */
async function dump(db: Kysely<Schema>) {
  const rows = async (q: ReturnType<typeof sql<{ k: string }>>) => (await q.execute(db)).rows.map((r) => r.k).sort();
  return {
    transfers: await rows(sql`
      select f.tx_hash || ':' || f.log_index || ':' || f.from_address || ':' || f.to_address || ':' || f.value || ':' || t.class
             || ':' || coalesce(t.pair_log_index::text, '-') || ':' || coalesce(f.removed_seq::text, 'live') as k
        from transfer_facts f join transfers t on t.block_id = f.block_id and t.log_index = f.log_index`),
    claims: await rows(sql`
      select '0x' || encode(c.tx_hash, 'hex') || ':' || c.log_index || ':' || '0x' || encode(fa.address, 'hex') || ':'
             || '0x' || encode(ta.address, 'hex') || ':' || c.value || ':' || '0x' || encode(ch.channel, 'hex')
             || ':' || coalesce(b.removed_seq::text, 'live') as k
        from batch_claims c join blocks b on b.block_id = c.block_id
        join addresses fa on fa.address_id = c.from_id join addresses ta on ta.address_id = c.to_id
        join batch_channels ch on ch.channel_id = c.channel_id`),
    channels: await rows(sql`
      select '0x' || encode(c.channel, 'hex') || ':' || '0x' || encode(p.address, 'hex') || ':'
             || '0x' || encode(r.address, 'hex') || ':' || '0x' || encode(t.address, 'hex') || ':' || c.withdraw_delay as k
        from batch_channels c join addresses p on p.address_id = c.payer_id
        join addresses r on r.address_id = c.receiver_id join addresses t on t.address_id = c.token_id`),
    created: await rows(sql`
      select '0x' || encode(x.tx_hash, 'hex') || ':' || x.log_index || ':' || x.block_number || ':'
             || '0x' || encode(c.channel, 'hex') || ':' || coalesce(x.removed_seq::text, 'live') as k
        from batch_channel_created x join batch_channels c on c.channel_id = x.channel_id`),
    outgoing: await rows(sql`
      select '0x' || encode(o.tx_hash, 'hex') || ':' || o.log_index || ':' || '0x' || encode(f.address, 'hex') || ':'
             || '0x' || encode(t.address, 'hex') || ':' || o.value || ':' || coalesce(o.removed_seq::text, 'live') as k
        from seller_outgoing o join addresses f on f.address_id = o.from_id join addresses t on t.address_id = o.to_id`),
  };
}

describe.each(backends())('sync of the x402 streams on anvil ($backend)', ({ backend }) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase(backend);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('behavior: stores each stream as SPEC 3.0.0 reads it: classes 2 and 3, USDC claims with the channel payer, every ChannelCreated, outgoing within the lookback', async () => {
    const s = lower(seller.address);
    const { asOf, stats } = await sync(db.db);
    const transfer = (r: TransactionReceipt, at: number, from: string, value: number, cls: number, pair: number) =>
      `${hash(r)}:${indexOf(r, at)}:${lower(from)}:${s}:${value}:${cls}:${indexOf(r, pair)}:live`;
    const stored = await dump(db.db);
    expect(stored.transfers).toEqual(
      [
        transfer(sent.exact!, 0, payers.exact.address, 1500, 2, 1), // [Transfer, Settled()]
        transfer(sent.permit!, 1, payers.permit.address, 2750, 2, 2), // [Approval, Transfer, SettledWithPermit()]
        transfer(sent.upto!, 0, payers.upto.address, 3200, 3, 1), // charged 3,200 of 5,000 signed
      ].sort(),
    );
    // One claim: the USDC channel's 2,500, paid by the channel's payer (not the facilitator that
    // sent it) to its receiver. The other token's claim of 400 is not stored.
    expect(stored.claims).toEqual([
      `${hash(sent.claim!)}:${indexOf(sent.claim!, 0)}:${lower(payers.channel.address)}:${lower(BATCH_SELLER)}:2500:${usdcChannel.id}:live`,
    ]);
    expect(stored.channels).toEqual(
      [
        `${usdcChannel.id}:${lower(payers.channel.address)}:${lower(BATCH_SELLER)}:${lower(dep.address)}:900`,
        `${otherChannel.id}:${lower(payers.otherChannel.address)}:${lower(BATCH_SELLER)}:${OTHER_TOKEN}:900`,
      ].sort(),
    );
    // A Permit2-collector deposit logs [Transfer, ChannelCreated, Deposited]: three ChannelCreated,
    // the first before the window, the second the same channel again.
    const createdRow = (r: TransactionReceipt, id: string) => `${hash(r)}:${indexOf(r, 1)}:${r.blockNumber}:${id}:live`;
    expect(stored.created).toEqual(
      [
        createdRow(sent.deposit1!, usdcChannel.id),
        createdRow(sent.deposit2!, usdcChannel.id),
        createdRow(sent.otherDeposit!, otherChannel.id),
      ].sort(),
    );
    // The payback 10 days ago is outside window + lookback; today's is inside.
    expect(stored.outgoing).toEqual([
      `${hash(sent.outgoing!)}:${indexOf(sent.outgoing!, 0)}:${s}:${lower(payers.exact.address)}:77:live`,
    ]);
    // A deposit's Transfer (payer -> batch contract) is no fact of any table.
    expect(stored.transfers.concat(stored.outgoing).some((k) => k.startsWith(hash(sent.deposit2!)))).toBe(false);
    expect(stats.streams).toMatchObject({ proxyPairings: 3, receiptCalls: 3, claims: 1, claimsSkipped: 1 });

    // Coverage: the window streams from the window's first day, channels from block 0, the
    // outgoing stream LOOKBACK further back, all to the as-of block.
    const coverage = await sql<{ k: string }>`
      select stream || ':' || to_block || ':' || from_ts as k from stream_coverage
      union all select seller_address || ':' || to_block || ':' || from_ts from seller_outgoing_coverage`.execute(
      db.db,
    );
    const dayStart = asOf.timestamp - secondsIntoDay(asOf.timestamp - BigInt(WINDOW)) - BigInt(WINDOW);
    const channelsFromTs = (await dep.clients.public.getBlock({ blockNumber: 0n })).timestamp;
    expect(coverage.rows.map((r) => r.k).sort()).toEqual(
      [
        `x402_channels:${asOf.number}:${channelsFromTs}`,
        `x402_claims:${asOf.number}:${dayStart}`,
        `x402_proxies:${asOf.number}:${dayStart}`,
        ...SELLERS().map((a) => `${a}:${asOf.number}:${dayStart - BigInt(LOOKBACK)}`),
      ].sort(),
    );

    // A second sync at the same as-of point stores nothing again.
    const before = await dump(db.db);
    const again = await sync(db.db, { asOf });
    expect(await dump(db.db)).toEqual(before);
    expect(again.stats.streams).toMatchObject({ proxyPairings: 0, claims: 0, channelsCreated: 0, outgoing: 0 });
  });

  it('behavior: transfers stored before the proxies were read (an older database) get their class when the pairings are stored', async () => {
    const older = await freshDatabase(backend);
    try {
      const client = createChainClient({ rpcUrls: [x.anvil.url], chainId: 8453 });
      const asOf = await resolveAsOf(client, { confirmations: 0 });
      await sync(older.db, { asOf, noStreams: true });
      const classes = async () =>
        (await sql<{ c: number }>`select class as c from transfers order by class`.execute(older.db)).rows.map(
          (r) => r.c,
        );
      expect(await classes()).toEqual([0, 0, 0]);
      const { stats } = await sync(older.db, { asOf });
      // exact, exact with permit: 2; upto: 3 (the rows themselves are checked in the test above).
      expect(await classes()).toEqual([2, 2, 3]);
      expect(stats.streams?.reclassed).toBe(3);
    } finally {
      await older.close();
    }
  });

  it('edge: a zero claim is not stored, and a non-USDC channel claim beyond 2^63 is skipped, not refused', async () => {
    // The stand-in (like the deployed contract) never logs a zero claim: hand-made Claimed logs of
    // stored channels, at a real stored block, exercise the store's rule.
    const at = sent.otherClaim!;
    const claim = (channelId: Hex, logIndex: number, amount: bigint): ClaimedLog => ({
      blockNumber: at.blockNumber,
      blockHash: lower(at.blockHash) as Hex,
      txHash: lower(at.transactionHash) as Hex,
      logIndex,
      channelId,
      sender: lower(x.facilitatorAccount.address) as Hex,
      claimAmount: amount,
      newTotalClaimed: amount,
    });
    const block = { number: at.blockNumber, hash: lower(at.blockHash) as Hex, timestamp: 1n };
    const header = await dep.clients.public.getBlock({ blockNumber: at.blockNumber });
    block.timestamp = header.timestamp;
    const before = await dump(db.db);
    const result = await storeClaimsChunk(db.db, {
      claims: [claim(usdcChannel.id, 90, 0n), claim(otherChannel.id, 91, 2n ** 64n)],
      blocks: [block],
      end: block,
      usdcAddress: dep.address,
      step: { from: { block: 0n, ts: 0n }, toBlock: at.blockNumber },
      runSeq: await nextSeq(db.db),
    });
    expect(result).toEqual({ claims: 0, skipped: 2 });
    expect((await dump(db.db)).claims).toEqual(before.claims);
  });
});

/** Seconds since the UTC day's start (an independent restatement of utcDayStart). */
function secondsIntoDay(ts: bigint): bigint {
  return ((ts % 86_400n) + 86_400n) % 86_400n;
}

describe.each(backends())('x402 streams: killed runs and reorgs ($backend)', ({ backend }) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase(backend);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('behavior: a sync killed between chunks of a stream and run again stores every log once', async () => {
    const client = createChainClient({ rpcUrls: [x.anvil.url], chainId: 8453 });
    const asOf = await resolveAsOf(client, { confirmations: 0 });
    // A clean run into a database of its own gives the rows to compare with.
    const clean = await freshDatabase(backend);
    let expected: Awaited<ReturnType<typeof dump>>;
    try {
      await sync(clean.db, { asOf, blockRange: 4 });
      expected = await dump(clean.db);
    } finally {
      await clean.close();
    }
    for (const stream of ['x402_channels', 'x402_claims', 'x402_proxies', 'seller_outgoing']) {
      const killed = await freshDatabase(backend);
      try {
        let chunks = 0;
        await expect(
          sync(killed.db, {
            asOf,
            blockRange: 4,
            onChunk: (s) => {
              if (s === stream && ++chunks === 2) throw new InjectedCrash(`killed after 2 chunks of ${stream}`);
            },
          }),
        ).rejects.toThrow(InjectedCrash);
        await sync(killed.db, { asOf, blockRange: 4 });
        expect(await dump(killed.db), stream).toEqual(expected);
      } finally {
        await killed.close();
      }
    }
  });

  it('behavior: a run killed after storing both streams and before the last pass: the next run classes the transfers its pairings name', async () => {
    const client = createChainClient({ rpcUrls: [x.anvil.url], chainId: 8453 });
    const asOf = await resolveAsOf(client, { confirmations: 0 });
    // A clean run into a database of its own gives the rows to compare with.
    const clean = await freshDatabase(backend);
    let expected: Awaited<ReturnType<typeof dump>>;
    try {
      await sync(clean.db, { asOf });
      expected = await dump(clean.db);
    } finally {
      await clean.close();
    }
    const killed = await freshDatabase(backend);
    try {
      await expect(
        sync(killed.db, {
          asOf,
          beforePairingPass: () => {
            throw new InjectedCrash('killed before the last pass');
          },
        }),
      ).rejects.toThrow(InjectedCrash);
      const pairedSeq = async () =>
        (
          await sql<{ s: string | null }>`
            select paired_seq::text as s from stream_coverage where stream = 'x402_proxies'`.execute(killed.db)
        ).rows[0]?.s;
      expect(await pairedSeq()).toBeNull();
      // The race the pass exists for (a transfer and its pairing stored by concurrent
      // transactions, neither seeing the other) cannot be timed on anvil: its outcome is made by
      // hand, the three proxy-paired transfers of the timeline (the only transfers stored here)
      // left at class 0. On Postgres the killed run may already have met the race for some of
      // them, so they are set whatever class it left them at.
      const raced = await sql`
        update transfers set class = 0, pair_log_index = null where class in (0, 2, 3) returning 1`.execute(killed.db);
      expect(raced.rows).toHaveLength(3);
      const rerun = await sync(killed.db, { asOf });
      // exact, exact with permit: 2; upto: 3; each with its proxy log, as the killed run stored them.
      const classes = await sql<{ c: number }>`select class as c from transfers order by class`.execute(killed.db);
      expect(classes.rows.map((r) => r.c)).toEqual([2, 2, 3]);
      expect(await dump(killed.db)).toEqual(expected);
      expect(rerun.stats.streams?.reclassed).toBe(3);
      expect(await pairedSeq()).toBe(rerun.runSeq.toString());
    } finally {
      await killed.close();
    }
  });

  it('behavior: a reorg removing a ChannelCreated and a funding transfer marks their rows removed, and the new chain is stored', async () => {
    // Each backend's run of this test adds its own channel and Permit2 nonce to the shared chain.
    const n = backend === 'pg' ? 1 : 0;
    const fresh = x.channel(payers.channel, dep.address, BATCH_SELLER, `0x${'00'.repeat(31)}d${n}`);
    const make = async () => ({
      deposit: await x.depositThroughPermit2Collector(payers.channel, fresh, 1_000n, 20n + BigInt(n)),
      funding: await payBack(payers.upto.address, 11n),
    });
    const old = await make();
    await mine(x.anvil.url, 2);
    const first = await sync(db.db, { confirmations: 1 });
    expect(first.asOf.number).toBeGreaterThanOrEqual(old.funding.blockNumber);
    // Replace the last 4 blocks: the deposit and the funding transfer vanish.
    await rpcRequest(x.anvil.url, 'anvil_reorg', [4, []]);
    dep.sender.resetNonces();
    // The new branch: the same channel created again (in another block), another funding transfer.
    const redeposit = await x.depositThroughPermit2Collector(payers.channel, fresh, 1_000n, 20n + BigInt(n));
    const funding = await payBack(payers.upto.address, 12n);
    await mine(x.anvil.url, 2);
    const second = await sync(db.db, { confirmations: 1 });
    expect(second.stats.reorgedBlocks).toBeGreaterThan(0);
    const stored = await dump(db.db);
    const s = lower(seller.address);
    expect(stored.created).toContain(
      `${hash(old.deposit)}:${indexOf(old.deposit, 1)}:${old.deposit.blockNumber}:${fresh.id}:${second.runSeq}`,
    );
    expect(stored.created).toContain(
      `${hash(redeposit)}:${indexOf(redeposit, 1)}:${redeposit.blockNumber}:${fresh.id}:live`,
    );
    expect(stored.outgoing).toContain(
      `${hash(old.funding)}:${indexOf(old.funding, 0)}:${s}:${lower(payers.upto.address)}:11:${second.runSeq}`,
    );
    expect(stored.outgoing).toContain(
      `${hash(funding)}:${indexOf(funding, 0)}:${s}:${lower(payers.upto.address)}:12:live`,
    );
    // Every row still live is on the node's chain: its block hash is the canonical one.
    const live = await sql<{ n: string; h: string }>`
      select block_number::text as n, '0x' || encode(block_hash, 'hex') as h from seller_outgoing where removed_seq is null
      union all select block_number::text, '0x' || encode(block_hash, 'hex') from batch_channel_created where removed_seq is null`.execute(
      db.db,
    );
    for (const r of live.rows) {
      const b = await dep.clients.public.getBlock({ blockNumber: BigInt(r.n) });
      expect(r.h).toBe(lower(b.hash));
    }
    // Rows stored before the fork stay live (the first sync's channels and outgoing payback).
    expect(stored.outgoing).toContain(
      `${hash(sent.outgoing!)}:${indexOf(sent.outgoing!, 0)}:${s}:${lower(payers.exact.address)}:77:live`,
    );
  });
});

import { ExactEvmScheme as ExactClient } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactFacilitator } from '@x402/evm/exact/facilitator';
import { UptoEvmScheme as UptoClient } from '@x402/evm/upto/client';
import { UptoEvmScheme as UptoFacilitator } from '@x402/evm/upto/facilitator';
import type { ExactPermit2Payload } from '@x402/evm';
import {
  encodeFunctionData,
  getAddress,
  multicall3Abi,
  parseEther,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createChainClient,
  fetchChannelsCreated,
  fetchClaims,
  fetchProxySettlements,
  fetchSellerOutgoing,
  type ChainClient,
  type LogsContext,
} from '../../src/chain/index.ts';
import {
  buyerAccount,
  deployUsdc,
  ensureMulticall3,
  exactProxyAbi,
  fiatTokenAbi,
  fund,
  MULTICALL3_ADDRESS,
  waitForReceipt,
  X402_CONTRACTS,
  type AnvilInstance,
  type UsdcDeployment,
} from '../../src/devchain/index.ts';
import {
  paymentPayload as payload,
  startX402Anvil,
  type Channel,
  type ChannelConfig as Config,
  type X402Anvil,
} from '../helpers/x402-anvil.ts';

/**
 * The chain readers of method 3.0.0's streams (src/chain/fetch-x402-streams.ts) on anvil with
 * Circle's USDC code, the x402 stand-ins at the canonical addresses, and payments made by the
 * official `@x402/evm` 2.27.0 client and facilitator (test/helpers/x402-anvil.ts). Every expected
 * record is written from the amounts this test chose, the accounts it used, the channel ids of the
 * official client (`computeChannelId`) and the log indexes of the receipts the node returned (read
 * with viem), not from the code under test.
 */

const NETWORK = 'eip155:8453';
const OTHER_TOKEN: Address = '0x07e7070707070707070707070707070707070707';
const STRANGER: Address = '0x5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a';
const BATCH_SELLER: Address = '0xba7c45e11e5e11e5e11e5e11e5e11e5e11e5e11e';

let x: X402Anvil;
let anvil: AnvilInstance;
let dep: UsdcDeployment;
let other: UsdcDeployment;
let client: ChainClient;
let fromBlock: bigint;
let toBlock: bigint;
const seller = buyerAccount(200);
const lower = (a: string) => a.toLowerCase() as Hex;
const read = () => dep.clients.public;

/** What the test sent, to write the expected records from. */
const sent: Record<string, TransactionReceipt> = {};
const payers = {
  exact: buyerAccount(110),
  permit: buyerAccount(111),
  upto: buyerAccount(112),
  multi: buyerAccount(113),
  channel: buyerAccount(114),
  otherChannel: buyerAccount(115),
};
let usdcChannel: Channel;
let otherChannel: Channel;

beforeAll(async () => {
  // A second FiatToken at another address, for a channel whose token is not USDC. Deployed and
  // funded first: each deployment counts its accounts' nonces in its own TxSender.
  x = await startX402Anvil({
    before: async (node) => {
      other = await deployUsdc(node.url, { address: OTHER_TOKEN });
      await fund(other, payers.otherChannel.address, 1_000_000n);
    },
  });
  ({ anvil, dep } = x);
  const facilitator = x.facilitator;
  await ensureMulticall3(dep);
  for (const p of Object.values(payers)) await fund(dep, p.address, 1_000_000n);
  await fund(dep, MULTICALL3_ADDRESS, 1_000n);
  for (const p of [payers.exact, payers.upto, payers.multi, payers.channel]) await x.approvePermit2(p);
  await x.approvePermit2(payers.otherChannel, OTHER_TOKEN);
  await dep.clients.test.setBalance({ address: seller.address, value: parseEther('1') });
  fromBlock = (await read().getBlockNumber()) + 1n;
  const requirements = (scheme: 'exact' | 'upto', amount: bigint, extra: Record<string, unknown> = {}) =>
    x.requirements(scheme, amount, seller.address, extra);
  const settled = x.settled;

  // An exact payment with a Permit2 allowance: [Transfer, Settled()].
  const exact = new ExactFacilitator(facilitator);
  let accepted = requirements('exact', 1_500n);
  let created = await new ExactClient(x.clientSigner(payers.exact)).createPaymentPayload(2, accepted);
  sent.exact = await settled(await exact.settle(payload(accepted, created), accepted));

  // Exact with an EIP-2612 permit: [Approval, Transfer, SettledWithPermit()].
  accepted = requirements('exact', 2_750n);
  created = await new ExactClient(x.clientSigner(payers.permit)).createPaymentPayload(2, accepted, {
    extensions: { eip2612GasSponsoring: {} },
  });
  sent.permit = await settled(await exact.settle(payload(accepted, created), accepted));

  // Upto: signed for 5,000, charged 3,200.
  const upto = new UptoFacilitator(facilitator);
  accepted = requirements('upto', 5_000n, upto.getExtra(NETWORK) ?? {});
  created = await new UptoClient(x.clientSigner(payers.upto)).createPaymentPayload(2, accepted);
  sent.upto = await settled(await upto.settle(payload(accepted, created), { ...accepted, amount: '3200' }));

  // One transaction, three USDC Transfers around an exact settlement (Multicall3 aggregate3):
  // Multicall3 -> STRANGER 11, payer -> seller 900, Settled(), Multicall3 -> seller 13.
  accepted = requirements('exact', 900n);
  created = await new ExactClient(x.clientSigner(payers.multi)).createPaymentPayload(2, accepted);
  const p2 = created.payload as unknown as ExactPermit2Payload;
  const auth = p2.permit2Authorization;
  const settleData = encodeFunctionData({
    abi: exactProxyAbi,
    functionName: 'settle',
    args: [
      {
        permitted: { token: getAddress(auth.permitted.token), amount: BigInt(auth.permitted.amount) },
        nonce: BigInt(auth.nonce),
        deadline: BigInt(auth.deadline),
      },
      getAddress(auth.from),
      { to: getAddress(auth.witness.to), validAfter: BigInt(auth.witness.validAfter) },
      p2.signature as Hex,
    ],
  });
  const usdcTransfer = (to: Address, value: bigint) =>
    encodeFunctionData({ abi: fiatTokenAbi, functionName: 'transfer', args: [getAddress(to), value] });
  const calls = [
    { target: dep.address, allowFailure: false, callData: usdcTransfer(STRANGER, 11n) },
    { target: getAddress(X402_CONTRACTS.exactProxy), allowFailure: false, callData: settleData },
    { target: dep.address, allowFailure: false, callData: usdcTransfer(seller.address, 13n) },
  ];
  sent.multi = await waitForReceipt(
    read(),
    await dep.sender.send(x.facilitatorAccount, {
      to: MULTICALL3_ADDRESS,
      data: encodeFunctionData({ abi: multicall3Abi, functionName: 'aggregate3', args: [calls] }),
      gas: 800_000n,
    }),
  );

  // The seller pays one of its payers back: an outgoing transfer (not a payment).
  sent.outgoing = await waitForReceipt(
    read(),
    await dep.sender.send(seller, { to: dep.address, data: usdcTransfer(payers.exact.address, 77n), gas: 100_000n }),
  );

  // A USDC channel: deposit through the Permit2 collector, refund to zero, deposit again
  // (ChannelCreated twice, same id and config), then a claim of 2,500 sent by the facilitator.
  usdcChannel = x.channel(payers.channel, dep.address, BATCH_SELLER, `0x${'00'.repeat(31)}b1`);
  sent.deposit1 = await x.depositThroughPermit2Collector(payers.channel, usdcChannel, 10_000n, 1n);
  sent.refund = await x.refund(usdcChannel, 10_000n);
  sent.deposit2 = await x.depositThroughPermit2Collector(payers.channel, usdcChannel, 8_000n, 2n);
  sent.claim = await x.claim(payers.channel, usdcChannel, 2_500n);

  // A channel in another token, claimed: still read (the method filters on token).
  otherChannel = x.channel(payers.otherChannel, OTHER_TOKEN, BATCH_SELLER, `0x${'00'.repeat(31)}b2`);
  sent.otherDeposit = await x.depositThroughPermit2Collector(payers.otherChannel, otherChannel, 5_000n, 3n);
  sent.otherClaim = await x.claim(payers.otherChannel, otherChannel, 400n);
  toBlock = await read().getBlockNumber();

  client = createChainClient({ rpcUrls: [anvil.url], chainId: 8453, retryCount: 1, retryDelayMs: 10 });
}, 600_000);

afterAll(async () => {
  await anvil?.stop();
});

/** A small span, so every reader cuts the range into several eth_getLogs. */
const context = (): LogsContext => ({ limit: { span: 3n } });
const at = (receipt: TransactionReceipt) => ({
  blockNumber: receipt.blockNumber,
  blockHash: lower(receipt.blockHash),
  txHash: lower(receipt.transactionHash),
});
/** The index of the receipt's i-th log, as the node numbered it. */
const indexOf = (receipt: TransactionReceipt, i: number) => receipt.logs[i]!.logIndex;

describe('x402 stream readers on anvil', () => {
  it('behavior: proxy settlements pair with the last USDC Transfer before them in their transaction', async () => {
    const s = seller.address.toLowerCase();
    const expected = [
      {
        ...at(sent.exact!),
        logIndex: indexOf(sent.exact!, 1),
        proxy: 'exact',
        withPermit: false,
        transfer: { logIndex: indexOf(sent.exact!, 0), from: lower(payers.exact.address), to: s, value: 1_500n },
      },
      {
        // [Approval, Transfer, SettledWithPermit()]: the Transfer pairs, not the Approval.
        ...at(sent.permit!),
        logIndex: indexOf(sent.permit!, 2),
        proxy: 'exact',
        withPermit: true,
        transfer: { logIndex: indexOf(sent.permit!, 1), from: lower(payers.permit.address), to: s, value: 2_750n },
      },
      {
        ...at(sent.upto!),
        logIndex: indexOf(sent.upto!, 1),
        proxy: 'upto',
        withPermit: false,
        transfer: { logIndex: indexOf(sent.upto!, 0), from: lower(payers.upto.address), to: s, value: 3_200n },
      },
      {
        // [Transfer Multicall3->STRANGER, Transfer payer->seller, Settled(), Transfer Multicall3->seller].
        ...at(sent.multi!),
        logIndex: indexOf(sent.multi!, 2),
        proxy: 'exact',
        withPermit: false,
        transfer: { logIndex: indexOf(sent.multi!, 1), from: lower(payers.multi.address), to: s, value: 900n },
      },
    ];
    expect(sent.multi!.logs).toHaveLength(4);
    const byTransaction = await fetchProxySettlements(
      client,
      { usdcAddress: dep.address, fromBlock, toBlock },
      context(),
    );
    expect(byTransaction.settlements).toEqual(expected);
    // One receipt per settlement transaction.
    expect(byTransaction.receiptCalls).toBe(4);

    // The other way to read receipts gives the same records (automine: one transaction a block).
    const byBlock = await fetchProxySettlements(
      client,
      { usdcAddress: dep.address, fromBlock, toBlock, receipts: 'block' },
      context(),
    );
    expect(byBlock.settlements).toEqual(expected);
    expect(byBlock.receiptCalls).toBe(new Set(expected.map((e) => e.blockNumber)).size);
  });

  it('behavior: every Claimed log is read, sender is the submitter, a non-USDC channel included', async () => {
    const claims = await fetchClaims(client, { fromBlock, toBlock }, context());
    const facilitatorAddress = lower(x.facilitatorAccount.address);
    expect(claims).toEqual([
      {
        ...at(sent.claim!),
        logIndex: indexOf(sent.claim!, 0),
        channelId: usdcChannel.id,
        sender: facilitatorAddress,
        claimAmount: 2_500n,
        newTotalClaimed: 2_500n,
      },
      {
        ...at(sent.otherClaim!),
        logIndex: indexOf(sent.otherClaim!, 0),
        channelId: otherChannel.id,
        sender: facilitatorAddress,
        claimAmount: 400n,
        newTotalClaimed: 400n,
      },
    ]);
    expect(claims[0]!.sender).not.toBe(lower(payers.channel.address));
    expect(typeof claims[0]!.claimAmount).toBe('bigint');
  });

  it('behavior: ChannelCreated is read once per log, with the config in the repository field order', async () => {
    const configOf = (c: Config) => ({
      payer: lower(c.payer),
      payerAuthorizer: lower(c.payerAuthorizer),
      receiver: lower(c.receiver),
      receiverAuthorizer: lower(c.receiverAuthorizer),
      token: lower(c.token),
      withdrawDelay: c.withdrawDelay,
      salt: c.salt,
    });
    // A Permit2-collector deposit logs [Transfer payer->batch, ChannelCreated, Deposited].
    const created = await fetchChannelsCreated(client, { fromBlock, toBlock }, context());
    expect(created).toEqual([
      {
        ...at(sent.deposit1!),
        logIndex: indexOf(sent.deposit1!, 1),
        channelId: usdcChannel.id,
        config: configOf(usdcChannel.config),
      },
      {
        ...at(sent.deposit2!),
        logIndex: indexOf(sent.deposit2!, 1),
        channelId: usdcChannel.id,
        config: configOf(usdcChannel.config),
      },
      {
        ...at(sent.otherDeposit!),
        logIndex: indexOf(sent.otherDeposit!, 1),
        channelId: otherChannel.id,
        config: configOf(otherChannel.config),
      },
    ]);
    expect(created[2]!.config.token).toBe(OTHER_TOKEN);
  });

  it('behavior: a seller outgoing USDC Transfer is read; transfers to sellers and deposits are not', async () => {
    const outgoing = await fetchSellerOutgoing(
      client,
      {
        usdcAddress: dep.address,
        sellers: [seller.address, BATCH_SELLER, payers.channel.address],
        fromBlock,
        toBlock,
        sellerBatchSize: 2,
      },
      context(),
    );
    // payers.channel stands in for a "seller" here to show that its collector deposits (payer ->
    // batch contract) are outgoing transfers too: the method, not the reader, says they pay no seller.
    expect(outgoing.map((t) => ({ tx: t.txHash, from: t.from, to: t.to, value: t.value }))).toEqual([
      {
        tx: lower(sent.outgoing!.transactionHash),
        from: lower(seller.address),
        to: lower(payers.exact.address),
        value: 77n,
      },
      {
        tx: lower(sent.deposit1!.transactionHash),
        from: lower(payers.channel.address),
        to: X402_CONTRACTS.batchSettlement,
        value: 10_000n,
      },
      {
        tx: lower(sent.deposit2!.transactionHash),
        from: lower(payers.channel.address),
        to: X402_CONTRACTS.batchSettlement,
        value: 8_000n,
      },
    ]);
    expect(outgoing[0]!.logIndex).toBe(indexOf(sent.outgoing!, 0));
  });

  it('edge: a deposit through a collector is no proxy settlement and no claim', async () => {
    const range = { fromBlock: sent.deposit1!.blockNumber, toBlock: sent.deposit2!.blockNumber };
    const proxies = await fetchProxySettlements(client, { usdcAddress: dep.address, ...range }, context());
    expect(proxies).toEqual({ settlements: [], receiptCalls: 0 });
    expect(await fetchClaims(client, range, context())).toEqual([]);
  });
});

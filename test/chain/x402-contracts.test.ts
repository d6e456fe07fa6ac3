import type { PaymentRequirements } from '@x402/core/types';
import {
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  signVoucher,
} from '@x402/evm/batch-settlement/client';
import { ExactEvmScheme as ExactClient } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactFacilitator } from '@x402/evm/exact/facilitator';
import { UptoEvmScheme as UptoClient } from '@x402/evm/upto/client';
import { UptoEvmScheme as UptoFacilitator } from '@x402/evm/upto/facilitator';
import { type ExactPermit2Payload, type ClientEvmSigner, type FacilitatorEvmSigner } from '@x402/evm';
import {
  decodeEventLog,
  encodeFunctionData,
  getAddress,
  parseAbi,
  type Address,
  type Hex,
  type Log,
  type TransactionReceipt,
} from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paymentPayload, startX402Anvil, type X402Anvil } from '../helpers/x402-anvil.ts';
import {
  batchSettlementAbi,
  buyerAccount,
  channelConfig,
  claimData,
  erc3009DepositData,
  exactProxyAbi,
  fiatTokenAbi,
  fund,
  permit2DepositData,
  waitForReceipt,
  X402_CONTRACTS,
  X402_TOPIC0,
  type AnvilInstance,
  type ChannelConfig,
  type UsdcDeployment,
} from '../../src/devchain/index.ts';

/**
 * x402 payments through the Permit2 proxies and the batch-settlement contract on a local chain.
 *
 * Real: anvil, Circle's USDC code (FiatTokenV2_2 behind its proxy, at the Base address), and the
 * official x402 client and facilitator code of `@x402/evm` 2.27.0 (exact and upto schemes with
 * Permit2, the batch-settlement client's channel id, deposit authorization and voucher signing),
 * with viem signers. Stand-ins: the contracts at Permit2's, the proxies', the batch contract's and
 * the deposit collectors' canonical addresses (contracts/x402-stand-ins, our own code written from
 * the published interfaces; docs/x402-contracts.md). Every expected value below is worked out here,
 * from balances read before and after or from the amounts the test chose, not from the code under test.
 */

const NETWORK = 'eip155:8453';
const SELLER: Address = '0x5e11e5e11e5e11e5e11e5e11e5e11e5e11e5e11e';
const BATCH_SELLER: Address = '0xba7c45e11e5e11e5e11e5e11e5e11e5e11e5e11e';

const erc20Events = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);

let x: X402Anvil;
let anvil: AnvilInstance;
let dep: UsdcDeployment;
let facilitatorAccount: LocalAccount;
let facilitator: FacilitatorEvmSigner;

const usdc = () => dep.address;
const read = () => dep.clients.public;
const balanceOf = (address: Address) =>
  read().readContract({ address: usdc(), abi: fiatTokenAbi, functionName: 'balanceOf', args: [address] });
const nowSeconds = () => BigInt(Math.floor(Date.now() / 1000));

const clientSigner = (account: LocalAccount): ClientEvmSigner => x.clientSigner(account);

/** Each log as `contract:Event`, in log order; contracts by their role, events from topic0. */
function logNames(receipt: TransactionReceipt): string[] {
  const roles = new Map<string, string>([
    [usdc(), 'usdc'],
    ...Object.entries(X402_CONTRACTS).map(([role, address]) => [address, role] as [string, string]),
  ]);
  return receipt.logs.map((log) => {
    const role = roles.get(log.address.toLowerCase()) ?? log.address;
    return `${role}:${eventName(log)}`;
  });
}

function eventName(log: Log): string {
  const topic0 = log.topics[0];
  const proxy = Object.entries({
    Settled: X402_TOPIC0.proxySettled,
    SettledWithPermit: X402_TOPIC0.proxySettledWithPermit,
  });
  for (const [name, selector] of proxy) if (topic0 === selector) return name;
  for (const abi of [erc20Events, batchSettlementAbi]) {
    try {
      return decodeEventLog({ abi, data: log.data, topics: log.topics as [Hex, ...Hex[]] }).eventName;
    } catch {
      // not an event of this ABI
    }
  }
  return topic0 ?? 'anonymous';
}

function decodeUsdc(log: Log) {
  return decodeEventLog({ abi: erc20Events, data: log.data, topics: log.topics as [Hex, ...Hex[]] });
}
function decodeBatch(log: Log) {
  return decodeEventLog({ abi: batchSettlementAbi, data: log.data, topics: log.topics as [Hex, ...Hex[]] });
}

/** Gives `account` ETH for gas and lets Permit2 spend its USDC (the one-time approval of the Permit2 flow). */
const approvePermit2 = (account: LocalAccount): Promise<void> => x.approvePermit2(account);

const requirements = (
  scheme: 'exact' | 'upto',
  amount: bigint,
  extra: Record<string, unknown> = {},
): PaymentRequirements => x.requirements(scheme, amount, SELLER, extra);

beforeAll(async () => {
  // No fixed genesis time: the x402 code checks deadlines against the wall clock, as in production.
  x = await startX402Anvil();
  ({ anvil, dep, facilitatorAccount, facilitator } = x);
});

afterAll(async () => {
  await anvil?.stop();
});

describe('x402 contracts on anvil', () => {
  it('default: every canonical address holds code', async () => {
    for (const address of Object.values(X402_CONTRACTS)) {
      const code = await read().getCode({ address });
      expect(code && code.length > 2, address).toBe(true);
    }
  });

  it('behavior: an exact Permit2 payment by the official client and facilitator logs Transfer, then Settled()', async () => {
    const payer = buyerAccount(100);
    await fund(dep, payer.address, 10_000_000n);
    await approvePermit2(payer);
    const price = 1_500n;
    const accepted = requirements('exact', price);
    const created = await new ExactClient(clientSigner(payer)).createPaymentPayload(2, accepted);
    const payload = paymentPayload(accepted, created);

    const scheme = new ExactFacilitator(facilitator);
    const verified = await scheme.verify(payload, accepted);
    expect(verified).toMatchObject({ isValid: true });

    const [sellerBefore, payerBefore] = [await balanceOf(SELLER), await balanceOf(payer.address)];
    const settled = await scheme.settle(payload, accepted);
    expect(settled.success, settled.errorReason).toBe(true);
    const receipt = await waitForReceipt(read(), settled.transaction as Hex);

    expect(receipt.to?.toLowerCase()).toBe(X402_CONTRACTS.exactProxy);
    expect(logNames(receipt)).toEqual(['usdc:Transfer', 'exactProxy:Settled']);
    const transfer = decodeUsdc(receipt.logs[0]!);
    expect(transfer.args).toEqual({ from: getAddress(payer.address), to: getAddress(SELLER), value: price });
    expect(receipt.logs[1]!.topics).toEqual([X402_TOPIC0.proxySettled]);
    expect(receipt.logs[1]!.data).toBe('0x');
    expect(await balanceOf(SELLER)).toBe(sellerBefore + price);
    expect(await balanceOf(payer.address)).toBe(payerBefore - price);
  });

  it('behavior: exact with an EIP-2612 permit (no Permit2 allowance) logs Approval, Transfer, SettledWithPermit()', async () => {
    // A payer that never approved Permit2 and holds no ETH: the client signs an EIP-2612 permit
    // (eip2612GasSponsoring extension) and the facilitator calls settleWithPermit.
    const payer = buyerAccount(101);
    await fund(dep, payer.address, 10_000_000n);
    const price = 2_750n;
    const accepted = requirements('exact', price);
    const created = await new ExactClient(clientSigner(payer)).createPaymentPayload(2, accepted, {
      extensions: { eip2612GasSponsoring: {} },
    });
    expect(Object.keys(created.extensions ?? {})).toEqual(['eip2612GasSponsoring']);
    const payload = paymentPayload(accepted, created);

    const scheme = new ExactFacilitator(facilitator);
    expect(await scheme.verify(payload, accepted)).toMatchObject({ isValid: true });
    const sellerBefore = await balanceOf(SELLER);
    const settled = await scheme.settle(payload, accepted);
    expect(settled.success, settled.errorReason).toBe(true);
    const receipt = await waitForReceipt(read(), settled.transaction as Hex);

    expect(logNames(receipt)).toEqual(['usdc:Approval', 'usdc:Transfer', 'exactProxy:SettledWithPermit']);
    const approval = decodeUsdc(receipt.logs[0]!);
    // FiatToken logs the allowance it set (the permit's value); its transferFrom then spends it without a log.
    expect(approval.args).toEqual({
      owner: getAddress(payer.address),
      spender: getAddress(X402_CONTRACTS.permit2),
      value: price,
    });
    expect(decodeUsdc(receipt.logs[1]!).args).toEqual({
      from: getAddress(payer.address),
      to: getAddress(SELLER),
      value: price,
    });
    expect(receipt.logs[2]!.topics).toEqual([X402_TOPIC0.proxySettledWithPermit]);
    expect(await balanceOf(SELLER)).toBe(sellerBefore + price);
  });

  it('behavior: an upto payment charges less than the signed maximum; the Transfer carries the charged amount', async () => {
    const payer = buyerAccount(102);
    await fund(dep, payer.address, 10_000_000n);
    await approvePermit2(payer);
    const maximum = 5_000n;
    const charged = 3_200n;
    const upto = new UptoFacilitator(facilitator);
    const accepted = requirements('upto', maximum, upto.getExtra(NETWORK) ?? {});
    const created = await new UptoClient(clientSigner(payer)).createPaymentPayload(2, accepted);
    const payload = paymentPayload(accepted, created);
    expect(await upto.verify(payload, accepted)).toMatchObject({ isValid: true });

    const [sellerBefore, payerBefore] = [await balanceOf(SELLER), await balanceOf(payer.address)];
    // The resource server settles for what the request used: the requirements' amount is the charge.
    const settled = await upto.settle(payload, { ...accepted, amount: charged.toString() });
    expect(settled.success, settled.errorReason).toBe(true);
    const receipt = await waitForReceipt(read(), settled.transaction as Hex);

    expect(receipt.to?.toLowerCase()).toBe(X402_CONTRACTS.uptoProxy);
    expect(logNames(receipt)).toEqual(['usdc:Transfer', 'uptoProxy:Settled']);
    expect(decodeUsdc(receipt.logs[0]!).args).toEqual({
      from: getAddress(payer.address),
      to: getAddress(SELLER),
      value: charged,
    });
    expect(await balanceOf(SELLER)).toBe(sellerBefore + charged);
    expect(await balanceOf(payer.address)).toBe(payerBefore - charged);
  });

  it('edge: the Permit2 stand-in refuses a signed payment redirected to another payTo, and a replayed nonce', async () => {
    const payer = buyerAccount(104);
    await fund(dep, payer.address, 10_000_000n);
    await approvePermit2(payer);
    const accepted = requirements('exact', 900n);
    const created = await new ExactClient(clientSigner(payer)).createPaymentPayload(2, accepted);
    const auth = (created.payload as unknown as ExactPermit2Payload).permit2Authorization;
    const signature = (created.payload as unknown as ExactPermit2Payload).signature as Hex;
    const args = (to: Address) =>
      [
        {
          permitted: { token: getAddress(auth.permitted.token), amount: BigInt(auth.permitted.amount) },
          nonce: BigInt(auth.nonce),
          deadline: BigInt(auth.deadline),
        },
        getAddress(auth.from),
        { to, validAfter: BigInt(auth.witness.validAfter) },
        signature,
      ] as const;
    const call = (to: Address) =>
      read().simulateContract({
        account: facilitatorAccount,
        address: X402_CONTRACTS.exactProxy,
        abi: exactProxyAbi,
        functionName: 'settle',
        args: args(to),
      });
    await expect(call(getAddress(BATCH_SELLER))).rejects.toThrow();
    await call(getAddress(SELLER)); // the signed destination passes

    const hash = await dep.sender.send(facilitatorAccount, {
      to: X402_CONTRACTS.exactProxy,
      data: encodeFunctionData({ abi: exactProxyAbi, functionName: 'settle', args: args(getAddress(SELLER)) }),
    });
    await waitForReceipt(read(), hash);
    await expect(call(getAddress(SELLER))).rejects.toThrow(); // nonce used
  });

  describe('batch settlement: one channel deposited, refunded, deposited again, claimed and settled', () => {
    const payer = buyerAccount(103);
    const withdrawDelay = 900;
    let config: ChannelConfig;
    let channelId: Hex;
    const receipts: Record<string, TransactionReceipt> = {};

    const sendBatch = async (from: LocalAccount, data: Hex) => {
      const hash = await dep.sender.send(from, { to: X402_CONTRACTS.batchSettlement, data, gas: 500_000n });
      return waitForReceipt(read(), hash);
    };

    beforeAll(async () => {
      await fund(dep, payer.address, 100_000n);
      await approvePermit2(payer);
      // The facilitator claims for the seller: Claimed.sender will be it, not the payer.
      config = channelConfig({
        payer: payer.address,
        receiver: BATCH_SELLER,
        facilitator: facilitatorAccount.address,
        token: usdc(),
        withdrawDelay,
        salt: '0x00000000000000000000000000000000000000000000000000000000000000a1',
      });
      channelId = computeChannelId(config, NETWORK) as Hex;
    });

    it('default: the channel id of the official client is the contract getChannelId (EIP-712, this chain)', async () => {
      const onChain = await read().readContract({
        address: X402_CONTRACTS.batchSettlement,
        abi: batchSettlementAbi,
        functionName: 'getChannelId',
        args: [config],
      });
      expect(onChain).toBe(channelId);
    });

    it('behavior: a deposit through the ERC-3009 collector logs ChannelCreated with the config, and pays a contract', async () => {
      const amount = 10_000n;
      const accepted = { ...requirements('exact', 1n), scheme: 'batch-settlement' };
      const created = await createBatchSettlementEIP3009DepositPayload(
        clientSigner(payer),
        2,
        accepted,
        config,
        amount.toString(),
        '0',
      );
      const batchBefore = await balanceOf(X402_CONTRACTS.batchSettlement);
      const receipt = await sendBatch(facilitatorAccount, erc3009DepositData(config, amount, created.payload));
      receipts.firstDeposit = receipt;
      expect(logNames(receipt)).toEqual([
        'usdc:AuthorizationUsed',
        'usdc:Transfer',
        'usdc:Transfer',
        'batchSettlement:ChannelCreated',
        'batchSettlement:Deposited',
      ]);
      expect(decodeUsdc(receipt.logs[1]!).args).toEqual({
        from: getAddress(payer.address),
        to: getAddress(X402_CONTRACTS.erc3009DepositCollector),
        value: amount,
      });
      expect(decodeUsdc(receipt.logs[2]!).args).toEqual({
        from: getAddress(X402_CONTRACTS.erc3009DepositCollector),
        to: getAddress(X402_CONTRACTS.batchSettlement),
        value: amount,
      });
      const createdLog = decodeBatch(receipt.logs[3]!);
      expect(receipt.logs[3]!.topics[0]).toBe(X402_TOPIC0.batchChannelCreated);
      expect(createdLog.args).toEqual({ channelId, config });
      expect(await balanceOf(X402_CONTRACTS.batchSettlement)).toBe(batchBefore + amount);
    });

    it('behavior: a refund to zero closes the channel, and the next deposit (Permit2 collector) logs ChannelCreated again', async () => {
      const refund = await sendBatch(
        facilitatorAccount,
        encodeFunctionData({ abi: batchSettlementAbi, functionName: 'refund', args: [config, 10_000n] }),
      );
      expect(logNames(refund)).toEqual(['batchSettlement:Refunded', 'batchSettlement:ChannelClosed', 'usdc:Transfer']);

      const amount = 8_000n;
      const nonce = 7n;
      const deadline = nowSeconds() + 600n;
      const receipt = await sendBatch(
        facilitatorAccount,
        await permit2DepositData(payer, { config, id: channelId }, { amount, nonce, deadline, chainId: 8453 }),
      );
      receipts.secondDeposit = receipt;
      expect(logNames(receipt)).toEqual([
        'usdc:Transfer',
        'batchSettlement:ChannelCreated',
        'batchSettlement:Deposited',
      ]);
      expect(decodeUsdc(receipt.logs[0]!).args).toEqual({
        from: getAddress(payer.address),
        to: getAddress(X402_CONTRACTS.batchSettlement),
        value: amount,
      });
      expect(decodeBatch(receipt.logs[1]!).args).toEqual({ channelId, config });

      // The chain now holds two ChannelCreated logs for one channel, with the same config.
      const created = await read().getLogs({
        address: X402_CONTRACTS.batchSettlement,
        event: batchSettlementAbi.find((i) => i.type === 'event' && i.name === 'ChannelCreated')!,
        args: { channelId },
        fromBlock: 0n,
      });
      expect(created.map((l) => l.transactionHash)).toEqual([
        receipts.firstDeposit!.transactionHash,
        receipts.secondDeposit!.transactionHash,
      ]);
    });

    it('behavior: a claim logs Claimed whose sender is the submitter, not the payer; a repeated claim logs nothing', async () => {
      const claimed = 2_500n;
      const voucher = await signVoucher(clientSigner(payer), channelId, '3000', NETWORK);
      const claim = (total: bigint) => claimData(config, voucher, total);
      const batchBefore = await balanceOf(X402_CONTRACTS.batchSettlement);
      const receipt = await sendBatch(facilitatorAccount, claim(claimed));
      expect(logNames(receipt)).toEqual(['batchSettlement:Claimed']);
      const log = decodeBatch(receipt.logs[0]!);
      expect(receipt.logs[0]!.topics[0]).toBe(X402_TOPIC0.batchClaimed);
      expect(log.args).toEqual({
        channelId,
        sender: getAddress(facilitatorAccount.address),
        claimAmount: claimed,
        newTotalClaimed: claimed,
      });
      expect(getAddress(facilitatorAccount.address)).not.toBe(getAddress(payer.address));
      // A claim moves no money: the escrow stays in the contract until settle.
      expect(await balanceOf(X402_CONTRACTS.batchSettlement)).toBe(batchBefore);

      // The same cumulative total again is a claim of 0: the contract logs no Claimed at all.
      const again = await sendBatch(facilitatorAccount, claim(claimed));
      expect(again.status).toBe('success');
      expect(again.logs).toEqual([]);
    });

    it('behavior: settle pays the seller and logs the batch contract own Settled, not the proxies Settled()', async () => {
      const sellerBefore = await balanceOf(BATCH_SELLER);
      const receipt = await sendBatch(
        facilitatorAccount,
        encodeFunctionData({ abi: batchSettlementAbi, functionName: 'settle', args: [BATCH_SELLER, usdc()] }),
      );
      expect(logNames(receipt)).toEqual(['usdc:Transfer', 'batchSettlement:Settled']);
      expect(decodeUsdc(receipt.logs[0]!).args).toEqual({
        from: getAddress(X402_CONTRACTS.batchSettlement),
        to: getAddress(BATCH_SELLER),
        value: 2_500n,
      });
      expect(receipt.logs[1]!.topics[0]).toBe(X402_TOPIC0.batchSettled);
      expect(receipt.logs[1]!.topics[0]).not.toBe(X402_TOPIC0.proxySettled);
      expect(decodeBatch(receipt.logs[1]!).args).toEqual({
        receiver: getAddress(BATCH_SELLER),
        token: getAddress(usdc()),
        sender: getAddress(facilitatorAccount.address),
        amount: 2_500n,
      });
      expect(await balanceOf(BATCH_SELLER)).toBe(sellerBefore + 2_500n);
    });
  });
});

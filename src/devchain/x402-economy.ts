/**
 * The demo's x402 payments beyond EIP-3009 (SPEC section 2, "Method 3.0.0"): a few synthetic
 * sellers paid through the canonical Permit2 proxies (`exact`, `upto`) and through
 * batch-settlement channels, plus the two kinds of internal payment (a seller funding its payer
 * before the payment; a payer that is itself a seller on the same host). Each scenario is small
 * and dated, so the figures it should produce can be checked by hand (docs/METHOD.md's worked
 * example follows the same shapes).
 *
 * The payment payloads come from the official x402 client code of `@x402/evm` 2.27.0 (exact and
 * upto with Permit2, the batch-settlement client's channel id, deposit authorization and
 * vouchers); the facilitator's part (submitting them) is done here with the proxies' and the batch
 * contract's published ABIs, because the official facilitator waits for each receipt and the demo
 * mines its history block by block with automine off. The contracts are the stand-ins of
 * src/devchain/x402-contracts.ts at the canonical addresses (docs/x402-contracts.md).
 *
 * The scenarios themselves (actors, listings, dated steps) are data, in ./x402-economy-plan.ts;
 * this file sends them and reads back what was mined.
 */
import type { PaymentRequirements } from '@x402/core/types';
import {
  toClientEvmSigner,
  type BatchSettlementDepositPayload,
  type ClientEvmSigner,
  type ExactPermit2Payload,
} from '@x402/evm';
import {
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  signVoucher,
} from '@x402/evm/batch-settlement/client';
import { createPermit2ApprovalTx, ExactEvmScheme as ExactClient } from '@x402/evm/exact/client';
import { UptoEvmScheme as UptoClient } from '@x402/evm/upto/client';
import {
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  parseEther,
  parseEventLogs,
  type Address,
  type Hash,
  type Hex,
} from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { batchSettlementAbi, exactProxyAbi, uptoProxyAbi, X402_CONTRACTS } from '../chain/x402.ts';
import { PERMIT2_DEPOSIT_WITNESS_TYPES } from './x402-contracts.ts';
import { sendMint, sendPlainTransfer, sendSettlement } from './settle.ts';
import { waitForReceipt } from './tx.ts';
import { fiatTokenAbi } from './usdc-abi.ts';
import type { UsdcDeployment } from './usdc.ts';
import {
  account,
  address,
  DAY,
  NETWORK,
  plan,
  type Actor,
  type Step,
  type X402DemoIntent,
} from './x402-economy-plan.ts';

export {
  isX402DemoSeller,
  X402_DEMO_SELLERS,
  X402_DEMO_TIME_OFFSET,
  x402DemoCatalogItems,
} from './x402-economy-plan.ts';
export type { X402DemoIntent } from './x402-economy-plan.ts';

/** Evidence classes of method 3.0.0 (SPEC "Evidence classes"). */
export type X402DemoClass = 'eip3009' | 'permit2_exact' | 'permit2_upto' | 'batch_settlement';

/** One payment this module made to a seller, as mined. */
export interface X402DemoPayment {
  class: X402DemoClass;
  /** The Transfer log paying the seller, or for a claim the Claimed log. */
  txHash: Hash;
  logIndex: number;
  blockNumber: bigint;
  blockTimestamp: bigint;
  /** lowercase: the payer (for a claim, the channel's payer) and the seller */
  from: Address;
  to: Address;
  value: bigint;
  /** What this module meant the payment to be under method 3.0.0 (checked by hand in docs/METHOD.md). */
  intended: X402DemoIntent;
}

/** One USDC Transfer from a seller of this module (a funding). */
export interface X402DemoOutgoing {
  txHash: Hash;
  logIndex: number;
  blockNumber: bigint;
  blockTimestamp: bigint;
  from: Address;
  to: Address;
  value: bigint;
}

export interface X402DemoSummary {
  payments: X402DemoPayment[];
  outgoing: X402DemoOutgoing[];
  /** Transactions that moved USDC to a contract or from one (deposits, the channel settle): never payments. */
  contractTransfers: Hash[];
  /** The channels opened: id and config receiver. */
  channels: { channelId: Hex; receiver: Address; payer: Address }[];
}

const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000';
const WITHDRAW_DELAY = 900;
/** USDC each payer and funding seller starts with. */
const START_BALANCE = 5_000_000n;
/** Far beyond the demo's history: Permit2 deadlines are checked against block time. */
const DEADLINE_SECONDS = 10n * 365n * DAY;

interface SentStep {
  step: Step;
  hash: Hash;
}

/**
 * Sends the scenarios into the demo's history. The EIP-3009 economy (economy.ts) calls
 * `beforeBlock(next, previous)` before it sends the transactions of each of its history blocks;
 * every scenario dated before `next` is then mined in a block of its own at its exact time (so the
 * lookback edges hold to the second), or one second after the latest block if that is later.
 */
export class X402DemoSeeder {
  private readonly steps: Step[];
  private readonly sent: SentStep[] = [];
  private readonly nonceCounter = { n: 0 };
  private ready = false;
  private lastMined = 0n;
  private readonly channels = new Map<1 | 2, { config: ChannelConfig; id: Hex; deposited: bigint }>();

  constructor(
    private readonly dep: UsdcDeployment,
    asOfTs: bigint,
    private readonly mineAt: (timestamp: bigint) => Promise<void>,
  ) {
    this.steps = plan(asOfTs);
  }

  /** Blocks this seeder mined (the setup block and one per distinct scenario time). */
  blocks = 0;
  /** Transactions it sent. */
  transactions = 0;

  private get facilitator(): LocalAccount {
    return this.dep.roles.facilitators[0]!;
  }

  async beforeBlock(next: bigint, previous: bigint): Promise<void> {
    this.lastMined = this.lastMined > previous ? this.lastMined : previous;
    if (!this.ready) {
      await this.setup();
      await this.mine(this.lastMined + 1n, next);
      this.ready = true;
    }
    while (this.steps.length > 0 && this.steps[0]!.at < next) {
      const at = this.steps[0]!.at;
      while (this.steps.length > 0 && this.steps[0]!.at === at) await this.send(this.steps.shift()!);
      await this.mine(at > this.lastMined ? at : this.lastMined + 1n, next);
    }
  }

  /** Throws when a scenario is left unsent (its time was after the last history block). */
  finish(): void {
    if (this.steps.length > 0) throw new Error(`X402DemoSeeder: ${this.steps.length} scenarios left unsent`);
  }

  private async mine(timestamp: bigint, next: bigint): Promise<void> {
    if (timestamp >= next) throw new Error(`X402DemoSeeder: no room for a block before ${next}`);
    await this.mineAt(timestamp);
    this.lastMined = timestamp;
    this.blocks++;
  }

  /** USDC for every payer and the funding seller; gas for those that send transactions; Permit2 approvals. */
  private async setup(): Promise<void> {
    const dep = this.dep;
    const holders: Actor[] = [
      'exactPayer',
      'uptoPayer',
      'channelPayer1',
      'channelPayer2',
      'fundedPayer1',
      'fundedPayer2',
      'fundedPayer3',
      'externalPayer',
      'operatorB',
      'fundingSeller',
    ];
    for (const actor of holders) {
      await sendMint(dep, address(actor), START_BALANCE);
      this.transactions++;
    }
    for (const actor of ['exactPayer', 'uptoPayer', 'channelPayer2', 'fundingSeller'] as const) {
      await dep.clients.test.setBalance({ address: address(actor), value: parseEther('1') });
    }
    for (const actor of ['exactPayer', 'uptoPayer', 'channelPayer2'] as const) {
      const tx = createPermit2ApprovalTx(dep.address);
      await dep.sender.send(account(actor), { to: tx.to, data: tx.data, gas: 100_000n });
      this.transactions++;
    }
  }

  private clientSigner(actor: Actor): ClientEvmSigner {
    const client = this.dep.clients.public;
    return toClientEvmSigner(account(actor), { readContract: (args) => client.readContract(args as never) });
  }

  private requirements(
    scheme: string,
    seller: Actor,
    amount: bigint,
    extra: Record<string, unknown> = {},
  ): PaymentRequirements {
    return {
      scheme,
      network: NETWORK,
      asset: getAddress(this.dep.address),
      amount: amount.toString(),
      payTo: getAddress(address(seller)),
      maxTimeoutSeconds: Number(DEADLINE_SECONDS),
      extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'permit2', ...extra },
    };
  }

  private channel(n: 1 | 2) {
    let channel = this.channels.get(n);
    if (!channel) {
      const config: ChannelConfig = {
        payer: getAddress(address(n === 1 ? 'channelPayer1' : 'channelPayer2')),
        payerAuthorizer: ZERO_ADDRESS,
        receiver: getAddress(address('channelSeller')),
        // The facilitator claims for the seller: Claimed.sender is it, never the payer.
        receiverAuthorizer: getAddress(this.facilitator.address),
        token: getAddress(this.dep.address),
        withdrawDelay: WITHDRAW_DELAY,
        salt: `0x${n.toString(16).padStart(64, '0')}`,
      };
      channel = { config, id: computeChannelId(config, NETWORK) as Hex, deposited: 0n };
      this.channels.set(n, channel);
    }
    return channel;
  }

  private async toBatch(data: Hex): Promise<Hash> {
    return this.dep.sender.send(this.facilitator, { to: X402_CONTRACTS.batchSettlement, data, gas: 500_000n });
  }

  private async send(step: Step): Promise<void> {
    const dep = this.dep;
    let hash: Hash;
    switch (step.kind) {
      case 'eip3009': {
        const nonce = `0x${(0x402_0000 + this.nonceCounter.n++).toString(16).padStart(64, '0')}` as Hex;
        const sent = await sendSettlement(dep, {
          from: account(step.payer),
          to: address(step.seller),
          value: step.value,
          nonce,
          facilitator: this.facilitator,
        });
        hash = sent.hash;
        break;
      }
      case 'exact': {
        const accepted = this.requirements('exact', step.seller, step.value);
        const created = await new ExactClient(this.clientSigner(step.payer)).createPaymentPayload(2, accepted);
        const { permit2Authorization: auth, signature } = created.payload as unknown as ExactPermit2Payload;
        hash = await dep.sender.send(this.facilitator, {
          to: X402_CONTRACTS.exactProxy,
          gas: 300_000n,
          data: encodeFunctionData({
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
              signature as Hex,
            ],
          }),
        });
        break;
      }
      case 'upto': {
        const accepted = this.requirements('upto', step.seller, step.maximum, {
          facilitatorAddress: getAddress(this.facilitator.address),
        });
        const created = await new UptoClient(this.clientSigner(step.payer)).createPaymentPayload(2, accepted);
        const { permit2Authorization: auth, signature } = created.payload as unknown as ExactPermit2Payload;
        hash = await dep.sender.send(this.facilitator, {
          to: X402_CONTRACTS.uptoProxy,
          gas: 300_000n,
          data: encodeFunctionData({
            abi: uptoProxyAbi,
            functionName: 'settle',
            args: [
              {
                permitted: { token: getAddress(auth.permitted.token), amount: BigInt(auth.permitted.amount) },
                nonce: BigInt(auth.nonce),
                deadline: BigInt(auth.deadline),
              },
              step.charged,
              getAddress(auth.from),
              {
                to: getAddress(auth.witness.to),
                facilitator: getAddress(this.facilitator.address),
                validAfter: BigInt(auth.witness.validAfter),
              },
              signature as Hex,
            ],
          }),
        });
        break;
      }
      case 'fund': {
        const sent = await sendPlainTransfer(dep, {
          from: account(step.seller),
          to: address(step.payer),
          value: step.value,
        });
        hash = sent.hash;
        break;
      }
      case 'deposit3009': {
        const channel = this.channel(step.channel);
        const accepted = this.requirements('batch-settlement', 'channelSeller', 1n);
        const created = await createBatchSettlementEIP3009DepositPayload(
          this.clientSigner('channelPayer1'),
          2,
          accepted,
          channel.config,
          step.amount.toString(),
          '0',
        );
        const authorization = (created.payload as unknown as BatchSettlementDepositPayload).deposit.authorization
          .erc3009Authorization!;
        const collectorData = encodeAbiParameters(
          [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
          [
            BigInt(authorization.validAfter),
            BigInt(authorization.validBefore),
            BigInt(authorization.salt),
            authorization.signature as Hex,
          ],
        );
        hash = await this.toBatch(
          encodeFunctionData({
            abi: batchSettlementAbi,
            functionName: 'deposit',
            args: [channel.config, step.amount, X402_CONTRACTS.erc3009DepositCollector, collectorData],
          }),
        );
        channel.deposited += step.amount;
        break;
      }
      case 'depositPermit2': {
        const channel = this.channel(step.channel);
        const nonce = BigInt(0x402_0000 + this.nonceCounter.n++);
        const deadline = step.at + DEADLINE_SECONDS;
        const signature = await account('channelPayer2').signTypedData({
          domain: { name: 'Permit2', chainId: dep.chainId, verifyingContract: getAddress(X402_CONTRACTS.permit2) },
          types: PERMIT2_DEPOSIT_WITNESS_TYPES,
          primaryType: 'PermitWitnessTransferFrom',
          message: {
            permitted: { token: getAddress(dep.address), amount: step.amount },
            spender: getAddress(X402_CONTRACTS.permit2DepositCollector),
            nonce,
            deadline,
            witness: { channelId: channel.id },
          },
        });
        const collectorData = encodeAbiParameters(
          [{ type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }, { type: 'bytes' }],
          [nonce, deadline, signature, '0x'],
        );
        hash = await this.toBatch(
          encodeFunctionData({
            abi: batchSettlementAbi,
            functionName: 'deposit',
            args: [channel.config, step.amount, X402_CONTRACTS.permit2DepositCollector, collectorData],
          }),
        );
        channel.deposited += step.amount;
        break;
      }
      case 'claim': {
        const channel = this.channel(step.channel);
        const payer: Actor = step.channel === 1 ? 'channelPayer1' : 'channelPayer2';
        const voucher = await signVoucher(this.clientSigner(payer), channel.id, channel.deposited.toString(), NETWORK);
        hash = await this.toBatch(
          encodeFunctionData({
            abi: batchSettlementAbi,
            functionName: 'claim',
            args: [
              [
                {
                  voucher: { channel: channel.config, maxClaimableAmount: BigInt(voucher.maxClaimableAmount) },
                  signature: voucher.signature as Hex,
                  totalClaimed: step.total,
                },
              ],
            ],
          }),
        );
        break;
      }
      case 'settleChannel':
        hash = await this.toBatch(
          encodeFunctionData({
            abi: batchSettlementAbi,
            functionName: 'settle',
            args: [getAddress(address('channelSeller')), getAddress(dep.address)],
          }),
        );
        break;
    }
    this.sent.push({ step, hash });
    this.transactions++;
  }

  /** What was mined, read back from the receipts (each must have succeeded). */
  async summary(): Promise<X402DemoSummary> {
    const client = this.dep.clients.public;
    const usdc = this.dep.address.toLowerCase();
    const payments: X402DemoPayment[] = [];
    const outgoing: X402DemoOutgoing[] = [];
    const contractTransfers: Hash[] = [];
    const blockTimes = new Map<bigint, bigint>();
    const timeOf = async (blockNumber: bigint) => {
      let ts = blockTimes.get(blockNumber);
      if (ts === undefined) {
        ts = (await client.getBlock({ blockNumber })).timestamp;
        blockTimes.set(blockNumber, ts);
      }
      return ts;
    };
    for (const { step, hash } of this.sent) {
      const receipt = await waitForReceipt(client, hash, { allowRevert: true });
      if (receipt.status !== 'success') throw new Error(`X402DemoSeeder: ${step.kind} ${hash} reverted`);
      const at = await timeOf(receipt.blockNumber);
      const transfers = parseEventLogs({ abi: fiatTokenAbi, eventName: 'Transfer', logs: receipt.logs }).filter(
        (l) => l.address.toLowerCase() === usdc,
      );
      const base = { txHash: hash, blockNumber: receipt.blockNumber, blockTimestamp: at };
      const transfer = (to: Actor) => {
        const log = transfers.find((l) => l.args.to.toLowerCase() === address(to));
        if (!log) throw new Error(`X402DemoSeeder: ${step.kind} ${hash} paid no ${to}`);
        return {
          ...base,
          logIndex: log.logIndex,
          from: log.args.from.toLowerCase() as Address,
          to: log.args.to.toLowerCase() as Address,
          value: log.args.value,
        };
      };
      switch (step.kind) {
        case 'eip3009':
          payments.push({ class: 'eip3009', intended: step.intended, ...transfer(step.seller) });
          break;
        case 'exact':
          payments.push({ class: 'permit2_exact', intended: 'external', ...transfer(step.seller) });
          break;
        case 'upto':
          payments.push({ class: 'permit2_upto', intended: 'external', ...transfer(step.seller) });
          break;
        case 'fund':
          outgoing.push(transfer(step.payer));
          break;
        case 'claim': {
          const claimed = parseEventLogs({ abi: batchSettlementAbi, eventName: 'Claimed', logs: receipt.logs });
          const channel = this.channel(step.channel);
          for (const log of claimed)
            payments.push({
              class: 'batch_settlement',
              intended: 'external',
              ...base,
              logIndex: log.logIndex,
              from: channel.config.payer.toLowerCase() as Address,
              to: channel.config.receiver.toLowerCase() as Address,
              value: log.args.claimAmount,
            });
          break;
        }
        default:
          contractTransfers.push(hash);
      }
    }
    return {
      payments,
      outgoing,
      contractTransfers,
      channels: [...this.channels.values()].map((c) => ({
        channelId: c.id,
        receiver: c.config.receiver.toLowerCase() as Address,
        payer: c.config.payer.toLowerCase() as Address,
      })),
    };
  }
}

interface ChannelConfig {
  payer: Address;
  payerAuthorizer: Address;
  receiver: Address;
  receiverAuthorizer: Address;
  token: Address;
  withdrawDelay: number;
  salt: Hex;
}

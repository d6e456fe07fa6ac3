/**
 * What the demo's x402 scenarios mined (./x402-economy.ts sends them), read back from the
 * receipts of the transactions sent: the payments to the synthetic sellers with their evidence
 * class, the sellers' outgoing fundings, the transfers to and from contracts, and the channels.
 */
import { parseEventLogs, type Address, type Hash, type Hex } from 'viem';
import { batchSettlementAbi } from '../chain/x402.ts';
import { waitForReceipt } from './tx.ts';
import { fiatTokenAbi } from './usdc-abi.ts';
import type { UsdcDeployment } from './usdc.ts';
import type { Channel } from './x402-economy-calls.ts';
import { address, type Actor, type Step, type X402DemoIntent } from './x402-economy-plan.ts';

/** Evidence classes of method 3.0.0 (SPEC "Evidence classes"). */
export type X402DemoClass = 'eip3009' | 'permit2_exact' | 'permit2_upto' | 'batch_settlement';

/** A USDC log as mined: where it is, and who moved how much to whom (lowercase addresses). */
interface MinedTransfer {
  txHash: Hash;
  logIndex: number;
  blockNumber: bigint;
  blockTimestamp: bigint;
  from: Address;
  to: Address;
  value: bigint;
}

/**
 * One payment the scenarios made to a seller, as mined: the Transfer log paying the seller, or for
 * a claim the Claimed log (`from` is then the channel's payer).
 */
export interface X402DemoPayment extends MinedTransfer {
  class: X402DemoClass;
  /** What the scenario meant the payment to be under method 3.0.0 (checked by hand in docs/METHOD.md). */
  intended: X402DemoIntent;
}

/** One USDC Transfer from a seller of the scenarios (a funding). */
export type X402DemoOutgoing = MinedTransfer;

export interface X402DemoSummary {
  payments: X402DemoPayment[];
  outgoing: X402DemoOutgoing[];
  /** Transactions that moved USDC to a contract or from one (deposits, the channel settle): never payments. */
  contractTransfers: Hash[];
  /** The channels opened: id and config receiver. */
  channels: { channelId: Hex; receiver: Address; payer: Address }[];
}

/** A scenario step and the hash of the transaction that sent it. */
export interface SentStep {
  step: Step;
  hash: Hash;
}

/**
 * What `sent` mined, read back from the receipts (each must have succeeded); `channels` by
 * number, as the claims name them.
 */
export async function readX402Summary(
  dep: UsdcDeployment,
  sent: readonly SentStep[],
  channels: ReadonlyMap<1 | 2, Channel>,
): Promise<X402DemoSummary> {
  const client = dep.clients.public;
  const usdc = dep.address.toLowerCase();
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
  for (const { step, hash } of sent) {
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
        const { config } = channels.get(step.channel)!;
        for (const log of claimed)
          payments.push({
            class: 'batch_settlement',
            intended: 'external',
            ...base,
            logIndex: log.logIndex,
            from: config.payer.toLowerCase() as Address,
            to: config.receiver.toLowerCase() as Address,
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
    channels: [...channels.values()].map((c) => ({
      channelId: c.id,
      receiver: c.config.receiver.toLowerCase() as Address,
      payer: c.config.payer.toLowerCase() as Address,
    })),
  };
}

/**
 * The demo's x402 payments beyond EIP-3009 (SPEC section 2, "Method 3.0.0"): a few synthetic
 * sellers paid through the canonical Permit2 proxies (`exact`, `upto`) and through
 * batch-settlement channels, plus the two kinds of internal payment (a seller funding its payer
 * before the payment; a payer that is itself a seller on the same host). Each scenario is small
 * and dated, so the figures it should produce can be checked by hand (docs/METHOD.md's worked
 * example follows the same shapes).
 *
 * The scenarios themselves (actors, listings, dated steps) are data, in ./x402-economy-plan.ts;
 * this file sends them into the demo's history, dated. The facilitator's transactions are built
 * in ./x402-economy-calls.ts from the official x402 client code's payloads, sent to the
 * stand-ins of src/devchain/x402-contracts.ts at the canonical addresses (docs/x402-contracts.md);
 * what was mined is read back in ./x402-economy-summary.ts.
 */
import { createPermit2ApprovalTx } from '@x402/evm/exact/client';
import { parseEther, type Hash, type Hex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { sendMint, sendPlainTransfer, sendSettlement } from './settle.ts';
import type { UsdcDeployment } from './usdc.ts';
import { FacilitatorCalls, newChannel, type Channel, type FacilitatorCall } from './x402-economy-calls.ts';
import { account, address, plan, type Actor, type Step } from './x402-economy-plan.ts';
import { readX402Summary, type SentStep, type X402DemoSummary } from './x402-economy-summary.ts';

export {
  isX402DemoSeller,
  X402_DEMO_SELLERS,
  X402_DEMO_TIME_OFFSET,
  x402DemoCatalogItems,
} from './x402-economy-plan.ts';
export type { X402DemoIntent } from './x402-economy-plan.ts';
export type { X402DemoClass, X402DemoOutgoing, X402DemoPayment, X402DemoSummary } from './x402-economy-summary.ts';

/** USDC each payer and funding seller starts with. */
const START_BALANCE = 5_000_000n;

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
  private readonly channels = new Map<1 | 2, Channel>();
  private readonly calls: FacilitatorCalls;

  constructor(
    private readonly dep: UsdcDeployment,
    asOfTs: bigint,
    private readonly mineAt: (timestamp: bigint) => Promise<void>,
  ) {
    this.steps = plan(asOfTs);
    this.calls = new FacilitatorCalls(dep, this.facilitator);
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

  private channel(n: 1 | 2): Channel {
    let channel = this.channels.get(n);
    if (!channel) {
      channel = newChannel(this.dep, this.facilitator, n);
      this.channels.set(n, channel);
    }
    return channel;
  }

  /** The next nonce of this seeder's EIP-3009 authorizations and Permit2 signatures. */
  private nextNonce(): bigint {
    return BigInt(0x402_0000 + this.nonceCounter.n++);
  }

  /** The facilitator's transaction of a step other than EIP-3009 or a funding. */
  private async facilitatorCall(step: Exclude<Step, { kind: 'eip3009' | 'fund' }>): Promise<FacilitatorCall> {
    switch (step.kind) {
      case 'exact':
        return this.calls.exact(step);
      case 'upto':
        return this.calls.upto(step);
      case 'deposit3009': {
        const channel = this.channel(step.channel);
        const call = await this.calls.deposit3009(channel, step.amount);
        channel.deposited += step.amount;
        return call;
      }
      case 'depositPermit2': {
        const channel = this.channel(step.channel);
        const call = await this.calls.depositPermit2(channel, step.amount, step.at, this.nextNonce());
        channel.deposited += step.amount;
        return call;
      }
      case 'claim':
        return this.calls.claim(this.channel(step.channel), step.channel, step.total);
      case 'settleChannel':
        return this.calls.settleChannel();
    }
  }

  private async send(step: Step): Promise<void> {
    let hash: Hash;
    if (step.kind === 'eip3009') {
      const nonce = `0x${this.nextNonce().toString(16).padStart(64, '0')}` as Hex;
      const sent = await sendSettlement(this.dep, {
        from: account(step.payer),
        to: address(step.seller),
        value: step.value,
        nonce,
        facilitator: this.facilitator,
      });
      hash = sent.hash;
    } else if (step.kind === 'fund') {
      const sent = await sendPlainTransfer(this.dep, {
        from: account(step.seller),
        to: address(step.payer),
        value: step.value,
      });
      hash = sent.hash;
    } else {
      hash = await this.dep.sender.send(this.facilitator, await this.facilitatorCall(step));
    }
    this.sent.push({ step, hash });
    this.transactions++;
  }

  /** What was mined, read back from the receipts (each must have succeeded). */
  summary(): Promise<X402DemoSummary> {
    return readX402Summary(this.dep, this.sent, this.channels);
  }
}

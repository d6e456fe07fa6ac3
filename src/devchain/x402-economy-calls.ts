/**
 * The facilitator's transactions for the demo's x402 scenarios (./x402-economy.ts sends them):
 * each built from the payload the official x402 client code of `@x402/evm` 2.27.0 makes (exact
 * and upto with Permit2, the batch-settlement client's channel id, deposit authorization and
 * vouchers), encoded against the proxies' and the batch contract's published ABIs. The official
 * facilitator is not used because it waits for each receipt, and the demo mines its history
 * block by block with automine off.
 */
import type { PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner, type ClientEvmSigner, type ExactPermit2Payload } from '@x402/evm';
import {
  computeChannelId,
  createBatchSettlementEIP3009DepositPayload,
  signVoucher,
} from '@x402/evm/batch-settlement/client';
import { ExactEvmScheme as ExactClient } from '@x402/evm/exact/client';
import { UptoEvmScheme as UptoClient } from '@x402/evm/upto/client';
import { encodeFunctionData, getAddress, type Hex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { batchSettlementAbi, exactProxyAbi, uptoProxyAbi, X402_CONTRACTS } from '../chain/x402.ts';
import type { SendRequest } from './tx.ts';
import {
  channelConfig,
  claimData,
  erc3009DepositData,
  permit2DepositData,
  type ChannelConfig,
} from './x402-batch-calls.ts';
import type { UsdcDeployment } from './usdc.ts';
import { account, address, DAY, NETWORK, type Actor, type Step } from './x402-economy-plan.ts';

/** A transaction for the facilitator to send. */
export type FacilitatorCall = Required<SendRequest>;

/** A channel of the scenarios: its configuration, id, and what its payer deposited so far. */
export interface Channel {
  config: ChannelConfig;
  id: Hex;
  deposited: bigint;
}

const WITHDRAW_DELAY = 900;
/** Far beyond the demo's history: Permit2 deadlines are checked against block time. */
export const DEADLINE_SECONDS = 10n * 365n * DAY;

/** The payer of channel `n` of the scenarios. */
export const channelPayer = (n: 1 | 2): Actor => (n === 1 ? 'channelPayer1' : 'channelPayer2');

/** A Permit2 authorization of the exact or upto client as the proxies' settle takes its permit. */
const permitOf = (auth: ExactPermit2Payload['permit2Authorization']) => ({
  permitted: { token: getAddress(auth.permitted.token), amount: BigInt(auth.permitted.amount) },
  nonce: BigInt(auth.nonce),
  deadline: BigInt(auth.deadline),
});

/** Channel `n` (1 or 2) of `channelSeller`, claimed for it by `facilitator`, before any deposit. */
export function newChannel(dep: UsdcDeployment, facilitator: LocalAccount, n: 1 | 2): Channel {
  const config = channelConfig({
    payer: address(channelPayer(n)),
    receiver: address('channelSeller'),
    facilitator: facilitator.address,
    token: dep.address,
    withdrawDelay: WITHDRAW_DELAY,
    salt: `0x${n.toString(16).padStart(64, '0')}`,
  });
  return { config, id: computeChannelId(config, NETWORK) as Hex, deposited: 0n };
}

/**
 * Builds the facilitator's transaction of each x402 step but EIP-3009 and the plain funding
 * transfer (which src/devchain/settle.ts sends), on one USDC deployment with one facilitator.
 */
export class FacilitatorCalls {
  constructor(
    private readonly dep: UsdcDeployment,
    private readonly facilitator: LocalAccount,
  ) {}

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

  private toBatch(data: Hex): FacilitatorCall {
    return { to: X402_CONTRACTS.batchSettlement, data, gas: 500_000n };
  }

  /** The exact proxy's settle of a Permit2 payment of the listed price. */
  async exact(step: Extract<Step, { kind: 'exact' }>): Promise<FacilitatorCall> {
    const accepted = this.requirements('exact', step.seller, step.value);
    const created = await new ExactClient(this.clientSigner(step.payer)).createPaymentPayload(2, accepted);
    const { permit2Authorization: auth, signature } = created.payload as unknown as ExactPermit2Payload;
    return {
      to: X402_CONTRACTS.exactProxy,
      gas: 300_000n,
      data: encodeFunctionData({
        abi: exactProxyAbi,
        functionName: 'settle',
        args: [
          permitOf(auth),
          getAddress(auth.from),
          { to: getAddress(auth.witness.to), validAfter: BigInt(auth.witness.validAfter) },
          signature as Hex,
        ],
      }),
    };
  }

  /** The upto proxy's settle: signed for up to `maximum`, charged `charged`. */
  async upto(step: Extract<Step, { kind: 'upto' }>): Promise<FacilitatorCall> {
    const accepted = this.requirements('upto', step.seller, step.maximum, {
      facilitatorAddress: getAddress(this.facilitator.address),
    });
    const created = await new UptoClient(this.clientSigner(step.payer)).createPaymentPayload(2, accepted);
    const { permit2Authorization: auth, signature } = created.payload as unknown as ExactPermit2Payload;
    return {
      to: X402_CONTRACTS.uptoProxy,
      gas: 300_000n,
      data: encodeFunctionData({
        abi: uptoProxyAbi,
        functionName: 'settle',
        args: [
          permitOf(auth),
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
    };
  }

  /** A deposit of `amount` into channel 1 through the EIP-3009 deposit collector. */
  async deposit3009(channel: Channel, amount: bigint): Promise<FacilitatorCall> {
    const accepted = this.requirements('batch-settlement', 'channelSeller', 1n);
    const created = await createBatchSettlementEIP3009DepositPayload(
      this.clientSigner('channelPayer1'),
      2,
      accepted,
      channel.config,
      amount.toString(),
      '0',
    );
    return this.toBatch(erc3009DepositData(channel.config, amount, created.payload));
  }

  /** A deposit of `amount` into channel 2 through the Permit2 deposit collector, signed with `nonce`. */
  async depositPermit2(channel: Channel, amount: bigint, at: bigint, nonce: bigint): Promise<FacilitatorCall> {
    const deadline = at + DEADLINE_SECONDS;
    return this.toBatch(
      await permit2DepositData(account('channelPayer2'), channel, {
        amount,
        nonce,
        deadline,
        chainId: this.dep.chainId,
      }),
    );
  }

  /** A claim up to `total` on a voucher of channel `n`'s payer for everything deposited so far. */
  async claim(channel: Channel, n: 1 | 2, total: bigint): Promise<FacilitatorCall> {
    const voucher = await signVoucher(
      this.clientSigner(channelPayer(n)),
      channel.id,
      channel.deposited.toString(),
      NETWORK,
    );
    return this.toBatch(claimData(channel.config, voucher, total));
  }

  /** The settle of `channelSeller`'s claimed USDC (a transfer from the contract: no payment). */
  settleChannel(): FacilitatorCall {
    return this.toBatch(
      encodeFunctionData({
        abi: batchSettlementAbi,
        functionName: 'settle',
        args: [getAddress(address('channelSeller')), getAddress(this.dep.address)],
      }),
    );
  }
}

import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { signVoucher } from '@x402/evm/batch-settlement/client';
import { createPermit2ApprovalTx } from '@x402/evm/exact/client';
import { toClientEvmSigner, toFacilitatorEvmSigner, type ClientEvmSigner, type FacilitatorEvmSigner } from '@x402/evm';
import {
  createWalletClient,
  encodeFunctionData,
  getAddress,
  http,
  parseEther,
  publicActions,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import {
  anvilAccount,
  batchSettlementAbi,
  channelConfig,
  claimData,
  permit2DepositData,
  deployUsdc,
  installX402Contracts,
  startAnvil,
  waitForReceipt,
  X402_CONTRACTS,
  type AnvilInstance,
  type ChannelConfig,
  type UsdcDeployment,
} from '../../src/devchain/index.ts';

/**
 * The anvil setup of the tests of method 3.0.0's streams (test/chain/x402-contracts.test.ts,
 * test/chain/x402-streams.test.ts, test/sync/x402-streams-sync.test.ts). Real: anvil, Circle's
 * USDC code (deployUsdc), the official `@x402/evm` 2.27.0 client and facilitator code. Stand-ins:
 * Permit2, the two proxies and the batch-settlement contract at their canonical addresses
 * (installX402Contracts; docs/x402-contracts.md).
 */

export const NETWORK = 'eip155:8453';

export type { ChannelConfig };
export type Channel = { config: ChannelConfig; id: Hex };

export const nowSeconds = (): bigint => BigInt(Math.floor(Date.now() / 1000));

export interface X402Anvil {
  anvil: AnvilInstance;
  dep: UsdcDeployment;
  facilitatorAccount: LocalAccount;
  facilitator: FacilitatorEvmSigner;
  clientSigner(account: LocalAccount): ClientEvmSigner;
  /** ETH for gas, and the one-time Permit2 approval of `token` (USDC by default). */
  approvePermit2(account: LocalAccount, token?: Address): Promise<void>;
  /** Permit2 payment requirements of `scheme` for `amount` micro-USDC to `payTo`. */
  requirements(
    scheme: 'exact' | 'upto',
    amount: bigint,
    payTo: Address,
    extra?: Record<string, unknown>,
  ): PaymentRequirements;
  /** A facilitator's settle result, checked, as its receipt. */
  settled(result: { success: boolean; transaction: string; errorReason?: string }): Promise<TransactionReceipt>;
  /** A channel of `payer` to `receiver` in `token`; the facilitator is the receiver's authorizer. */
  channel(payer: LocalAccount, token: Address, receiver: Address, salt: Hex): Channel;
  /** A deposit through the Permit2 deposit collector, signed by the payer. */
  depositThroughPermit2Collector(
    payer: LocalAccount,
    channel: Channel,
    amount: bigint,
    nonce: bigint,
  ): Promise<TransactionReceipt>;
  /** A claim of `total` claimed so far, on a voucher the payer signed with the official client, sent by the facilitator. */
  claim(payer: LocalAccount, channel: Channel, total: bigint): Promise<TransactionReceipt>;
  /** Refunds `amount` of a channel (sent by the facilitator). */
  refund(channel: Channel, amount: bigint): Promise<TransactionReceipt>;
}

/** The PaymentPayload the facilitator takes, from what the official client created. */
export function paymentPayload(
  accepted: PaymentRequirements,
  created: { x402Version: number; payload: Record<string, unknown>; extensions?: Record<string, unknown> },
): PaymentPayload {
  return {
    x402Version: created.x402Version,
    accepted,
    payload: created.payload,
    ...(created.extensions ? { extensions: created.extensions } : {}),
  } as PaymentPayload;
}

/**
 * Starts anvil (at `timestamp` when given), deploys USDC (after `before`, which may deploy other
 * tokens first: each deployment counts its accounts' nonces in its own TxSender), places the x402
 * stand-ins, and returns the helpers above. Stop it with `anvil.stop()`.
 */
export async function startX402Anvil(
  options: { timestamp?: bigint; before?: (anvil: AnvilInstance) => Promise<void> } = {},
): Promise<X402Anvil> {
  const anvil = await startAnvil(options.timestamp !== undefined ? { timestamp: options.timestamp } : {});
  await options.before?.(anvil);
  const dep = await deployUsdc(anvil.url);
  await installX402Contracts(dep.clients);
  const read = () => dep.clients.public;
  const facilitatorAccount = anvilAccount(9);
  const wallet = createWalletClient({
    account: facilitatorAccount,
    chain: dep.clients.chain,
    transport: http(anvil.url),
    pollingInterval: 20,
  }).extend(publicActions);
  // A viem wallet + public client as the facilitator signer the x402 docs describe.
  const facilitator = toFacilitatorEvmSigner({
    address: facilitatorAccount.address,
    readContract: (args) => wallet.readContract(args as never),
    verifyTypedData: (args) => wallet.verifyTypedData(args as never),
    writeContract: (args) => wallet.writeContract(args as never),
    sendTransaction: (args) => wallet.sendTransaction(args),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
    getCode: (args) => wallet.getCode(args),
  });
  const clientSigner = (account: LocalAccount): ClientEvmSigner =>
    toClientEvmSigner(account, { readContract: (args) => read().readContract(args as never) });
  // The facilitator account also sends through the facilitator signer's wallet (its own nonces)
  // and the USDC helpers: the counted nonces are read again from the node before each send.
  const sendBatchContract = async (data: Hex) => {
    dep.sender.resetNonces();
    return waitForReceipt(
      read(),
      await dep.sender.send(facilitatorAccount, { to: X402_CONTRACTS.batchSettlement, data, gas: 600_000n }),
    );
  };
  return {
    anvil,
    dep,
    facilitatorAccount,
    facilitator,
    clientSigner,
    async approvePermit2(account, token = dep.address) {
      await dep.clients.test.setBalance({ address: account.address, value: parseEther('1') });
      const tx = createPermit2ApprovalTx(token);
      await waitForReceipt(read(), await dep.sender.send(account, { to: tx.to, data: tx.data, gas: 100_000n }));
    },
    requirements(scheme, amount, payTo, extra = {}) {
      return {
        scheme,
        network: NETWORK,
        asset: getAddress(dep.address),
        amount: amount.toString(),
        payTo: getAddress(payTo),
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'permit2', ...extra },
      };
    },
    async settled(result) {
      if (!result.success) throw new Error(`settlement failed: ${result.errorReason}`);
      return waitForReceipt(read(), result.transaction as Hex);
    },
    channel(payer, token, receiver, salt) {
      const config = channelConfig({
        payer: payer.address,
        receiver,
        facilitator: facilitatorAccount.address,
        token,
        withdrawDelay: 900,
        salt,
      });
      return { config, id: computeChannelId(config, NETWORK).toLowerCase() as Hex };
    },
    async depositThroughPermit2Collector(payer, channel, amount, nonce) {
      // The deadline is checked on chain against the block's time, which may run behind the clock.
      const deadline = nowSeconds() + 600n;
      return sendBatchContract(await permit2DepositData(payer, channel, { amount, nonce, deadline, chainId: 8453 }));
    },
    async claim(payer, channel, total) {
      const voucher = await signVoucher(clientSigner(payer), channel.id, total.toString(), NETWORK);
      return sendBatchContract(claimData(channel.config, voucher, total));
    },
    refund(channel, amount) {
      return sendBatchContract(
        encodeFunctionData({ abi: batchSettlementAbi, functionName: 'refund', args: [channel.config, amount] }),
      );
    },
  };
}

/**
 * The call data of the batch-settlement contract that a facilitator sends: a channel's
 * configuration, a deposit through either deposit collector, and a claim on a voucher, encoded
 * against the contract's published ABI from what the official `@x402/evm` 2.27.0 client code
 * signs. Used by the demo's scenarios (./x402-economy-calls.ts) and by the tests that pay through
 * the stand-ins (test/helpers/x402-anvil.ts, test/chain/x402-contracts.test.ts).
 */
import type { BatchSettlementDepositPayload } from '@x402/evm';
import { encodeAbiParameters, encodeFunctionData, getAddress, type Address, type Hex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { batchSettlementAbi, X402_CONTRACTS } from '../chain/x402.ts';
import { PERMIT2_DEPOSIT_WITNESS_TYPES } from './x402-contracts.ts';

/** A batch-settlement channel's configuration, checksummed as the contract and the official client take it. */
export interface ChannelConfig {
  payer: Address;
  payerAuthorizer: Address;
  receiver: Address;
  receiverAuthorizer: Address;
  token: Address;
  withdrawDelay: number;
  salt: Hex;
}

const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000';

/**
 * The configuration of a channel of `payer` to `receiver` in `token`, with no payer authorizer:
 * the facilitator claims for the seller, so Claimed.sender is it, never the payer.
 */
export function channelConfig(c: {
  payer: Address;
  receiver: Address;
  facilitator: Address;
  token: Address;
  withdrawDelay: number;
  salt: Hex;
}): ChannelConfig {
  return {
    payer: getAddress(c.payer),
    payerAuthorizer: ZERO_ADDRESS,
    receiver: getAddress(c.receiver),
    receiverAuthorizer: getAddress(c.facilitator),
    token: getAddress(c.token),
    withdrawDelay: c.withdrawDelay,
    salt: c.salt,
  };
}

/** A deposit of `amount` through the ERC-3009 deposit collector, from the batch-settlement client's deposit payload. */
export function erc3009DepositData(config: ChannelConfig, amount: bigint, payload: unknown): Hex {
  const authorization = (payload as BatchSettlementDepositPayload).deposit.authorization.erc3009Authorization!;
  const collectorData = encodeAbiParameters(
    [{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
    [
      BigInt(authorization.validAfter),
      BigInt(authorization.validBefore),
      BigInt(authorization.salt),
      authorization.signature as Hex,
    ],
  );
  return encodeFunctionData({
    abi: batchSettlementAbi,
    functionName: 'deposit',
    args: [config, amount, X402_CONTRACTS.erc3009DepositCollector, collectorData],
  });
}

/**
 * A deposit of `amount` through the Permit2 deposit collector, signed by the channel's `payer`
 * (Permit2's PermitWitnessTransferFrom with the collector's witness, on chain `chainId`).
 */
export async function permit2DepositData(
  payer: LocalAccount,
  channel: { config: ChannelConfig; id: Hex },
  deposit: { amount: bigint; nonce: bigint; deadline: bigint; chainId: number },
): Promise<Hex> {
  const { amount, nonce, deadline } = deposit;
  const signature = await payer.signTypedData({
    domain: { name: 'Permit2', chainId: deposit.chainId, verifyingContract: getAddress(X402_CONTRACTS.permit2) },
    types: PERMIT2_DEPOSIT_WITNESS_TYPES,
    primaryType: 'PermitWitnessTransferFrom',
    message: {
      permitted: { token: channel.config.token, amount },
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
  return encodeFunctionData({
    abi: batchSettlementAbi,
    functionName: 'deposit',
    args: [channel.config, amount, X402_CONTRACTS.permit2DepositCollector, collectorData],
  });
}

/** A claim of `total` claimed so far on a voucher the payer signed (the batch-settlement client's signVoucher). */
export function claimData(
  config: ChannelConfig,
  voucher: { maxClaimableAmount: string; signature: string },
  total: bigint,
): Hex {
  return encodeFunctionData({
    abi: batchSettlementAbi,
    functionName: 'claim',
    args: [
      [
        {
          voucher: { channel: config, maxClaimableAmount: BigInt(voucher.maxClaimableAmount) },
          signature: voucher.signature as Hex,
          totalClaimed: total,
        },
      ],
    ],
  });
}

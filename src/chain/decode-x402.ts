import { decodeEventLog } from 'viem';
import { topicAddress } from './events.ts';
import { InvalidResponseError } from './errors.ts';
import type { RpcLog } from './rpc-schema.ts';
import type { Hex } from './types.ts';
import { batchSettlementAbi, X402_TOPIC0 } from './x402.ts';

// The batch contract's logs are few (one per claim or channel, not per request): they are decoded
// with viem's decodeEventLog and the repository's ABI, which also checks the data's shape.
// Callers validate first (validateLogs: address, topic0, topic count, data length, removed flag).

/** Where a log sits: its block (number and hash), transaction and index. */
export interface LogPosition {
  blockNumber: bigint;
  blockHash: Hex;
  txHash: Hex;
  logIndex: number;
}

/** `Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)`. */
export interface ClaimedLog extends LogPosition {
  channelId: Hex;
  /** Whoever submitted the claim (the receiver, its authorizer, anyone): never the payer by rule. */
  sender: Hex;
  claimAmount: bigint;
  newTotalClaimed: bigint;
}

/** The batch contract's `ChannelConfig`, in the repository's field order. */
export interface ChannelConfig {
  payer: Hex;
  payerAuthorizer: Hex;
  receiver: Hex;
  receiverAuthorizer: Hex;
  token: Hex;
  withdrawDelay: number;
  salt: Hex;
}

/** `ChannelCreated(bytes32 indexed channelId, ChannelConfig config)`. */
export interface ChannelCreatedLog extends LogPosition {
  channelId: Hex;
  config: ChannelConfig;
}

export function positionOf(log: RpcLog): LogPosition {
  return {
    blockNumber: BigInt(log.blockNumber),
    blockHash: log.blockHash.toLowerCase() as Hex,
    txHash: log.transactionHash.toLowerCase() as Hex,
    logIndex: Number(log.logIndex),
  };
}

function decodeBatch(log: RpcLog) {
  try {
    return decodeEventLog({ abi: batchSettlementAbi, data: log.data as Hex, topics: log.topics as [Hex, ...Hex[]] });
  } catch (error) {
    throw new InvalidResponseError('a batch-settlement log does not decode with its ABI', {
      tx: log.transactionHash,
      logIndex: log.logIndex,
      reason: error instanceof Error ? error.message.split('\n')[0] : String(error),
    });
  }
}

const lower = (a: string): Hex => a.toLowerCase() as Hex;

/** A `Claimed` log of the batch contract (selected by its address and topic0 `0x36bd546b…`). */
export function decodeClaimed(log: RpcLog): ClaimedLog {
  const decoded = decodeBatch(log);
  if (decoded.eventName !== 'Claimed' || log.topics[0]!.toLowerCase() !== X402_TOPIC0.batchClaimed)
    throw new InvalidResponseError('expected a Claimed log', { tx: log.transactionHash });
  // The indexed sender's topic must be a zero-padded address (decodeEventLog keeps the low 20 bytes).
  if (topicAddress(log.topics[2]!) === undefined)
    throw new InvalidResponseError('indexed address topic with non-zero padding', { tx: log.transactionHash });
  const { channelId, sender, claimAmount, newTotalClaimed } = decoded.args;
  return { ...positionOf(log), channelId: lower(channelId), sender: lower(sender), claimAmount, newTotalClaimed };
}

/** A `ChannelCreated` log of the batch contract (topic0 `0x69d8248d…`), with its config. */
export function decodeChannelCreated(log: RpcLog): ChannelCreatedLog {
  const decoded = decodeBatch(log);
  if (decoded.eventName !== 'ChannelCreated' || log.topics[0]!.toLowerCase() !== X402_TOPIC0.batchChannelCreated)
    throw new InvalidResponseError('expected a ChannelCreated log', { tx: log.transactionHash });
  const { channelId, config } = decoded.args;
  return {
    ...positionOf(log),
    channelId: lower(channelId),
    config: {
      payer: lower(config.payer),
      payerAuthorizer: lower(config.payerAuthorizer),
      receiver: lower(config.receiver),
      receiverAuthorizer: lower(config.receiverAuthorizer),
      token: lower(config.token),
      withdrawDelay: config.withdrawDelay,
      salt: lower(config.salt),
    },
  };
}

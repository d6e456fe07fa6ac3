import { InvalidResponseError } from './errors.ts';
import { topicAddress } from './events.ts';
import type { RpcLog } from './rpc-schema.ts';
import type { AuthorizationLog, Hex, TransferLog } from './types.ts';

// Decoded from topics and data directly: measured 3.5x faster than viem's event decoding with a
// 500-address args filter on the hot path. Callers validate first (validateLogs).

function indexedAddress(log: RpcLog, i: number): Hex {
  const a = topicAddress(log.topics[i]!);
  if (a === undefined)
    throw new InvalidResponseError('indexed address topic with non-zero padding', { tx: log.transactionHash });
  return a;
}

/** `Transfer(address indexed from, address indexed to, uint256 value)`: topic1, topic2, data. */
export function decodeTransfer(log: RpcLog): TransferLog {
  return {
    txHash: log.transactionHash.toLowerCase() as Hex,
    logIndex: Number(log.logIndex),
    blockHash: log.blockHash.toLowerCase() as Hex,
    blockNumber: BigInt(log.blockNumber),
    blockTimestamp: log.blockTimestamp === undefined ? undefined : BigInt(log.blockTimestamp),
    from: indexedAddress(log, 1),
    to: indexedAddress(log, 2),
    value: BigInt(log.data),
  };
}

/** `AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)`: topic1, topic2. */
export function decodeAuthorization(log: RpcLog): AuthorizationLog {
  return {
    txHash: log.transactionHash.toLowerCase() as Hex,
    logIndex: Number(log.logIndex),
    blockHash: log.blockHash.toLowerCase() as Hex,
    blockNumber: BigInt(log.blockNumber),
    blockTimestamp: log.blockTimestamp === undefined ? undefined : BigInt(log.blockTimestamp),
    authorizer: indexedAddress(log, 1),
    nonce: log.topics[2]!.toLowerCase() as Hex,
  };
}

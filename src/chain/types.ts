/** Plain records the chain stage returns; hashes and addresses are lowercase 0x hex. */

export type Hex = `0x${string}`;

/** A USDC `Transfer(from, to, value)` log. `value` in micro-USDC. */
export interface TransferLog {
  txHash: Hex;
  logIndex: number;
  blockHash: Hex;
  blockNumber: bigint;
  /** Unix seconds, when the provider sent `blockTimestamp` with the log. */
  blockTimestamp?: bigint | undefined;
  from: Hex;
  to: Hex;
  value: bigint;
}

/** A USDC `AuthorizationUsed(authorizer, nonce)` log (EIP-3009). */
export interface AuthorizationLog {
  txHash: Hex;
  logIndex: number;
  blockHash: Hex;
  blockNumber: bigint;
  blockTimestamp?: bigint | undefined;
  authorizer: Hex;
  nonce: Hex;
}

/** A block header: number, hash, parent hash, timestamp (unix seconds). */
export interface BlockHeader {
  number: bigint;
  hash: Hex;
  parentHash: Hex;
  timestamp: bigint;
}

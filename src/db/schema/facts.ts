import type { Generated } from 'kysely';
import type { Bytes, Int8 } from './columns.ts';

/**
 * The chain facts the sync stores (addresses, block versions, USDC transfers, method 3.0.0's
 * streams) with their coverage, the old layout's view of transfers, and the x402 contracts.
 * Part of the row types of src/db/schema.ts (the Schema interface assembles them).
 */

/** One address of the facts, once (migration 0025); ids are never reused. */
export interface AddressesTable {
  address_id: Generated<number>;
  /** 20 bytes. */
  address: Bytes;
}

/**
 * One row while an address prune is due: fact partitions were dropped and the addresses only they
 * named may still be stored (migration 0049, src/publish/prune.ts).
 */
export interface AddressPruneDueTable {
  due: Generated<boolean>;
  since: Generated<Date>;
}

/**
 * One block version: a block as stored by one run, carrying visibility (migration 0025). Its
 * number is block_id >> 20 (its column went in migration 0051); its seqs are int4 since then.
 */
export interface BlocksTable {
  /** block_number * 2^20 + version. */
  block_id: Int8;
  block_timestamp: Int8;
  added_seq: number;
  removed_seq: number | null;
  /** 32 bytes. */
  block_hash: Bytes;
}

/** One USDC Transfer paying a seller, its authorization folded in (migration 0025). */
export interface TransfersTable {
  /** Micro-USDC, below 2^63. */
  value: Int8;
  block_id: Int8;
  log_index: number;
  from_id: number;
  to_id: number;
  pair_log_index: number | null;
  /** 0 unpaired, 1 eip3009 (an AuthorizationUsed by `from`, rule 3), 2 permit2_exact, 3 permit2_upto (migration 0029). */
  class: number;
  tx_hash: Bytes;
}

/** One batch-settlement channel's configuration, once per channel (migration 0029). */
export interface BatchChannelsTable {
  withdraw_delay: Int8;
  channel_id: Generated<number>;
  payer_id: number;
  payer_authorizer_id: number;
  receiver_id: number;
  receiver_authorizer_id: number;
  token_id: number;
  /** The 32-byte channelId. */
  channel: Bytes;
  salt: Bytes;
}

/** Every ChannelCreated log of the batch contract since its deployment, own visibility (migration 0029). */
export interface BatchChannelCreatedTable {
  block_number: Int8;
  added_seq: Int8;
  removed_seq: Int8 | null;
  log_index: number;
  channel_id: number;
  tx_hash: Bytes;
  block_hash: Bytes;
}

/** One Claimed log (claimAmount > 0) of a USDC channel: a batch_settlement payment (migration 0029). */
export interface BatchClaimsTable {
  value: Int8;
  block_id: Int8;
  log_index: number;
  channel_id: number;
  /** The channel config's payer. */
  from_id: number;
  /** The channel config's receiver. */
  to_id: number;
  tx_hash: Bytes;
}

/** One USDC Transfer from a seller, own block and visibility (migration 0029). */
export interface SellerOutgoingTable {
  value: Int8;
  block_number: Int8;
  block_timestamp: Int8;
  added_seq: Int8;
  removed_seq: Int8 | null;
  log_index: number;
  from_id: number;
  to_id: number;
  tx_hash: Bytes;
  block_hash: Bytes;
}

/** The view of every stored transfer in the old layout's text forms (migration 0026). */
export interface TransferFactsView {
  tx_hash: string;
  log_index: number;
  block_hash: string;
  block_number: bigint;
  block_timestamp: bigint;
  from_address: string;
  to_address: string;
  value: bigint;
  added_seq: bigint;
  removed_seq: bigint | null;
  /** Rule 3: paired with an AuthorizationUsed by `from_address` (class 1). */
  authorized: boolean;
  block_id: bigint;
  from_id: number;
  to_id: number;
}

export interface SellerCoverageTable {
  seller_address: string;
  from_block: Int8;
  from_ts: Int8;
  to_block: Int8;
}

/** The x402 contracts that are never a seller under method 3.x (migration 0035): one row each. */
export interface X402InfrastructureTable {
  address: string;
  contract: string;
}

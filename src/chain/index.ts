/**
 * The chain stage: speaks JSON-RPC through viem, returns plain records. Never touches the
 * database (src/sync stores what this returns).
 */
export { createChainClient, type ChainClient, type ChainClientOptions, type RequestOptions } from './client.ts';
export { resolveAsOf, type AsOf } from './as-of.ts';
export { getBlockHeader, getCanonicalHeader, findFirstBlockAtOrAfter, type BlockRef } from './blocks.ts';
export { BlockCache } from './block-cache.ts';
export { getLogsAdaptive, type RangeLimit, type LogsContext, type LogsQuery } from './get-logs.ts';
export { fetchPaymentLogs, type PaymentLogs, type PaymentLogsRequest, type BlockRecord } from './fetch-payment-logs.ts';
export { decodeTransfer, decodeAuthorization } from './decode.ts';
export {
  fetchProxySettlements,
  fetchClaims,
  fetchChannelsCreated,
  fetchSellerOutgoing,
  type ProxySettlements,
  type ProxySettlementsRequest,
  type BatchLogsRequest,
  type SellerOutgoingRequest,
} from './fetch-x402-streams.ts';
export { pairWithReceipt, receiptLogs, type ProxySettlement, type PairedTransfer } from './pair-receipts.ts';
export {
  decodeClaimed,
  decodeChannelCreated,
  type ClaimedLog,
  type ChannelCreatedLog,
  type ChannelConfig,
  type LogPosition,
} from './decode-x402.ts';
export {
  X402_CONTRACTS,
  X402_TOPIC0,
  PERMIT2_DEPOSIT_COLLECTOR_ADDRESS,
  batchSettlementAbi,
  exactProxyAbi,
  uptoProxyAbi,
  type X402ContractKey,
} from './x402.ts';
export { validateLogs, type LogExpectation } from './validate-logs.ts';
export { TRANSFER_TOPIC, AUTHORIZATION_USED_TOPIC, addressTopic, topicAddress } from './events.ts';
export { InvalidResponseError, RangeTooLargeError, shouldRetry, retryAfterMs } from './errors.ts';
export type { TransferLog, AuthorizationLog, BlockHeader, Hex } from './types.ts';

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
export { validateLogs, type LogExpectation } from './validate-logs.ts';
export { TRANSFER_TOPIC, AUTHORIZATION_USED_TOPIC, addressTopic, topicAddress } from './events.ts';
export { InvalidResponseError, RangeTooLargeError, shouldRetry, retryAfterMs, describeError } from './errors.ts';
export type { TransferLog, AuthorizationLog, BlockHeader, Hex } from './types.ts';

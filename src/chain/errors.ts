import { getLogsRetryHelper } from '@ponder/utils';
import { BaseError, HttpRequestError, ResponseBodyTooLargeError, RpcRequestError, TimeoutError, type Hex } from 'viem';
import { isRetryableStatus, parseRetryAfter } from '../lib/retry.ts';
import { UnsupportedProtocolError } from './node-fetch.ts';
import { TallyError } from '../lib/errors.ts';

/**
 * A response that contradicts itself or the request (a null result, a log outside the requested
 * range or of another address, duplicate log positions, a block hash that disagrees with the
 * block). The node may answer correctly next time, so the retry layer retries it.
 */
export class InvalidResponseError extends TallyError {
  declare readonly details: Record<string, unknown>;

  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { details });
    this.name = 'InvalidResponseError';
  }
}

/**
 * The provider refused an eth_getLogs because the block range (or the result) is too large.
 * Not retried as is: the caller splits the range. `maxSpan` is the number of blocks per request
 * the provider suggested, when it said so.
 */
export class RangeTooLargeError extends TallyError {
  constructor(
    readonly maxSpan: bigint | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'RangeTooLargeError';
  }
}

/** The HTTP status of an error from the viem transport, when the node answered at all. */
export function httpStatus(error: unknown): number | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const found = error.walk(
    (e) => (e instanceof HttpRequestError || e instanceof RpcRequestError) && e.status !== undefined,
  ) as HttpRequestError | RpcRequestError | null;
  return found?.status;
}

/** The JSON-RPC error code, when the node answered with a JSON-RPC error. */
export function rpcCode(error: unknown): number | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const found = error.walk((e) => typeof (e as { code?: unknown }).code === 'number') as { code?: number } | null;
  return found?.code;
}

/**
 * Milliseconds the server asked us to wait (its Retry-After header, read by src/lib/retry.ts), or
 * undefined. The client gives up (temporary failure) on a wait over MAX_RETRY_AFTER_MS.
 */
export function retryAfterMs(error: unknown, now = Date.now()): number | undefined {
  if (!(error instanceof BaseError)) return undefined;
  // A JSON-RPC error body sent with a non-2xx status arrives as RpcRequestError, with headers.
  const found = error.walk(
    (e) => (e instanceof HttpRequestError || e instanceof RpcRequestError) && e.headers !== undefined,
  ) as HttpRequestError | RpcRequestError | null;
  return parseRetryAfter(found?.headers?.get('retry-after'), now) ?? undefined;
}

// Texts providers use when a getLogs range or result is too large and that getLogsRetryHelper
// does not recognise; iterateLogs-style halving handles them.
const RANGE_TEXT =
  /block range|range (is )?too (large|wide|big)|too many (blocks|results|logs)|more than \d+ (results|logs)|response size|exceeds? (the )?(max|limit)/i;

/**
 * Whether a failed eth_getLogs asked for a smaller range; returns the error to throw instead
 * (with the provider's suggested span when it gave one), or undefined when it is another error.
 */
export function asRangeError(
  error: unknown,
  params: { fromBlock: Hex; toBlock: Hex; address?: Hex; topics?: unknown[] },
): RangeTooLargeError | undefined {
  if (!(error instanceof BaseError)) return undefined;
  // An answer over the size limit (src/chain/node-fetch.ts): a smaller range gives a smaller one.
  if (error.walk((e) => e instanceof ResponseBodyTooLargeError))
    return new RangeTooLargeError(undefined, 'the answer exceeded the size limit');
  const rpc = error.walk((e) => e instanceof RpcRequestError || typeof (e as { code?: unknown }).code === 'number');
  if (!rpc) return undefined;
  const helped = getLogsRetryHelper({ error: rpc as never, params: [params as never] });
  const text = `${error.shortMessage} ${error.details ?? ''}`;
  if (helped.shouldRetry) {
    const first = helped.ranges[0];
    const span = first ? BigInt(first.toBlock) - BigInt(first.fromBlock) + 1n : undefined;
    return new RangeTooLargeError(span, 'provider refused the block range');
  }
  if (RANGE_TEXT.test(text)) return new RangeTooLargeError(undefined, 'provider refused the block range');
  return undefined;
}

/**
 * Whether a failed request may succeed when sent again (to this node later, or to the next URL).
 * Pure: looks only at the error. Timeouts, network failures, the statuses of isRetryableStatus
 * (src/lib/retry.ts: 408/425/429/5xx), JSON-RPC internal and
 * rate-limit errors and self-contradicting responses are retried; anything else (invalid params,
 * unknown method, a 4xx) would fail again and is not.
 */
export function shouldRetry(error: unknown): boolean {
  if (error instanceof InvalidResponseError) return true;
  if (error instanceof RangeTooLargeError) return false;
  if (!(error instanceof BaseError)) return false;
  // A URL the transport cannot serve stays so (viem wraps the fetch error as an HttpRequestError).
  if (error.walk((e) => e instanceof UnsupportedProtocolError)) return false;
  if (error.walk((e) => e instanceof ResponseBodyTooLargeError)) return false;
  if (error.walk((e) => e instanceof TimeoutError)) return true;
  const status = httpStatus(error);
  if (status !== undefined) return isRetryableStatus(status);
  const code = rpcCode(error);
  if (code === undefined) return error.walk((e) => e instanceof HttpRequestError) !== null; // no answer: network
  // -1 unknown, -32603 internal, -32000 generic server error, -32005/-32007/429 rate limits.
  return code === -1 || code === -32603 || code === -32000 || code === -32005 || code === -32007 || code === 429;
}

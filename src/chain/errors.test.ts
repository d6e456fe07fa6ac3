import { getLogsRetryHelper } from '@ponder/utils';
import { HttpRequestError, RpcRequestError, TimeoutError } from 'viem';
import { describeError } from '../lib/errors.ts';
import { describe, expect, it } from 'vitest';
import { asRangeError, InvalidResponseError, RangeTooLargeError, retryAfterMs, shouldRetry } from './errors.ts';

const url = 'https://base-mainnet.g.alchemy.com/v2/SECRETKEY123';
const http = (status: number, headers: Record<string, string> = {}) =>
  new HttpRequestError({ url, status, headers: new Headers(headers), details: 'x' });
const rpc = (code: number, message: string) => new RpcRequestError({ url, body: {}, error: { code, message } });
const params = { fromBlock: '0x0' as const, toBlock: '0x270f' as const };

describe('shouldRetry', () => {
  it.each([
    ['429', http(429), true],
    ['503', http(503), true],
    ['408', http(408), true],
    ['425', http(425), true],
    ['400', http(400), false],
    ['401', http(401), false],
    ['timeout', new TimeoutError({ body: {}, url }), true],
    ['network failure', new HttpRequestError({ url, details: 'fetch failed' }), true],
    ['internal error', rpc(-32603, 'internal error'), true],
    ['invalid params', rpc(-32602, 'invalid argument 0'), false],
    ['method not found', rpc(-32601, 'method not found'), false],
    ['inconsistent response', new InvalidResponseError('x'), true],
    ['range too large', new RangeTooLargeError(undefined, 'x'), false],
    ['a bug', new TypeError('x'), false],
  ])('args: %s', (_name, error, expected) => {
    expect(shouldRetry(error)).toBe(expected);
  });
});

describe('retryAfterMs', () => {
  it('default: seconds', () => {
    expect(retryAfterMs(http(429, { 'Retry-After': '3' }))).toBe(3000);
  });
  it('args: an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs(http(429, { 'Retry-After': 'Wed, 01 Jan 2025 00:00:07 GMT' }), now)).toBe(7000);
  });
  it('args: not capped here: the client gives up on a wait over MAX_RETRY_AFTER_MS', () => {
    expect(retryAfterMs(http(429, { 'Retry-After': '86400' }))).toBe(86_400_000);
  });
  it('args: absent or garbage', () => {
    expect(retryAfterMs(http(429))).toBeUndefined();
    expect(retryAfterMs(http(429, { 'Retry-After': 'soon' }))).toBeUndefined();
  });
});

describe('asRangeError', () => {
  it('default: a message getLogsRetryHelper knows gives its suggested span', () => {
    const error = rpc(-32602, 'query exceeds max block range 2000');
    const helped = getLogsRetryHelper({ error: error as never, params: [params] });
    const first = helped.ranges![0]!;
    const result = asRangeError(error, params);
    expect(result).toBeInstanceOf(RangeTooLargeError);
    expect(result!.maxSpan).toBe(BigInt(first.toBlock) - BigInt(first.fromBlock) + 1n);
  });
  it('behavior: an unknown range message halves (no span)', () => {
    const result = asRangeError(rpc(-32000, 'block range is too large for this node'), params);
    expect(result?.maxSpan).toBeUndefined();
    expect(result).toBeInstanceOf(RangeTooLargeError);
  });
  it('behavior: other errors are not range errors', () => {
    expect(asRangeError(rpc(-32603, 'internal error'), params)).toBeUndefined();
    expect(asRangeError(http(429), params)).toBeUndefined();
  });
});

describe('describeError', () => {
  it('behavior: never shows the URL beyond its host', () => {
    const text = describeError(http(500), { urls: [url], maxChars: 300 });
    expect(text).not.toContain('SECRETKEY123');
    expect(describeError(new Error(`failed at ${url}`), { urls: [] })).not.toContain('SECRETKEY123');
  });
});

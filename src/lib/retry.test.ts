import { describe, expect, it } from 'vitest';
import { isRetryableStatus, parseRetryAfter, sleep } from './retry.ts';

describe('parseRetryAfter', () => {
  it('args: delta-seconds, whole or decimal, and an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(' 1.5 ')).toBe(1500);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:10 GMT', Date.UTC(2025, 11, 31, 0, 0, 0))).toBe(10_000);
    // a date already past is no wait
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:10 GMT', Date.UTC(2026, 0, 1))).toBe(0);
  });
  it('error: absent, empty or unreadable is null', () => {
    for (const value of [null, undefined, '', '  ', 'soon', '-3', '1e3'])
      expect(parseRetryAfter(value), String(value)).toBeNull();
  });
});

describe('isRetryableStatus', () => {
  it('default: 408, 425, 429 and 5xx are worth another attempt; other 4xx are not', () => {
    const retried = [400, 401, 403, 404, 408, 410, 425, 429, 500, 502, 503, 504].filter(isRetryableStatus);
    expect(retried).toEqual([408, 425, 429, 500, 502, 503, 504]);
  });
});

describe('sleep', () => {
  it('behavior: an abort ends the wait at once with the signal reason', async () => {
    const stop = new AbortController();
    const waiting = sleep(3_600_000, stop.signal);
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    await expect(sleep(1, stop.signal)).rejects.toThrow('stopped');
  });
  it('default: resolves after the time without a signal', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
  });
});

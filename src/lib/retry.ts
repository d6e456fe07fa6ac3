/**
 * The one retry policy of every outside read: the catalog's HTTP GETs (src/catalog/http.ts) and
 * the JSON-RPC requests (src/chain/client.ts) decide with these what is worth another attempt,
 * how long a server may ask them to wait, and how they wait.
 */

/**
 * The longest Retry-After a read waits for. A server asking for more is answered with a
 * temporary failure (exit 75): the next scheduled run comes sooner than that wait would end,
 * and a run parked for minutes holds the run lock for nothing.
 */
export const MAX_RETRY_AFTER_MS = 120_000;

/**
 * HTTP statuses worth another attempt: request timeout (408), too early (425, RFC 8470), rate
 * limited (429) and every server-side failure (5xx). Any other 4xx would fail the same way again.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/**
 * A Retry-After header as milliseconds from `now`: delta-seconds (RFC 9110 says a whole number;
 * a decimal such as `1.5`, which some providers send, is read too) or an HTTP date (a date past
 * is 0). Null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP date names its month (`Wed, 31 Dec 2025 00:00:10 GMT`); Date.parse alone would read `-3` as a year.
  const at = /[A-Za-z]/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it is aborted (a stopped run does not sleep on). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

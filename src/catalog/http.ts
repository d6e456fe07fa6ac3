import { redactUrl } from '../lib/redact.ts';
import { TallyError, TemporaryError } from '../lib/errors.ts';
import { silentLogger, type Logger } from '../lib/log.ts';
import { isRetryableStatus, MAX_RETRY_AFTER_MS, parseRetryAfter, sleep as abortableSleep } from '../lib/retry.ts';

/** How one HTTP GET of a catalog page is retried. */
export interface RetryOptions {
  log?: Logger;
  fetch?: typeof fetch;
  /** Per-attempt timeout in ms (default 30,000). */
  timeoutMs?: number;
  /** Attempts per page, including the first (default 5). */
  maxAttempts?: number;
  /** First backoff delay in ms, doubled each attempt up to 30 s (default 1,000). */
  retryBaseMs?: number;
  /** A Retry-After longer than this (ms) is not waited for: the read fails temporarily (default MAX_RETRY_AFTER_MS). */
  maxRetryAfterMs?: number;
  /** Stops the waits between attempts (and the attempt in flight). */
  signal?: AbortSignal;
  /** Injected for tests; default an abortable setTimeout (src/lib/retry.ts). */
  sleep?: (ms: number) => Promise<void>;
}

/** A failed attempt: whether another attempt may succeed, and how long the server asked to wait. */
interface AttemptFailure {
  retryable: boolean;
  retryAfterMs: number | null;
  message: string;
  status?: number;
  cause?: unknown;
}

/**
 * GETs a URL and parses its JSON body, retrying network errors, timeouts, 408/425/429/5xx and
 * unparseable bodies with exponential backoff (a Retry-After header wins over the backoff).
 * Throws TemporaryError when the attempts run out (exit 75) and TallyError for an answer that
 * will not change by retrying (another 4xx). Errors and logs show the URL redacted. Read-only.
 */
export async function getJsonWithRetry(url: string, options: RetryOptions = {}): Promise<unknown> {
  const log = options.log ?? silentLogger;
  const doFetch = options.fetch ?? fetch;
  const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const baseMs = options.retryBaseMs ?? 1_000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS;
  const sleep = options.sleep ?? ((ms: number) => abortableSleep(ms, options.signal));
  const shown = redactUrl(url);

  let last: AttemptFailure | undefined;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const outcome = await attemptOnce(doFetch, url, timeoutMs, options.signal);
    if (outcome.ok) return outcome.body;
    last = outcome.failure;
    if (!last.retryable) {
      throw new TallyError(`catalog source ${shown} answered ${last.message}: check CATALOG_SOURCE`, {
        details: { source: shown, status: last.status },
        cause: last.cause,
      });
    }
    if (attempt === maxAttempts) break;
    if (last.retryAfterMs !== null && last.retryAfterMs > maxRetryAfterMs) break;
    const delay = last.retryAfterMs ?? Math.min(baseMs * 2 ** (attempt - 1), 30_000);
    log.warn(
      { source: shown, attempt, status: last.status, delayMs: delay, problem: last.message },
      'catalog fetch retry',
    );
    await sleep(delay);
  }
  throw new TemporaryError(`catalog source ${shown} is unreachable (${last?.message}); run again later`, {
    details: { source: shown, status: last?.status, attempts: maxAttempts },
    cause: last?.cause,
  });
}

async function attemptOnce(
  doFetch: typeof fetch,
  url: string,
  timeoutMs: number,
  stop: AbortSignal | undefined,
): Promise<{ ok: true; body: unknown } | { ok: false; failure: AttemptFailure }> {
  let response: Response;
  let text: string;
  try {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
    response = await doFetch(url, { signal, headers: { accept: 'application/json' } });
    // The body is read inside the same try: a connection dropped mid-body is a network failure.
    text = await response.text();
  } catch (error) {
    stop?.throwIfAborted(); // stopped, not failed: no retry
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    return {
      ok: false,
      failure: {
        retryable: true,
        retryAfterMs: null,
        message: timedOut ? `no answer within ${timeoutMs} ms` : 'a network error',
        cause: error,
      },
    };
  }
  if (!response.ok) {
    return {
      ok: false,
      failure: {
        retryable: isRetryableStatus(response.status),
        retryAfterMs: parseRetryAfter(response.headers.get('retry-after')),
        message: `HTTP ${response.status}`,
        status: response.status,
      },
    };
  }
  try {
    return { ok: true, body: JSON.parse(text) };
  } catch (error) {
    // A 200 with a body that is not JSON is most often a truncated answer: worth another attempt.
    return {
      ok: false,
      failure: {
        retryable: true,
        retryAfterMs: null,
        message: 'a body that is not JSON',
        status: response.status,
        cause: error,
      },
    };
  }
}

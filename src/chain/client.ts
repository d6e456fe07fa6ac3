import { createPublicClient, custom, http, type EIP1193RequestFn, type PublicClient } from 'viem';
import { redactUrl } from '../lib/redact.ts';
import { describeError, TallyError, TemporaryError } from '../lib/errors.ts';

/** A provider's error text is untrusted: cut to this many characters in messages and logs. */
const PROVIDER_TEXT_CHARS = 300;
import { silentLogger, type Logger } from '../lib/log.ts';
import { MAX_RETRY_AFTER_MS, sleep } from '../lib/retry.ts';
import { httpStatus, InvalidResponseError, retryAfterMs, rpcCode, shouldRetry } from './errors.ts';

/** A provider saying "too many requests": HTTP 429, or the JSON-RPC codes providers use for it. */
function isRateLimit(error: unknown): boolean {
  const code = rpcCode(error);
  return httpStatus(error) === 429 || code === 429 || code === -32005 || code === -32007;
}
import { createNodeFetch } from './node-fetch.ts';

export interface ChainClientOptions {
  /** JSON-RPC URLs in fallback order (the first that answers wins). Kept private: never logged. */
  rpcUrls: string[];
  chainId: number;
  /** Per-request timeout, ms. Default 15000. */
  timeoutMs?: number;
  /** Rounds over all URLs after the first, for retryable failures. Default 5. */
  retryCount?: number;
  /** First backoff delay, ms, doubled per round (a Retry-After header wins when longer). Default 250. */
  retryDelayMs?: number;
  log?: Logger;
}

export interface RequestOptions<T> {
  /**
   * Checks and converts the result; throws InvalidResponseError when the response contradicts
   * itself, which makes the request count as failed and be retried like a timeout.
   */
  validate?: (result: unknown) => T;
  /**
   * Classifies an error before the retry decision; returning an error throws it at once (used
   * for eth_getLogs "range too large", which the caller answers by splitting the range).
   */
  classify?: (error: unknown) => Error | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * A JSON-RPC client over one or more URLs. `request` is the one retry layer: it tries the URLs in
 * order, and after a round where all failed with retryable errors it waits (backoff, or the
 * longest Retry-After asked) and goes again, `retryCount` times. The viem transports under it
 * never retry. `viem` is a viem PublicClient whose every call goes through `request`.
 */
export interface ChainClient {
  readonly chainId: number;
  /** The URLs redacted to their host, for logs. */
  readonly hosts: readonly string[];
  request<T = unknown>(method: string, params: readonly unknown[], options?: RequestOptions<T>): Promise<T>;
  readonly viem: PublicClient;
  /** Rate-limit answers (429, or a JSON-RPC rate-limit error) met so far: the sync's AdaptiveLimit reads it. */
  readonly rateLimits: () => number;
}

/**
 * An RPC URL serves another chain than CHAIN_ID: a configuration mistake (exit 1), never a reorg
 * to apply or a reason to fall over to the next URL.
 */
export class ChainIdMismatchError extends TallyError {
  constructor(host: string, expected: number, served: number) {
    super(
      `RPC_URL ${host} serves chain id ${served}, but CHAIN_ID is ${expected}; point RPC_URL at a node of chain ${expected} (or set CHAIN_ID)`,
      {
        details: { host, expected, served },
      },
    );
  }
}

/**
 * Creates the client. No request is made until used; safe to create per run. Before a URL serves
 * its first request, its `eth_chainId` is checked against `chainId` (once per URL and client, so
 * a fallback URL is checked when the run first falls over to it): another chain is a
 * ChainIdMismatchError.
 */
export function createChainClient(options: ChainClientOptions): ChainClient {
  const urls = [...options.rpcUrls];
  if (urls.length === 0) throw new TallyError('no RPC URL given: set RPC_URL');
  const hosts = urls.map(redactUrl);
  const timeout = options.timeoutMs ?? 15_000;
  const retryCount = options.retryCount ?? 5;
  const retryDelayMs = options.retryDelayMs ?? 250;
  const log = options.log ?? silentLogger;
  const fetchFn = createNodeFetch();
  const transports = urls.map(
    (url) =>
      http(url, { retryCount: 0, timeout, fetchFn, maxResponseBodySize: false })({ retryCount: 0 })
        .request as EIP1193RequestFn,
  );
  const checked: (Promise<void> | undefined)[] = urls.map(() => undefined);
  let rateLimits = 0;

  /** Resolves once URL i is known to serve options.chainId; a failed check is tried again next time. */
  function checkChainId(i: number, signal: AbortSignal | undefined): Promise<void> {
    checked[i] ??= (async () => {
      const served = await transports[i]!({ method: 'eth_chainId' } as never, signal ? { signal } : undefined);
      const id = typeof served === 'string' && /^0x[0-9a-f]+$/i.test(served) ? Number(BigInt(served)) : Number.NaN;
      if (Number.isNaN(id)) throw new InvalidResponseError(`eth_chainId answered ${String(served).slice(0, 40)}`);
      if (id !== options.chainId) throw new ChainIdMismatchError(hosts[i]!, options.chainId, id);
    })().catch((error: unknown) => {
      if (!(error instanceof ChainIdMismatchError)) checked[i] = undefined;
      throw error;
    });
    return checked[i];
  }

  async function request<T>(method: string, params: readonly unknown[], ro: RequestOptions<T> = {}): Promise<T> {
    for (let round = 0; ; round++) {
      let waitMs = 0;
      let last: unknown;
      for (let i = 0; i < transports.length; i++) {
        ro.signal?.throwIfAborted();
        try {
          await checkChainId(i, ro.signal);
          const result = await transports[i]!(
            { method, params } as never,
            ro.signal ? { signal: ro.signal } : undefined,
          );
          return ro.validate ? ro.validate(result) : (result as T);
        } catch (error) {
          ro.signal?.throwIfAborted();
          if (error instanceof ChainIdMismatchError) throw error;
          const classified = ro.classify?.(error);
          if (classified) throw classified;
          const reason = describeError(error, { urls, maxChars: PROVIDER_TEXT_CHARS });
          if (!shouldRetry(error)) {
            throw new TallyError(`RPC request ${method} failed: ${reason}`, { details: { host: hosts[i], method } });
          }
          if (isRateLimit(error)) rateLimits++;
          const asked = retryAfterMs(error) ?? 0;
          if (asked > MAX_RETRY_AFTER_MS) {
            // Not waited for: the next scheduled run comes sooner (src/lib/retry.ts).
            throw new TemporaryError(
              `RPC ${hosts[i]} asked to wait ${Math.round(asked / 1000)} s before ${method} (more than ${MAX_RETRY_AFTER_MS / 1000} s); run again later`,
              { details: { host: hosts[i], method } },
            );
          }
          log.warn({ host: hosts[i], method, round, reason }, 'rpc request failed, will retry');
          waitMs = Math.max(waitMs, asked);
          last = error;
        }
      }
      if (round >= retryCount) {
        throw new TemporaryError(
          `RPC unreachable after ${round + 1} rounds over ${hosts.length} URL(s): ${describeError(last, { urls, maxChars: PROVIDER_TEXT_CHARS })}`,
          {
            details: { hosts, method },
          },
        );
      }
      const backoff = Math.min(retryDelayMs * 2 ** round, 10_000) * (0.75 + Math.random() * 0.5);
      await sleep(Math.max(waitMs, backoff), ro.signal);
    }
  }

  const viem = createPublicClient({
    transport: custom(
      { request: ({ method, params }) => request(method, (params as unknown[]) ?? []) },
      { retryCount: 0 },
    ),
  }) as PublicClient;
  return { chainId: options.chainId, hosts, request, viem, rateLimits: () => rateLimits };
}

import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import { ResponseBodyTooLargeError } from 'viem';

// Why not the built-in fetch: viem's http transport calls `fetch` once per JSON-RPC request, and
// Node's fetch (undici) runs every request and response through WHATWG Request/Response objects,
// web streams and signal plumbing. On bench/indexer.ts (5,286 eth_getLogs calls, ~420k logs) that
// layer was ~1 ms of CPU per call on the indexer's one thread, about a quarter of its CPU, on 2
// cores it shares with the RPC node and Postgres. viem takes a `fetchFn` for this: this one keeps
// viem's transport (timeouts, error classes, JSON-RPC error handling) and does the HTTP exchange
// with node:http(s) and keep-alive sockets, reading the answer whole (up to a bound). node:http rather than
// undici's lower-level `request`: that would be one more dependency (Node does not expose its
// bundled undici) for the same few lines of adapting to the Response shape viem reads.

/** The part of `Response` that viem's http transport reads. */
type MinimalResponse = Pick<Response, 'ok' | 'status' | 'statusText' | 'headers' | 'body' | 'text'>;

/** The largest answer read, in bytes after decompression: viem's own default (10 MiB). */
export const MAX_RESPONSE_BYTES = 10_485_760;

const decompressors: Record<string, () => zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/**
 * A `fetch` for viem's `http(url, { fetchFn, maxResponseBodySize: false })`: POST (or any
 * method) with a string body and plain-object headers, honouring `init.signal`; answers
 * compressed with gzip, deflate or br are decompressed as they stream in. The size limit is
 * enforced here, on the decompressed bytes, while reading: an answer that announces or reaches
 * more than `maxBytes` is dropped at that point with viem's ResponseBodyTooLargeError (a gzip
 * bomb of 600 KB that inflates to 600 MB costs 10 MiB, not 600 MB), which the indexer answers by
 * splitting the block range. The body is decoded from UTF-8 once; `body` is null and `text()`
 * returns it. One keep-alive agent per client, for http and for https.
 */
export function createNodeFetch(options: { maxBytes?: number } = {}): typeof fetch {
  const maxBytes = options.maxBytes ?? MAX_RESPONSE_BYTES;
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      if (input instanceof Request)
        return reject(new TypeError('a Request object is not supported: pass the URL and init'));
      const url = typeof input === 'string' ? new URL(input) : input;
      const protocol = url.protocol as keyof typeof agents;
      const agent = agents[protocol];
      if (!agent) return reject(new UnsupportedProtocolError(url.protocol));
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason);
      const headers: Record<string, string> = { 'accept-encoding': 'gzip, deflate, br' };
      new Headers(init.headers).forEach((value, key) => (headers[key] = value));
      const body = typeof init.body === 'string' ? init.body : undefined;
      if (init.body != null && body === undefined) return reject(new TypeError('only string bodies are supported'));
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));

      const request = (protocol === 'https:' ? https : http).request(url, {
        method: init.method ?? 'GET',
        headers,
        agent,
      });
      const onAbort = () => request.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      let settled = false;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        request.destroy();
        reject(error);
      };
      request.on('error', fail);
      request.on('response', (res) => {
        const encoding = res.headers['content-encoding']?.trim().toLowerCase();
        const plain = !encoding || encoding === 'identity';
        const makeDecoder = plain ? undefined : decompressors[encoding];
        if (!plain && !makeDecoder) return fail(new TypeError(`unsupported content-encoding ${encoding}`));
        const announced = Number(res.headers['content-length']);
        if (plain && announced > maxBytes)
          return fail(new ResponseBodyTooLargeError({ maxSize: maxBytes, size: announced }));
        const stream = makeDecoder ? res.pipe(makeDecoder()) : res;
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            stream.destroy();
            return fail(new ResponseBodyTooLargeError({ maxSize: maxBytes, size }));
          }
          chunks.push(chunk);
        });
        stream.on('error', fail);
        res.on('error', fail);
        res.on('close', () => {
          if (!res.complete) fail(new Error('the connection closed before the response ended'));
        });
        stream.on('end', () => {
          if (settled) return;
          settled = true;
          signal?.removeEventListener('abort', onAbort);
          const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
          const responseHeaders = new Headers();
          for (const [key, value] of Object.entries(res.headers)) {
            if (key === 'content-encoding' || key === 'content-length' || value === undefined) continue;
            for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(key, v);
          }
          const status = res.statusCode ?? 0;
          const response: MinimalResponse = {
            ok: status >= 200 && status < 300,
            status,
            statusText: res.statusMessage ?? '',
            headers: responseHeaders,
            body: null,
            text: () => Promise.resolve(text),
          };
          resolve(response as Response);
        });
      });
      request.end(body);
    });
}

/** A URL whose protocol this transport cannot serve (ws:, ftp:, ...): a configuration mistake, never retried. */
export class UnsupportedProtocolError extends TypeError {
  constructor(protocol: string) {
    super(`unsupported protocol ${protocol}: RPC_URL must be http:// or https://`);
    this.name = 'UnsupportedProtocolError';
  }
}

import http from 'node:http';
import https from 'node:https';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

// Why not the built-in fetch: viem's http transport calls `fetch` once per JSON-RPC request, and
// Node's fetch (undici) runs every request and response through WHATWG Request/Response objects,
// web streams and signal plumbing. On bench/indexer.ts (5,286 eth_getLogs calls, ~420k logs) that
// layer was ~1 ms of CPU per call on the indexer's one thread, about a quarter of its CPU, on 2
// cores it shares with the RPC node and Postgres. viem takes a `fetchFn` for this: this one keeps
// viem's transport (timeouts, error classes, JSON-RPC error handling) and does the HTTP exchange
// with node:http(s) and keep-alive sockets, reading the answer whole. node:http rather than
// undici's lower-level `request`: that would be one more dependency (Node does not expose its
// bundled undici) for the same few lines of adapting to the Response shape viem reads.

/** The part of `Response` that viem's http transport reads. */
type MinimalResponse = Pick<Response, 'ok' | 'status' | 'statusText' | 'headers' | 'body' | 'text'>;

const decompress: Record<string, (data: Buffer) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  deflate: promisify(zlib.inflate),
  br: promisify(zlib.brotliDecompress),
};

/**
 * A `fetch` for viem's `http(url, { fetchFn })`: POST (or any method) with a string body and
 * plain-object headers, honouring `init.signal`; answers compressed with gzip, deflate or br are
 * decompressed (in zlib's thread pool). The response is read whole before it resolves; `body` is
 * null and `text()` returns it. One keep-alive agent per client, for http and for https.
 */
export function createNodeFetch(): typeof fetch {
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      if (input instanceof Request) return reject(new TypeError('a Request object is not supported: pass the URL and init'));
      const url = typeof input === 'string' ? new URL(input) : input;
      const protocol = url.protocol as keyof typeof agents;
      const agent = agents[protocol];
      if (!agent) return reject(new TypeError(`unsupported protocol ${url.protocol}`));
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason);
      const headers: Record<string, string> = { 'accept-encoding': 'gzip, deflate, br' };
      new Headers(init.headers).forEach((value, key) => (headers[key] = value));
      const body = typeof init.body === 'string' ? init.body : undefined;
      if (init.body != null && body === undefined) return reject(new TypeError('only string bodies are supported'));
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));

      const request = (protocol === 'https:' ? https : http).request(url, { method: init.method ?? 'GET', headers, agent });
      const onAbort = () => request.destroy(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => signal?.removeEventListener('abort', onAbort);
      request.on('error', (error) => {
        done();
        reject(error);
      });
      request.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error) => {
          done();
          reject(error);
        });
        res.on('close', () => {
          if (res.complete) return;
          done();
          reject(new Error('the connection closed before the response ended'));
        });
        res.on('end', () => {
          done();
          const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
          const encoding = res.headers['content-encoding']?.trim().toLowerCase();
          const decode = encoding && encoding !== 'identity' ? decompress[encoding] : undefined;
          if (encoding && encoding !== 'identity' && !decode) return reject(new TypeError(`unsupported content-encoding ${encoding}`));
          (decode ? decode(raw) : Promise.resolve(raw)).then((data) => {
            const text = data.toString('utf8');
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
          }, reject);
        });
      });
      request.end(body);
    });
}

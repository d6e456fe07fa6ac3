import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ResponseBodyTooLargeError } from 'viem';
import { createNodeFetch, UnsupportedProtocolError } from './node-fetch.ts';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A real HTTP server on loopback answering with `handle`; resolves to its URL. */
async function serve(handle: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/rpc?key=1`;
}

describe('createNodeFetch', () => {
  it('default: sends the method, headers and body, and returns status, headers and text', async () => {
    let seen: { method?: string; url?: string; type?: string; length?: string; body?: string } = {};
    const url = await serve((req, body, res) => {
      seen = {
        method: req.method,
        url: req.url,
        type: req.headers['content-type'],
        length: req.headers['content-length'],
        body,
      };
      res.writeHead(200, { 'content-type': 'application/json', 'x-extra': 'yes' });
      res.end('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
    });
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["é"]}';
    const response = await createNodeFetch()(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });
    expect(seen).toEqual({
      method: 'POST',
      url: '/rpc?key=1',
      type: 'application/json',
      length: String(Buffer.byteLength(body)),
      body,
    });
    expect(response.ok).toBe(true);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-extra')).toBe('yes');
    expect(await response.text()).toBe('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
  });

  it('behavior: a gzip answer is decompressed, and the encoding headers are dropped', async () => {
    const text = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      result: Array.from({ length: 500 }, (_, i) => `0x${i.toString(16)}`),
    });
    const url = await serve((req, _body, res) => {
      expect(req.headers['accept-encoding']).toContain('gzip');
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(text));
    });
    const response = await createNodeFetch()(url, { method: 'POST', body: '{}' });
    expect(await response.text()).toBe(text);
    expect(response.headers.get('content-encoding')).toBeNull();
  });

  it('behavior: a 429 keeps its status and Retry-After for the retry layer', async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(429, { 'retry-after': '3', 'content-type': 'text/plain' });
      res.end('slow down');
    });
    const response = await createNodeFetch()(url, { method: 'POST', body: '{}' });
    expect(response.ok).toBe(false);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.text()).toBe('slow down');
  });

  it('error: an abort ends the request and rejects with the reason', async () => {
    const url = await serve(() => {}); // never answers
    const controller = new AbortController();
    const pending = createNodeFetch()(url, { method: 'POST', body: '{}', signal: controller.signal });
    setTimeout(() => controller.abort(new Error('timed out here')), 20);
    await expect(pending).rejects.toThrow('timed out here');
  });

  it('error: a connection closed in the middle of the body rejects', async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"jsonrpc":"2.0","id":1,"res');
      setTimeout(() => res.destroy(), 10);
    });
    await expect(createNodeFetch()(url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('error: a refused connection rejects', async () => {
    const url = await serve(() => {});
    server!.close();
    server!.closeAllConnections();
    server = undefined;
    await expect(createNodeFetch()(url, { method: 'POST', body: '{}' })).rejects.toThrow(/ECONNREFUSED/);
  });

  it('error: an answer that announces more than the limit is refused before its body is read', async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11000000' });
      res.write('{'); // and never more: the client must not wait for the rest
    });
    const error = await createNodeFetch()(url, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseBodyTooLargeError);
    expect((error as ResponseBodyTooLargeError).size).toBe(11_000_000);
  });

  it('error: a chunked answer is dropped as soon as it passes the limit', async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // no length: chunked
      const chunk = Buffer.alloc(1 << 20, 0x20);
      for (let i = 0; i < 11; i++) res.write(chunk);
      res.end();
    });
    const error = await createNodeFetch()(url, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseBodyTooLargeError);
    // dropped within one network chunk past 10,485,760 bytes, not after the 11 MiB sent
    expect((error as ResponseBodyTooLargeError).size).toBeGreaterThan(10_485_760);
    expect((error as ResponseBodyTooLargeError).size).toBeLessThan(10_485_760 + (1 << 20));
  });

  it('error: a gzip bomb is stopped at the limit after decompression, in bounded memory', async () => {
    // 200 MB of spaces gzip to about 200 KB on the wire.
    const bomb = gzipSync(Buffer.alloc(200_000_000, 0x20), { level: 9 });
    expect(bomb.length).toBeLessThan(300_000);
    const url = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    const rssBefore = process.memoryUsage().rss;
    const error = await createNodeFetch()(url, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseBodyTooLargeError);
    expect((error as ResponseBodyTooLargeError).size).toBeGreaterThan(10_485_760);
    expect((error as ResponseBodyTooLargeError).size).toBeLessThan(10_485_760 + 1_000_000); // one zlib chunk past the limit
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100_000_000);
  });

  it('error: a limit of our own applies to every encoding', async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync('x'.repeat(2000)));
    });
    await expect(createNodeFetch({ maxBytes: 1000 })(url, { method: 'POST', body: '{}' })).rejects.toBeInstanceOf(
      ResponseBodyTooLargeError,
    );
    expect(await (await createNodeFetch({ maxBytes: 2000 })(url, { method: 'POST', body: '{}' })).text()).toBe(
      'x'.repeat(2000),
    );
  });

  it('error: a ws:// URL is an UnsupportedProtocolError', async () => {
    await expect(createNodeFetch()('ws://127.0.0.1:1/rpc', { method: 'POST', body: '{}' })).rejects.toBeInstanceOf(
      UnsupportedProtocolError,
    );
  });
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TemporaryError } from '../lib/errors.ts';
import { serveJsonRpc, type RpcServer } from '../../test/chain/fake-rpc.ts';
import { createChainClient } from './client.ts';
import { InvalidResponseError } from './errors.ts';

let good: RpcServer;
let failing: { url: string; hits: number; close: () => Promise<void> };

beforeAll(async () => {
  good = await serveJsonRpc((method) => (method === 'eth_chainId' ? '0x2105' : null));
  const server = createServer((_req, res) => {
    failing.hits++;
    res.writeHead(503).end('upstream down');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  failing = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/SECRETKEY`,
    hits: 0,
    close: () => new Promise((r) => server.close(() => r())),
  };
});
afterAll(async () => {
  await good.close();
  await failing.close();
});

describe('createChainClient', () => {
  it('default: falls back to the next URL when one fails', async () => {
    failing.hits = 0;
    const client = createChainClient({ rpcUrls: [failing.url, good.url], chainId: 8453, retryDelayMs: 1 });
    expect(await client.request('eth_chainId', [])).toBe('0x2105');
    expect(failing.hits).toBe(1);
    expect(await client.viem.getChainId()).toBe(8453);
  });

  it('error: TemporaryError after the retries, with the URL redacted to its host', async () => {
    failing.hits = 0;
    const client = createChainClient({ rpcUrls: [failing.url], chainId: 8453, retryCount: 2, retryDelayMs: 1 });
    const error = await client.request('eth_chainId', []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporaryError);
    expect(failing.hits).toBe(3);
    expect(JSON.stringify({ m: (error as Error).message, d: (error as TemporaryError).details })).not.toContain(
      'SECRETKEY',
    );
    expect(client.hosts[0]).toBe(`${new URL(failing.url).origin}/…`);
  });

  it('behavior: a validator that rejects makes the request count as failed and be retried', async () => {
    const client = createChainClient({ rpcUrls: [good.url], chainId: 8453, retryCount: 3, retryDelayMs: 1 });
    let calls = 0;
    const result = await client.request('eth_chainId', [], {
      validate: (raw) => {
        if (++calls < 3) throw new InvalidResponseError('not yet');
        return raw;
      },
    });
    expect([result, calls]).toEqual(['0x2105', 3]);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BlockCache, createChainClient, fetchPaymentLogs } from '../../src/chain/index.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import { serveJsonRpc, type RpcServer } from './fake-rpc.ts';

/**
 * Recorded provider answers (fixtures/rpc/*.json) replayed over HTTP: fetching, validation and
 * decoding checked without a node against values worked out by hand in each fixture.
 */
interface Fixture {
  request: { usdcAddress: string; sellers: string[]; fromBlock: string; toBlock: string };
  calls: { request: { method: string; topic0?: string; block?: string }; response: { result: unknown } }[];
  expected: {
    transfers: {
      txHash: string;
      logIndex: number;
      blockNumber: string;
      blockTimestamp: string;
      from: string;
      to: string;
      value: string;
    }[];
    authorizations: { txHash: string; logIndex: number; blockNumber: string; authorizer: string; nonce: string }[];
    blocks: [string, string, string][];
  };
}

const dir = path.join(projectRoot, 'fixtures', 'rpc');
const fixtures = readdirSync(dir).filter((f) => f.endsWith('.json'));

let server: RpcServer | undefined;
afterEach(async () => {
  await server?.close();
});

describe('replayed provider answers', () => {
  it('default: the fixtures exist', () => {
    expect(fixtures.sort()).toEqual(['with-block-timestamp.json', 'without-block-timestamp.json']);
  });

  it.each(fixtures)('behavior: fetches and decodes %s', async (file) => {
    const fx = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Fixture;
    server = await serveJsonRpc((method, params) => {
      // The recordings are of Base mainnet (chain id 8453), which the client checks first.
      if (method === 'eth_chainId') return '0x2105';
      const p0 = params[0] as { topics?: string[] } | string;
      const call = fx.calls.find(
        (c) =>
          c.request.method === method &&
          (method !== 'eth_getLogs' || c.request.topic0 === (p0 as { topics: string[] }).topics[0]) &&
          (method !== 'eth_getBlockByNumber' || c.request.block === p0),
      );
      if (!call) throw { code: -32602, message: `no recorded answer for ${method} ${JSON.stringify(params)}` };
      return call.response.result;
    });
    const client = createChainClient({ rpcUrls: [server.url], chainId: 8453, retryCount: 0 });
    const logs = await fetchPaymentLogs(
      client,
      {
        usdcAddress: fx.request.usdcAddress,
        sellers: fx.request.sellers,
        fromBlock: BigInt(fx.request.fromBlock),
        toBlock: BigInt(fx.request.toBlock),
      },
      { limit: { span: 10_000n }, blocks: new BlockCache(client) },
    );
    expect(
      logs.transfers.map((t) => ({
        txHash: t.txHash,
        logIndex: t.logIndex,
        blockNumber: String(t.blockNumber),
        blockTimestamp: String(t.blockTimestamp),
        from: t.from,
        to: t.to,
        value: String(t.value),
      })),
    ).toEqual(fx.expected.transfers);
    expect(
      logs.authorizations.map((a) => ({
        txHash: a.txHash,
        logIndex: a.logIndex,
        blockNumber: String(a.blockNumber),
        authorizer: a.authorizer,
        nonce: a.nonce,
      })),
    ).toEqual(fx.expected.authorizations);
    expect(logs.blocks.map((b) => [String(b.number), b.hash, String(b.timestamp)]).sort()).toEqual(fx.expected.blocks);
    // Headers are read only for what the logs did not say.
    const withTs = file.startsWith('with-');
    expect(server.calls.get('eth_getBlockByNumber')).toBe(withTs ? 1 : 3);
  });
});

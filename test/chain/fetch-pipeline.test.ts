import { describe, expect, it } from 'vitest';
import {
  BlockCache,
  fetchPaymentLogs,
  TRANSFER_TOPIC,
  type ChainClient,
  type RequestOptions,
} from '../../src/chain/index.ts';
import { FakeChain, type Hex } from './fake-rpc.ts';
import { BASE_USDC as USDC } from '../../src/config/index.ts';

const SELLER = `0x${'a1'.repeat(20)}`;
const PAYER = `0x${'c1'.repeat(20)}`;
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as Hex;

/**
 * A chunk of blocks 0-19 read in request spans of 10 blocks, one settlement in each span (blocks 5
 * and 15). The node answers the second span's Transfer request only once an AuthorizationUsed
 * request has come in: a reader that asks for authorizations only after the whole chunk's transfers
 * never gets that answer.
 */
describe('fetchPaymentLogs: request pipelining', () => {
  it("behavior: a span's AuthorizationUsed request goes out before the chunk's other transfer spans are answered", async () => {
    const chain = new FakeChain({ usdc: USDC, head: 30, genesisTimestamp: 1_767_225_600, blockTime: 2 });
    chain.settle(5, tx(5), PAYER, SELLER, 1_000n, 1n);
    chain.settle(15, tx(15), PAYER, SELLER, 2_000n, 2n);
    const events: string[] = [];
    let authorizationAsked!: () => void;
    const gate = new Promise<void>((resolve) => (authorizationAsked = resolve));
    const client: ChainClient = {
      chainId: 8453,
      hosts: ['fake'],
      viem: undefined as never,
      rateLimits: () => 0,
      async request<T>(method: string, params: readonly unknown[], options: RequestOptions<T> = {}): Promise<T> {
        let what = method;
        if (method === 'eth_getLogs') {
          const p = params[0] as { topics: string[]; fromBlock: string; toBlock: string };
          const kind = p.topics[0] === TRANSFER_TOPIC ? 'transfers' : 'authorizations';
          what = `${kind} ${Number(p.fromBlock)}-${Number(p.toBlock)}`;
          if (kind === 'authorizations') authorizationAsked();
          events.push(`asked ${what}`);
          if (what === 'transfers 10-19') await gate;
        }
        const result = JSON.parse(JSON.stringify(chain.call(method, [...params]))) as unknown;
        if (method === 'eth_getLogs') events.push(`answered ${what}`);
        return options.validate ? options.validate(result) : (result as T);
      },
    };
    const read = fetchPaymentLogs(
      client,
      { usdcAddress: USDC, sellers: [SELLER], fromBlock: 0n, toBlock: 19n },
      { limit: { span: 10n }, blocks: new BlockCache(client) },
    );
    // A pipeline that waited for the gated span before asking the next one would never finish:
    // the test's timeout ends it (no wall-clock limit here, which a loaded machine could miss).
    const logs = await read;
    expect(logs.transfers.map((t) => [t.txHash, t.blockNumber, t.value])).toEqual([
      [tx(5), 5n, 1_000n],
      [tx(15), 15n, 2_000n],
    ]);
    // Each authorization asked over the blocks of its span's transfers only.
    expect(logs.authorizations.map((a) => [a.txHash, a.blockNumber, a.nonce])).toEqual([
      [tx(5), 5n, `0x${(1).toString(16).padStart(64, '0')}`],
      [tx(15), 15n, `0x${(2).toString(16).padStart(64, '0')}`],
    ]);
    expect(events.indexOf('asked authorizations 5-5')).toBeLessThan(events.indexOf('answered transfers 10-19'));
    expect(events.filter((e) => e.startsWith('asked'))).toHaveLength(4);
  });
});

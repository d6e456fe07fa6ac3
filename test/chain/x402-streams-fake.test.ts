import { afterEach, describe, expect, it } from 'vitest';
import {
  createChainClient,
  fetchProxySettlements,
  X402_CONTRACTS,
  X402_TOPIC0,
  type ProxySettlement,
} from '../../src/chain/index.ts';
import { TemporaryError } from '../../src/lib/errors.ts';
import { FakeChain, serveJsonRpc, type Hex, type RpcServer } from './fake-rpc.ts';
import { BASE_USDC as USDC } from '../../src/config/index.ts';

/**
 * fetchProxySettlements against the in-memory node over HTTP: how many receipt calls each mode
 * sends (counted by the server), a reorg between two reads, and a node whose receipts come from
 * another fork than its logs. Expected records are written from the settlements placed below.
 */

const SELLER = `0x${'a1'.repeat(20)}`;
const PAYER = `0x${'c1'.repeat(20)}`;
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as Hex;

let server: RpcServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Blocks 0-99; settlements in blocks 10 (two transactions), 20 and 95; block 50 holds a plain transfer. */
function chainWithSettlements(): FakeChain {
  const chain = new FakeChain({ usdc: USDC, head: 99, genesisTimestamp: 1_767_225_600, blockTime: 2 });
  chain.proxySettle(10, tx(1), PAYER, SELLER, 100n, X402_CONTRACTS.exactProxy, X402_TOPIC0.proxySettled as Hex);
  chain.proxySettle(10, tx(2), PAYER, SELLER, 200n, X402_CONTRACTS.uptoProxy, X402_TOPIC0.proxySettled as Hex);
  chain.proxySettle(
    20,
    tx(3),
    PAYER,
    SELLER,
    300n,
    X402_CONTRACTS.exactProxy,
    X402_TOPIC0.proxySettledWithPermit as Hex,
  );
  chain.transfer(50, tx(4), PAYER, SELLER, 400n);
  chain.proxySettle(95, tx(5), PAYER, SELLER, 500n, X402_CONTRACTS.uptoProxy, X402_TOPIC0.proxySettled as Hex);
  return chain;
}

function expected(chain: FakeChain): ProxySettlement[] {
  // Each settlement is [Transfer, proxy log]: in block 10 the second transaction's logs are 2 and 3.
  const row = (
    block: number,
    t: number,
    logIndex: number,
    proxy: 'exact' | 'upto',
    withPermit: boolean,
    value: bigint,
  ) => ({
    blockNumber: BigInt(block),
    blockHash: chain.hash(block),
    txHash: tx(t),
    logIndex,
    proxy,
    withPermit,
    transfer: { logIndex: logIndex - 1, from: PAYER as Hex, to: SELLER as Hex, value },
  });
  return [
    row(10, 1, 1, 'exact', false, 100n),
    row(10, 2, 3, 'upto', false, 200n),
    row(20, 3, 1, 'exact', true, 300n),
    row(95, 5, 1, 'upto', false, 500n),
  ];
}

describe('fetchProxySettlements on the fake node', () => {
  it('behavior: one receipt call per settlement transaction, or per block; 4 eth_getLogs per span', async () => {
    const chain = chainWithSettlements();
    server = await serveJsonRpc((m, p) => chain.call(m, p));
    const client = createChainClient({ rpcUrls: [server.url], chainId: 8453 });

    const byTx = await fetchProxySettlements(
      client,
      { usdcAddress: USDC, fromBlock: 0n, toBlock: 99n },
      { limit: { span: 50n } },
    );
    expect(byTx.settlements).toEqual(expected(chain));
    expect(byTx.receiptCalls).toBe(4);
    expect(server.calls.get('eth_getTransactionReceipt')).toBe(4);
    // Two spans (0-49, 50-99) x two proxies x two events.
    expect(server.calls.get('eth_getLogs')).toBe(8);

    const byBlock = await fetchProxySettlements(
      client,
      { usdcAddress: USDC, fromBlock: 0n, toBlock: 99n, receipts: 'block' },
      { limit: { span: 50n } },
    );
    expect(byBlock.settlements).toEqual(expected(chain));
    expect(byBlock.receiptCalls).toBe(3);
    expect(server.calls.get('eth_getBlockReceipts')).toBe(3);
  });

  it('behavior: after a reorg from block 90, reading again gives the new fork (a moved settlement included)', async () => {
    const chain = chainWithSettlements();
    server = await serveJsonRpc((m, p) => chain.call(m, p));
    const client = createChainClient({ rpcUrls: [server.url], chainId: 8453 });
    const before = await fetchProxySettlements(
      client,
      { usdcAddress: USDC, fromBlock: 0n, toBlock: 99n },
      { limit: { span: 100n } },
    );
    expect(before.settlements.at(-1)!.blockNumber).toBe(95n);

    chain.reorg(90, 'fork-b');
    chain.proxySettle(92, tx(5), PAYER, SELLER, 500n, X402_CONTRACTS.uptoProxy, X402_TOPIC0.proxySettled as Hex);
    const after = await fetchProxySettlements(
      client,
      { usdcAddress: USDC, fromBlock: 0n, toBlock: 99n },
      { limit: { span: 100n } },
    );
    expect(after.settlements.slice(0, 3)).toEqual(before.settlements.slice(0, 3));
    expect(after.settlements[3]).toEqual({ ...before.settlements[3]!, blockNumber: 92n, blockHash: chain.hash(92) });
    expect(chain.hash(92)).not.toBe(before.settlements[3]!.blockHash);
  });

  it('error: receipts of another fork than the logs are refused, retried, and end as a temporary fault', async () => {
    const chain = chainWithSettlements();
    const fork = chainWithSettlements();
    fork.reorg(0, 'other-fork');
    fork.proxySettle(
      20,
      tx(3),
      PAYER,
      SELLER,
      300n,
      X402_CONTRACTS.exactProxy,
      X402_TOPIC0.proxySettledWithPermit as Hex,
    );
    // Logs from one fork, receipts from the other (a load balancer over two lagging nodes).
    server = await serveJsonRpc((m, p) => (m === 'eth_getTransactionReceipt' ? fork : chain).call(m, p));
    const client = createChainClient({ rpcUrls: [server.url], chainId: 8453, retryCount: 2, retryDelayMs: 1 });
    await expect(
      fetchProxySettlements(client, { usdcAddress: USDC, fromBlock: 15n, toBlock: 25n }, { limit: { span: 100n } }),
    ).rejects.toBeInstanceOf(TemporaryError);
    // Three rounds over the one URL for the one receipt.
    expect(server.calls.get('eth_getTransactionReceipt')).toBe(3);
  });
});

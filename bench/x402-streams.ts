/**
 * Calls of the proxy-settlement reader (src/chain/fetch-x402-streams.ts): the in-memory JSON-RPC
 * node (test/chain/fake-rpc.ts) serves N Permit2-proxy settlements spread over D days of blocks,
 * and fetchProxySettlements reads them once with per-transaction receipts and once with per-block
 * receipts. Prints, per mode, the JSON-RPC calls by method (counted by the server) and the wall
 * time. No database.
 *
 *   npx tsx bench/x402-streams.ts [--settlements N] [--days N] [--block-time 2|0.2] [--span N]
 *     [--concurrency N] [--latency-ms N]
 */
import { parseArgs } from 'node:util';
import pLimit from 'p-limit';
import { createChainClient, fetchProxySettlements, X402_CONTRACTS, X402_TOPIC0 } from '../src/chain/index.ts';
import { FakeChain, serveJsonRpc, type Hex } from '../test/chain/fake-rpc.ts';
import { payer, seller } from './fake-addresses.ts';
import { mulberry32 } from './mulberry32.ts';

const { values: args } = parseArgs({
  options: {
    settlements: { type: 'string', default: '20000' },
    days: { type: 'string', default: '30' },
    'block-time': { type: 'string', default: '2' },
    span: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '8' },
    'latency-ms': { type: 'string', default: '0' },
  },
});
const settlements = Number(args.settlements);
const blockTime = Number(args['block-time']);
const head = Math.floor((Number(args.days) * 86_400) / blockTime);
const usdc = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';

const chain = new FakeChain({ usdc, head, genesisTimestamp: 1_767_225_600, blockTime });
const random = mulberry32(22);
const blocks = Array.from({ length: settlements }, () => 1 + Math.floor(random() * head)).sort((a, b) => a - b);
blocks.forEach((block, i) => {
  const proxy = random() < 0.5 ? X402_CONTRACTS.exactProxy : X402_CONTRACTS.uptoProxy;
  const topic0 = (random() < 0.2 ? X402_TOPIC0.proxySettledWithPermit : X402_TOPIC0.proxySettled) as Hex;
  const tx = `0x${(i + 1).toString(16).padStart(64, '0')}` as Hex;
  chain.proxySettle(block, tx, payer(i % 5_000), seller(i % 500), BigInt(1_000 + i), proxy, topic0);
});
const distinctBlocks = new Set(blocks).size;

const server = await serveJsonRpc((m, p) => chain.call(m, p), { latencyMs: Number(args['latency-ms']) });
try {
  for (const mode of ['transaction', 'block'] as const) {
    server.calls.clear();
    const client = createChainClient({ rpcUrls: [server.url], chainId: 8453 });
    const limit = pLimit(Number(args.concurrency));
    const started = performance.now();
    const read = await fetchProxySettlements(
      client,
      { usdcAddress: usdc, fromBlock: 0n, toBlock: BigInt(head), receipts: mode },
      { limit: { span: BigInt(args.span) }, run: (fn) => limit(fn) },
    );
    const ms = performance.now() - started;
    const paired = read.settlements.filter((s) => s.transfer !== 'unpaired').length;
    console.log(
      JSON.stringify({
        mode,
        settlements: read.settlements.length,
        paired,
        blocks: head + 1,
        blocksWithSettlements: distinctBlocks,
        calls: Object.fromEntries(server.calls),
        receiptCalls: read.receiptCalls,
        seconds: Number((ms / 1000).toFixed(2)),
      }),
    );
  }
} finally {
  await server.close();
}

import type { Address, Hash, Hex } from 'viem';
import { keccak256, stringToBytes } from 'viem';
import { silentLogger, type Logger } from '../lib/log.ts';
import { buyerAccount } from './accounts.ts';
import { latestBlock, setAutomine, setNextBlockTimestamp, type MinedBlock } from './blocks.ts';
import { catalogSellers } from './economy-sellers.ts';
import { planEconomy, type EconomyPlan, type PlannedCall, type SellerScenario } from './economy-plan.ts';
import { ensureMulticall3, MULTICALL3_ADDRESS, sendBatch, type BatchCall } from './multicall.ts';
import { rpcRequest } from './rpc.ts';
import {
  minedTransfers,
  sendMint,
  sendPlainTransfer,
  sendSettlement,
  type SentTransfer,
  type SettleParams,
} from './settle.ts';
import type { UsdcDeployment } from './usdc.ts';
import { isX402DemoSeller, X402DemoSeeder, type X402DemoSummary } from './x402-economy.ts';

/** One USDC Transfer log the economy produced towards a seller. */
export interface DemoTransfer {
  /**
   * settlement: a buyer's transferWithAuthorization (alone or in a batch);
   * self: the seller's own authorization to itself; plain: an ERC-20 transfer (a buyer's, or
   * Multicall3's own inside a batch); mint: USDC minted to the seller.
   */
  kind: 'settlement' | 'self' | 'plain' | 'mint';
  /** sent inside a Multicall3 transaction with other calls */
  batched: boolean;
  /** the address whose AuthorizationUsed this call emitted (lowercase), or null */
  authorizer: Address | null;
  txHash: Hash;
  logIndex: number;
  blockNumber: bigint;
  blockHash: Hash;
  /** unix seconds */
  blockTimestamp: bigint;
  /** lowercase */
  from: Address;
  /** lowercase */
  to: Address;
  /** micro-USDC */
  value: bigint;
}

export interface EconomySeller {
  address: Address;
  scenario: SellerScenario;
  /** distinct resource URLs of the seller's Base-USDC accepts in the catalog (approximate listing count) */
  catalogListings: number;
  /** every Transfer to this seller, in chain order */
  transfers: DemoTransfer[];
}

export interface EconomySummary {
  chainId: number;
  usdcAddress: Address;
  /** unix seconds: timestamp of the last block seeded (= head.timestamp) */
  asOfTs: bigint;
  /** unix seconds of the first history block; funding blocks come just before it */
  startTs: bigint;
  head: MinedBlock;
  buyers: number;
  blocks: number;
  transactions: number;
  sellers: EconomySeller[];
  /** every Transfer to a seller of `sellers`, in chain order */
  transfers: DemoTransfer[];
  /** The payments through Permit2 proxies and channels, and the internal payments (x402-economy.ts), when seeded. */
  x402?: X402DemoSummary;
}

export interface SeedOptions {
  /** The catalog's items (a discovery page's `items` or a crawl's `resources`). */
  catalogItems: readonly unknown[];
  /**
   * unix seconds of the last seeded block; the history starts 36 days earlier. Default: the
   * wall clock. The chain's latest block must be older than the history start minus one hour.
   */
  asOfTs?: bigint;
  log?: Logger;
  /** Called after each mined block of the history (the demo's progress line). */
  onProgress?: (done: number, total: number) => void;
  /**
   * Also seed x402-economy.ts's scenarios (Permit2 proxies, batch-settlement channels, internal
   * payments) between the history's blocks. Needs the contracts of x402-contracts.ts installed.
   */
  x402?: boolean;
}

/** ERC-1271 wallet that accepts any signature: returns isValidSignature's magic value 0x1626ba7e. */
const ACCEPT_ALL_1271_WALLET: Hex = '0x631626ba7e60e01b60005260206000f3';
const BUYER_FUNDING = 1_000_000_000n; // 1,000 USDC each
const SELF_PAYER_FUNDING = 10_000_000n;
const FUNDING_LEAD_SECONDS = 3_600n;
const MINTS_PER_BLOCK = 60;

type Pending = { sent: SentTransfer; kind: DemoTransfer['kind']; batched: boolean; authorizer: Address | null };

/**
 * Seeds a fresh dev chain (deployUsdc done, automine on) with a deterministic x402 economy over
 * real payTo addresses of the catalog: ~1,900 transactions in ~440 blocks spanning 36 days that
 * end exactly at `asOfTs`; every scenario of SellerScenario. Returns what was sent, read back
 * from receipts, so tests can work out the expected metrics independently. Not safe to re-run on
 * the same chain (timestamps only move forward): start a new node.
 */
export async function seedDemoEconomy(dep: UsdcDeployment, options: SeedOptions): Promise<EconomySummary> {
  const log = options.log ?? silentLogger;
  const started = performance.now();
  const asOfTs = options.asOfTs ?? BigInt(Math.floor(Date.now() / 1000));
  // x402-economy.ts's synthetic sellers get only its own scenarios.
  const plan = planEconomy(
    catalogSellers(options.catalogItems).filter((s) => !isX402DemoSeller(s.address)),
    asOfTs,
  );
  const fundingTs = plan.startTs - FUNDING_LEAD_SECONDS;
  const head = await latestBlock(dep.rpcUrl);
  if (head.timestamp >= fundingTs) {
    throw new Error(
      `seedDemoEconomy: the chain's latest block (${head.timestamp}) is not older than the history start ` +
        `(${fundingTs}); start anvil with a genesis timestamp at least 37 days before asOfTs`,
    );
  }
  await ensureMulticall3(dep);
  for (const seller of plan.selfPayers)
    await dep.clients.test.setCode({ address: seller, bytecode: ACCEPT_ALL_1271_WALLET });

  const pending: Pending[] = [];
  let blocks = 0;
  let transactions = 0;
  const x402 = options.x402 ? new X402DemoSeeder(dep, asOfTs, (ts) => mineAt(dep.rpcUrl, ts)) : undefined;
  await setAutomine(dep.rpcUrl, false);
  try {
    // Funding: mints to every buyer, the self-paying sellers and Multicall3, before the history.
    const mints: [Address, bigint][] = [
      ...Array.from({ length: plan.buyers }, (_, n): [Address, bigint] => [buyerAccount(n).address, BUYER_FUNDING]),
      ...plan.selfPayers.map((a): [Address, bigint] => [a, SELF_PAYER_FUNDING]),
      [MULTICALL3_ADDRESS, plan.batcherFunding],
    ];
    for (let i = 0; i < mints.length; i += MINTS_PER_BLOCK) {
      for (const [to, value] of mints.slice(i, i + MINTS_PER_BLOCK)) {
        const sent = await sendMint(dep, to, value);
        if (plan.selfPayers.includes(sent.to)) pending.push({ sent, kind: 'mint', batched: false, authorizer: null });
        transactions++;
      }
      await mineAt(dep.rpcUrl, fundingTs + BigInt(blocks++));
    }

    let authorizations = 0;
    const nextNonce = (): Hex => keccak256(stringToBytes(`x402-tally demo authorization ${authorizations++}`));
    let previousTs = fundingTs + BigInt(blocks - 1);
    for (const [index, block] of plan.blocks.entries()) {
      // The x402 scenarios dated before this block, each in a block of its own at its time.
      await x402?.beforeBlock(block.timestamp, previousTs);
      for (const tx of block.txs) {
        const facilitator = dep.roles.facilitators[transactions % dep.roles.facilitators.length]!;
        transactions++;
        if (tx.batch) {
          const sent = await sendBatch(
            dep,
            tx.calls.map((c) => batchCall(c, nextNonce)),
            { facilitator },
          );
          sent.forEach((s, i) => pending.push(describe(s, tx.calls[i]!, true)));
        } else {
          const call = tx.calls[0]!;
          if (call.type === 'batcher') throw new Error('seedDemoEconomy: a Multicall3 transfer must be batched');
          const sent =
            call.type === 'plain'
              ? await sendPlainTransfer(dep, { from: buyerAccount(call.buyer), to: call.to, value: call.value })
              : await sendSettlement(dep, { ...settleParams(call, nextNonce), facilitator });
          pending.push(describe(sent, call, false));
        }
      }
      await mineAt(dep.rpcUrl, block.timestamp);
      previousTs = block.timestamp;
      blocks++;
      options.onProgress?.(index + 1, plan.blocks.length);
    }
    x402?.finish();
    const pool = await rpcRequest<{ pending: string; queued: string }>(dep.rpcUrl, 'txpool_status', []);
    if (BigInt(pool.pending) + BigInt(pool.queued) !== 0n)
      throw new Error('seedDemoEconomy: transactions left unmined');
  } finally {
    await setAutomine(dep.rpcUrl, true);
  }
  // Back to plain addresses: the wallet code was only needed to authorize the self-payments.
  for (const seller of plan.selfPayers) await dep.clients.test.setCode({ address: seller, bytecode: '0x' });

  const summary = await summarize(dep, plan, pending, {
    blocks: blocks + (x402?.blocks ?? 0),
    transactions: transactions + (x402?.transactions ?? 0),
  });
  if (x402) summary.x402 = await x402.summary();
  log.info(
    { transactions, blocks, sellers: summary.sellers.length, ms: Math.round(performance.now() - started) },
    'demo economy seeded',
  );
  return summary;
}

async function mineAt(rpcUrl: string, timestamp: bigint): Promise<void> {
  await setNextBlockTimestamp(rpcUrl, timestamp);
  await rpcRequest(rpcUrl, 'evm_mine', []);
}

/** A contract wallet's stand-in signer: its ERC-1271 code accepts any 65-byte signature. */
function contractWalletSigner(address: Address): SettleParams['from'] {
  return { address, signTypedData: async () => `0x${'11'.repeat(65)}` as Hex };
}

function settleParams(call: Extract<PlannedCall, { type: 'settle' | 'self' }>, nextNonce: () => Hex): SettleParams {
  if (call.type === 'self') {
    return {
      from: contractWalletSigner(call.seller),
      to: call.seller,
      value: call.value,
      nonce: nextNonce(),
      form: 'bytes',
    };
  }
  return { from: buyerAccount(call.buyer), to: call.to, value: call.value, nonce: nextNonce(), form: call.form };
}

function batchCall(call: PlannedCall, nextNonce: () => Hex): BatchCall {
  if (call.type === 'batcher') return { batcherTransfer: { to: call.to, value: call.value } };
  if (call.type === 'plain') throw new Error('seedDemoEconomy: a buyer plain transfer cannot be batched');
  return { settle: settleParams(call, nextNonce) };
}

function describe(sent: SentTransfer, call: PlannedCall, batched: boolean): Pending {
  switch (call.type) {
    case 'settle':
      return { sent, kind: 'settlement', batched, authorizer: sent.from };
    case 'self':
      return { sent, kind: 'self', batched, authorizer: sent.from };
    default:
      return { sent, kind: 'plain', batched, authorizer: null };
  }
}

async function summarize(
  dep: UsdcDeployment,
  plan: EconomyPlan,
  pending: Pending[],
  counts: { blocks: number; transactions: number },
): Promise<EconomySummary> {
  const mined = await minedTransfers(
    dep,
    pending.map((p) => p.sent),
  );
  const transfers: DemoTransfer[] = mined
    .map((m, i) => ({
      kind: pending[i]!.kind,
      batched: pending[i]!.batched,
      authorizer: pending[i]!.authorizer,
      txHash: m.hash,
      logIndex: m.logIndex,
      blockNumber: m.blockNumber,
      blockHash: m.blockHash,
      blockTimestamp: m.blockTimestamp,
      from: m.from,
      to: m.to,
      value: m.value,
    }))
    .sort((a, b) =>
      a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1,
    );
  const head = await latestBlock(dep.rpcUrl);
  if (head.timestamp !== plan.asOfTs)
    throw new Error(`seedDemoEconomy: head timestamp ${head.timestamp} is not asOfTs ${plan.asOfTs}`);
  return {
    chainId: dep.chainId,
    usdcAddress: dep.address,
    asOfTs: plan.asOfTs,
    startTs: plan.startTs,
    head,
    buyers: plan.buyers,
    blocks: counts.blocks,
    transactions: counts.transactions,
    sellers: plan.sellers.map((s) => ({ ...s, transfers: transfers.filter((t) => t.to === s.address) })),
    transfers,
  };
}

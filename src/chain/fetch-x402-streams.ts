import { TemporaryError } from '../lib/errors.ts';
import type { ChainClient } from './client.ts';
import { decodeTransfer } from './decode.ts';
import { decodeChannelCreated, decodeClaimed, type ChannelCreatedLog, type ClaimedLog } from './decode-x402.ts';
import { InvalidResponseError } from './errors.ts';
import { addressTopic, TRANSFER_TOPIC } from './events.ts';
import { getLogsAdaptive, type LogsContext, type LogsQuery } from './get-logs.ts';
import { pairWithReceipt, type ProxySettlement } from './pair-receipts.ts';
import type { RpcLog } from './rpc-schema.ts';
import type { Hex, TransferLog } from './types.ts';
import { X402_CONTRACTS, X402_TOPIC0 } from './x402.ts';

/**
 * The chain readers of method 3.0.0's other streams (SPEC section 2, "Method 3.0.0"; choices and
 * costs in docs/x402-contracts.md, "Reading the streams"). Each reads one inclusive block range,
 * like fetchPaymentLogs: raw eth_getLogs selected by contract address AND topic0 (never by event
 * name: the batch contract has its own `Settled`), cut to the shared span and halved on a "range
 * too large" answer (getLogsAdaptive), validated (validateLogs) and decoded. Every request goes
 * through the caller's `run` (the sync's concurrency limit). The records carry their block's number
 * and hash, not its timestamp: the sync stores blocks and checks them for reorgs as it does for the
 * USDC stream. Read-only; safe to repeat, so a run resumes by reading a range again.
 */

/** The as-of block, whose hash a log in it must carry. */
type Anchor = { number: bigint; hash: Hex } | undefined;

const knownHashesOf = (anchor: Anchor) => ({
  get: (n: bigint) => (anchor && n === anchor.number ? anchor.hash : undefined),
});

/** A query for one event (address + topic0) with no other topic filter. */
function eventQuery<T>(
  address: Hex,
  topic0: Hex,
  shape: { topicCount: number; dataBytes: number },
  decode: (log: RpcLog) => T,
  anchor: Anchor,
): LogsQuery<T> {
  return {
    address,
    topics: [topic0],
    expect: {
      address,
      topic0,
      ...shape,
      filter: { index: 0, topics: new Set([topic0]) },
      knownHashes: knownHashesOf(anchor),
    },
    decode,
  };
}

/** Two responses that name two hashes for one block (answers from two forks). */
class CrossCheckError extends InvalidResponseError {}

/** Throws a CrossCheckError when two records name two hashes for one block. */
function sameHashPerBlock(records: readonly { blockNumber: bigint; blockHash: Hex }[]): void {
  const hashes = new Map<bigint, Hex>();
  for (const r of records) {
    const seen = hashes.get(r.blockNumber);
    if (seen !== undefined && seen !== r.blockHash)
      throw new CrossCheckError(`responses disagree about block ${r.blockNumber}: two block hashes in the logs`, {
        block: r.blockNumber.toString(),
      });
    hashes.set(r.blockNumber, r.blockHash);
  }
}

// Two responses that disagree about a block cannot be pinned on one request: the range is read
// again, a bounded number of times, as fetchPaymentLogs does.
const READS = 3;
async function consistent<T extends { blockNumber: bigint; blockHash: Hex }>(read: () => Promise<T[]>): Promise<T[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const records = await read();
      sameHashPerBlock(records);
      return records;
    } catch (error) {
      if (!(error instanceof CrossCheckError)) throw error;
      if (attempt >= READS)
        throw new TemporaryError('the RPC keeps answering inconsistently about a block', {
          details: { reason: (error as Error).message },
        });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// (a) The proxies' Settled() / SettledWithPermit() logs, paired through receipts.

export interface ProxySettlementsRequest {
  usdcAddress: string;
  fromBlock: bigint;
  toBlock: bigint;
  /**
   * How receipts are read: 'transaction' (default) sends one eth_getTransactionReceipt per
   * transaction holding a proxy log; 'block' sends one eth_getBlockReceipts per block holding one
   * (fewer calls when settlements crowd blocks, but each answer holds every receipt of the block).
   */
  receipts?: 'transaction' | 'block';
  anchor?: Anchor;
}

export interface ProxySettlements {
  settlements: ProxySettlement[];
  /** Receipt requests made (eth_getTransactionReceipt or eth_getBlockReceipts), retries not counted. */
  receiptCalls: number;
}

/** The proxies and their two events: four (address, topic0) selections. */
const PROXY_SELECTIONS: readonly { address: Hex; topic0: Hex }[] = [X402_CONTRACTS.exactProxy, X402_CONTRACTS.uptoProxy]
  .flatMap((address) =>
    [X402_TOPIC0.proxySettled, X402_TOPIC0.proxySettledWithPermit].map((topic0) => ({ address, topic0 })),
  )
  .map((s) => ({ address: s.address as Hex, topic0: s.topic0 as Hex }));

/**
 * Every `Settled()` and `SettledWithPermit()` log of the exact and upto Permit2 proxies in
 * [fromBlock, toBlock], each paired with the last USDC Transfer log before it in its transaction
 * (or 'unpaired'). The Transfer fetched by seller may not be that one (a transaction can move USDC
 * more than once), so the pairing reads the transaction's receipt, checked against the log's block
 * hash (pairWithReceipt). Calls: 4 eth_getLogs per span of the range, plus one receipt call per
 * transaction (or per block) holding proxy logs. Memory: the range's proxy logs and, at a time,
 * the receipts in flight under the caller's concurrency limit.
 */
export async function fetchProxySettlements(
  client: ChainClient,
  request: ProxySettlementsRequest,
  context: LogsContext,
): Promise<ProxySettlements> {
  let receiptCalls = 0;
  const settlements = await consistent(async () => {
    const logLists = await Promise.all(
      PROXY_SELECTIONS.map((s) =>
        getLogsAdaptive(
          client,
          eventQuery(s.address, s.topic0, { topicCount: 1, dataBytes: 0 }, (log) => log, request.anchor),
          request.fromBlock,
          request.toBlock,
          context,
        ),
      ),
    );
    const logs = logLists.flat();
    sameHashPerBlock(
      logs.map((l) => ({ blockNumber: BigInt(l.blockNumber), blockHash: l.blockHash.toLowerCase() as Hex })),
    );
    const byTx = new Map<string, RpcLog[]>();
    for (const log of logs) {
      const key = log.transactionHash.toLowerCase();
      const list = byTx.get(key);
      if (list) list.push(log);
      else byTx.set(key, [log]);
    }
    const groups = [...byTx.values()];
    let paired: ProxySettlement[][];
    if (request.receipts === 'block') {
      const byBlock = new Map<string, RpcLog[][]>();
      for (const g of groups) {
        const key = g[0]!.blockHash.toLowerCase();
        const list = byBlock.get(key);
        if (list) list.push(g);
        else byBlock.set(key, [g]);
      }
      receiptCalls += byBlock.size;
      paired = await Promise.all(
        [...byBlock.values()].map((txs) => pairByBlockReceipts(client, txs, request, context)),
      );
    } else {
      receiptCalls += groups.length;
      paired = await Promise.all(groups.map((g) => pairByTransactionReceipt(client, g, request, context)));
    }
    return paired
      .flat()
      .sort((a, b) =>
        a.blockNumber < b.blockNumber ? -1 : a.blockNumber > b.blockNumber ? 1 : a.logIndex - b.logIndex,
      );
  });
  return { settlements, receiptCalls };
}

function pairByTransactionReceipt(
  client: ChainClient,
  proxyLogs: RpcLog[],
  request: ProxySettlementsRequest,
  context: LogsContext,
): Promise<ProxySettlement[]> {
  const run = context.run ?? ((fn) => fn());
  return run(() =>
    client.request('eth_getTransactionReceipt', [proxyLogs[0]!.transactionHash], {
      signal: context.signal,
      validate: (raw) => pairWithReceipt(raw, proxyLogs, request.usdcAddress),
    }),
  );
}

/** One eth_getBlockReceipts for the transactions (each a list of its proxy logs) of one block. */
function pairByBlockReceipts(
  client: ChainClient,
  txs: RpcLog[][],
  request: ProxySettlementsRequest,
  context: LogsContext,
): Promise<ProxySettlement[]> {
  const run = context.run ?? ((fn) => fn());
  const first = txs[0]![0]!;
  const blockHash = first.blockHash.toLowerCase();
  return run(() =>
    client.request('eth_getBlockReceipts', [first.blockNumber], {
      signal: context.signal,
      validate: (raw) => {
        if (!Array.isArray(raw))
          throw new InvalidResponseError('eth_getBlockReceipts returned no list', { block: first.blockNumber });
        const byTx = new Map<string, unknown>();
        for (const receipt of raw as unknown[]) {
          const r = receipt as { transactionHash?: unknown; blockHash?: unknown } | null;
          // Every receipt of the block is checked for the block hash, not only the ones used.
          if (typeof r?.blockHash !== 'string' || r.blockHash.toLowerCase() !== blockHash)
            throw new InvalidResponseError('transaction receipt refused: receipt of another block hash than its logs', {
              block: first.blockNumber,
            });
          if (typeof r.transactionHash === 'string') byTx.set(r.transactionHash.toLowerCase(), receipt);
        }
        return txs.flatMap((logs) =>
          pairWithReceipt(byTx.get(logs[0]!.transactionHash.toLowerCase()) ?? null, logs, request.usdcAddress),
        );
      },
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// (b), (c) The batch contract's Claimed and ChannelCreated logs.

export interface BatchLogsRequest {
  fromBlock: bigint;
  toBlock: bigint;
  anchor?: Anchor;
}

/**
 * Every `Claimed` log of the batch-settlement contract in [fromBlock, toBlock], decoded, none
 * skipped (a zero claim, a claim of a non-USDC channel: the method decides). One eth_getLogs per
 * span of the range.
 */
export async function fetchClaims(
  client: ChainClient,
  request: BatchLogsRequest,
  context: LogsContext,
): Promise<ClaimedLog[]> {
  const query = eventQuery(
    X402_CONTRACTS.batchSettlement as Hex,
    X402_TOPIC0.batchClaimed as Hex,
    { topicCount: 3, dataBytes: 64 },
    decodeClaimed,
    request.anchor,
  );
  return consistent(() => getLogsAdaptive(client, query, request.fromBlock, request.toBlock, context));
}

/**
 * Every `ChannelCreated` log of the batch-settlement contract in [fromBlock, toBlock], with its
 * decoded config; a channel created again (after a refund to zero) appears once per log. The sync
 * reads it from the contract's deployment block on, once, then range by range as the head moves.
 * One eth_getLogs per span of the range.
 */
export async function fetchChannelsCreated(
  client: ChainClient,
  request: BatchLogsRequest,
  context: LogsContext,
): Promise<ChannelCreatedLog[]> {
  const query = eventQuery(
    X402_CONTRACTS.batchSettlement as Hex,
    X402_TOPIC0.batchChannelCreated as Hex,
    { topicCount: 2, dataBytes: 7 * 32 },
    decodeChannelCreated,
    request.anchor,
  );
  return consistent(() => getLogsAdaptive(client, query, request.fromBlock, request.toBlock, context));
}

// ---------------------------------------------------------------------------------------------
// (d) The sellers' outgoing USDC Transfers.

export interface SellerOutgoingRequest {
  usdcAddress: string;
  /** Seller addresses (any case). */
  sellers: readonly string[];
  fromBlock: bigint;
  toBlock: bigint;
  /** Sellers per topic filter (topic1 = from). Default 500, as fetchPaymentLogs' payer batches. */
  sellerBatchSize?: number;
  anchor?: Anchor;
}

/**
 * Every USDC `Transfer` FROM one of `sellers` in [fromBlock, toBlock], any recipient and value
 * (`seller_funded` counts any such transfer, an x402 settlement included). One eth_getLogs per span
 * of the range and batch of sellers.
 */
export async function fetchSellerOutgoing(
  client: ChainClient,
  request: SellerOutgoingRequest,
  context: LogsContext,
): Promise<TransferLog[]> {
  const usdc = request.usdcAddress.toLowerCase() as Hex;
  const topics = [...new Set(request.sellers.map(addressTopic))];
  const batchSize = request.sellerBatchSize ?? 500;
  return consistent(async () => {
    const batches: Promise<TransferLog[]>[] = [];
    for (let i = 0; i < topics.length; i += batchSize) {
      const batch = topics.slice(i, i + batchSize);
      batches.push(
        getLogsAdaptive(
          client,
          {
            address: usdc,
            topics: [TRANSFER_TOPIC, batch],
            expect: {
              address: usdc,
              topic0: TRANSFER_TOPIC,
              topicCount: 3,
              dataBytes: 32,
              filter: { index: 1, topics: new Set(batch) },
              knownHashes: knownHashesOf(request.anchor),
            },
            decode: decodeTransfer,
          },
          request.fromBlock,
          request.toBlock,
          context,
        ),
      );
    }
    const out = (await Promise.all(batches)).flat();
    return out.sort((a, b) =>
      a.blockNumber < b.blockNumber ? -1 : a.blockNumber > b.blockNumber ? 1 : a.logIndex - b.logIndex,
    );
  });
}

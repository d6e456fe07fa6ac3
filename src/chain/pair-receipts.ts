import { InvalidResponseError } from './errors.ts';
import { TRANSFER_TOPIC, topicAddress } from './events.ts';
import type { RpcLog } from './rpc-schema.ts';
import type { Hex } from './types.ts';
import { X402_CONTRACTS, X402_TOPIC0 } from './x402.ts';

/** The USDC Transfer a proxy settlement log is paired with: the last one before it in its transaction. */
export interface PairedTransfer {
  logIndex: number;
  from: Hex;
  to: Hex;
  value: bigint;
}

/** A `Settled()` or `SettledWithPermit()` log of one of the two Permit2 proxies, paired. */
export interface ProxySettlement {
  blockNumber: bigint;
  blockHash: Hex;
  txHash: Hex;
  /** The proxy log's index. */
  logIndex: number;
  proxy: 'exact' | 'upto';
  withPermit: boolean;
  /** The last USDC Transfer log before the proxy log in its transaction, or 'unpaired' when none is. */
  transfer: PairedTransfer | 'unpaired';
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const is = (pattern: RegExp, value: unknown): value is string => typeof value === 'string' && pattern.test(value);

interface ReceiptLog {
  address: string;
  topics: string[];
  data: string;
  logIndex: number;
}

function refuse(why: string, details: Record<string, unknown>): never {
  throw new InvalidResponseError(`transaction receipt refused: ${why}`, details);
}

/**
 * Checks one raw receipt against the transaction and block its proxy logs came from, and returns
 * its logs ordered by index. A null receipt, a receipt of another transaction or of another block
 * (hash or number: the node has another fork than the one the logs came from), a malformed log, or
 * a log of the receipt that says it belongs to another block, is an InvalidResponseError: the
 * request is retried (ChainClient.request), and a node that keeps answering so ends the run as a
 * temporary fault.
 */
export function receiptLogs(raw: unknown, expect: { txHash: Hex; blockHash: Hex; blockNumber: bigint }): ReceiptLog[] {
  const details = { tx: expect.txHash, block: expect.blockNumber.toString() };
  if (raw === null || raw === undefined) refuse('no receipt for a transaction the logs hold', details);
  if (typeof raw !== 'object' || Array.isArray(raw)) refuse('not an object', details);
  const r = raw as Record<string, unknown>;
  if (!is(HASH, r.transactionHash) || r.transactionHash.toLowerCase() !== expect.txHash)
    refuse('receipt of another transaction', details);
  if (!is(HASH, r.blockHash) || r.blockHash.toLowerCase() !== expect.blockHash)
    refuse('receipt of another block hash than its logs', { ...details, receiptBlockHash: r.blockHash });
  if (!is(QUANTITY, r.blockNumber) || BigInt(r.blockNumber) !== expect.blockNumber)
    refuse('receipt of another block number than its logs', details);
  if (!Array.isArray(r.logs)) refuse('logs is not an array', details);
  const out: ReceiptLog[] = [];
  const seen = new Set<number>();
  for (const item of r.logs as unknown[]) {
    if (typeof item !== 'object' || item === null) refuse('malformed log', details);
    const log = item as Record<string, unknown>;
    if (!is(ADDRESS, log.address) || !Array.isArray(log.topics) || !is(DATA, log.data) || !is(QUANTITY, log.logIndex))
      refuse('malformed log', details);
    for (const t of log.topics as unknown[]) if (!is(HASH, t)) refuse('malformed log topic', details);
    if (log.removed === true) refuse('removed log', details);
    if (log.blockHash !== undefined && (!is(HASH, log.blockHash) || log.blockHash.toLowerCase() !== expect.blockHash))
      refuse('a log of the receipt names another block', details);
    if (log.transactionHash !== undefined && String(log.transactionHash).toLowerCase() !== expect.txHash)
      refuse('a log of the receipt names another transaction', details);
    const logIndex = Number(BigInt(log.logIndex));
    if (seen.has(logIndex)) refuse('two logs at one index', details);
    seen.add(logIndex);
    out.push({ address: log.address.toLowerCase(), topics: log.topics as string[], data: log.data, logIndex });
  }
  return out.sort((a, b) => a.logIndex - b.logIndex);
}

/**
 * Pairs each proxy log of one transaction with the last USDC Transfer log before it in that
 * transaction (SPEC, Method 3.0.0: "the USDC Transfer that the proxy caused"), using the
 * transaction's receipt. Every proxy log must be in the receipt at its index, with its address and
 * topic0 (else the receipt is refused as above). A Transfer is a log of `usdc` with the Transfer
 * topic0, three topics and 32 bytes of data; an Approval or AuthorizationUsed before it is skipped.
 * Nothing is decided about the payment itself (the method does).
 */
export function pairWithReceipt(raw: unknown, proxyLogs: readonly RpcLog[], usdcAddress: string): ProxySettlement[] {
  const first = proxyLogs[0];
  if (!first) return [];
  const expect = {
    txHash: first.transactionHash.toLowerCase() as Hex,
    blockHash: first.blockHash.toLowerCase() as Hex,
    blockNumber: BigInt(first.blockNumber),
  };
  const logs = receiptLogs(raw, expect);
  const usdc = usdcAddress.toLowerCase();
  return proxyLogs.map((proxyLog) => {
    const index = Number(proxyLog.logIndex);
    const details = { tx: expect.txHash, logIndex: index };
    if (
      proxyLog.transactionHash.toLowerCase() !== expect.txHash ||
      proxyLog.blockHash.toLowerCase() !== expect.blockHash
    )
      throw new RangeError('pairWithReceipt: proxy logs of several transactions');
    const at = logs.findIndex((l) => l.logIndex === index);
    const inReceipt = logs[at];
    const address = proxyLog.address.toLowerCase();
    const topic0 = proxyLog.topics[0]!.toLowerCase();
    if (!inReceipt || inReceipt.address !== address || inReceipt.topics[0]?.toLowerCase() !== topic0)
      refuse('the proxy log is not in the receipt at its index', details);
    let transfer: PairedTransfer | 'unpaired' = 'unpaired';
    for (let i = at - 1; i >= 0; i--) {
      const l = logs[i]!;
      if (l.address !== usdc || l.topics.length !== 3 || l.topics[0]!.toLowerCase() !== TRANSFER_TOPIC) continue;
      const from = topicAddress(l.topics[1]!.toLowerCase());
      const to = topicAddress(l.topics[2]!.toLowerCase());
      if (from === undefined || to === undefined || l.data.length !== 66)
        refuse('a USDC Transfer log of the receipt is malformed', details);
      transfer = { logIndex: l.logIndex, from, to, value: BigInt(l.data) };
      break;
    }
    return {
      ...expect,
      logIndex: index,
      proxy: proxyKind(address),
      withPermit: topic0 === X402_TOPIC0.proxySettledWithPermit,
      transfer,
    };
  });
}

function proxyKind(address: string): 'exact' | 'upto' {
  if (address === X402_CONTRACTS.exactProxy) return 'exact';
  if (address === X402_CONTRACTS.uptoProxy) return 'upto';
  throw new RangeError(`pairWithReceipt: ${address} is not an x402 Permit2 proxy`);
}

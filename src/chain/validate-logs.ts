import { InvalidResponseError } from './errors.ts';
import type { RpcLog } from './rpc-schema.ts';
import type { Hex } from './types.ts';

/** What an eth_getLogs response must agree with. */
export interface LogExpectation {
  address: string;
  fromBlock: bigint;
  toBlock: bigint;
  topic0: Hex;
  /** Number of topics every log must have (the event's indexed arguments + 1). */
  topicCount: number;
  /** Bytes of non-indexed data every log must have. */
  dataBytes: number;
  /** The filter on one topic position: every log must match one of these topics (lowercase). */
  filter: { index: number; topics: ReadonlySet<string> };
  /** Block hashes already known for some numbers (the as-of block, other responses). */
  knownHashes?: { get(number: bigint): Hex | undefined } | undefined;
}

// The shape of RpcLogSchema (rpc-schema.ts), checked by hand: this runs on every log of every
// response (about 420k logs per 30-day backfill), where zod's parse cost about 0.5 s of CPU and
// copied each log. Same rules: the same patterns for hex fields, `removed` a boolean when present,
// `blockTimestamp` a quantity when present, unknown fields ignored (and left on the object).
const QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const matches = (pattern: RegExp, value: unknown): boolean => typeof value === 'string' && pattern.test(value);

/** Why `value` is not an RpcLog, or undefined when it is one. */
function malformed(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'log is not an object';
  const log = value as Record<string, unknown>;
  if (!matches(ADDRESS, log.address)) return 'address: 20-byte hex';
  const topics = log.topics;
  if (!Array.isArray(topics)) return 'topics: not an array';
  for (const topic of topics) if (!matches(HASH, topic)) return 'topics: 32-byte hex';
  if (!matches(DATA, log.data)) return 'data: hex data';
  if (!matches(QUANTITY, log.blockNumber)) return 'blockNumber: hex quantity';
  if (!matches(HASH, log.blockHash)) return 'blockHash: 32-byte hex';
  if (!matches(HASH, log.transactionHash)) return 'transactionHash: 32-byte hex';
  if (!matches(QUANTITY, log.logIndex)) return 'logIndex: hex quantity';
  if (log.removed !== undefined && typeof log.removed !== 'boolean') return 'removed: boolean';
  if (log.blockTimestamp !== undefined && !matches(QUANTITY, log.blockTimestamp)) return 'blockTimestamp: hex quantity';
  return undefined;
}

function inconsistent(log: RpcLog, why: string): never {
  throw new InvalidResponseError(`eth_getLogs returned an inconsistent log: ${why}`, {
    blockNumber: log.blockNumber,
    logIndex: log.logIndex,
  });
}

/**
 * Checks a raw eth_getLogs result and returns its logs, or throws InvalidResponseError when it
 * contradicts itself or the request: a null or malformed result, a removed log, a log of another
 * address or event or outside [fromBlock, toBlock] or not matching the topic filter, two logs at
 * one position, two hashes or timestamps for one block number, a hash that disagrees with a
 * known block. Pure (the returned logs are the response's own objects).
 */
export function validateLogs(raw: unknown, expect: LogExpectation): RpcLog[] {
  if (raw === null || raw === undefined) throw new InvalidResponseError('eth_getLogs returned null');
  if (!Array.isArray(raw))
    throw new InvalidResponseError('eth_getLogs returned malformed logs', { issue: 'result is not an array' });
  for (const item of raw as unknown[]) {
    const issue = malformed(item);
    if (issue !== undefined) throw new InvalidResponseError('eth_getLogs returned malformed logs', { issue });
  }
  const logs = raw as RpcLog[];
  const address = expect.address.toLowerCase();
  const from = Number(expect.fromBlock);
  const to = Number(expect.toBlock);
  const positions = new Set<number>();
  const hashes = new Map<number, string>();
  const times = new Map<number, string>();
  const dataLength = 2 + expect.dataBytes * 2;
  const filterIndex = expect.filter.index;
  for (const log of logs) {
    if (log.removed === true) inconsistent(log, 'removed log');
    if (log.address !== address && log.address.toLowerCase() !== address) inconsistent(log, 'log of another address');
    if (log.topics.length !== expect.topicCount || log.topics[0]!.toLowerCase() !== expect.topic0)
      inconsistent(log, 'log of another event');
    if (log.data.length !== dataLength) inconsistent(log, 'data of the wrong length');
    if (!expect.filter.topics.has(log.topics[filterIndex]!.toLowerCase()))
      inconsistent(log, 'log not matching the filter');
    // Block numbers and log indexes stay far below 2^53: plain numbers are exact and fast here.
    const number = Number(log.blockNumber);
    if (number < from || number > to) inconsistent(log, 'log outside the requested range');
    const position = number * 1_000_000 + Number(log.logIndex);
    if (positions.has(position)) inconsistent(log, 'two logs at one position');
    positions.add(position);
    const blockHash = log.blockHash.toLowerCase();
    const seen = hashes.get(number) ?? expect.knownHashes?.get(BigInt(number));
    if (seen !== undefined && seen !== blockHash) inconsistent(log, 'block hash disagrees with the block');
    hashes.set(number, blockHash);
    if (log.blockTimestamp !== undefined) {
      const seenTs = times.get(number);
      if (seenTs !== undefined && Number(seenTs) !== Number(log.blockTimestamp))
        inconsistent(log, 'two timestamps for one block');
      times.set(number, log.blockTimestamp);
    }
  }
  return logs;
}

import { InvalidResponseError } from './errors.ts';
import { addressTopic } from './events.ts';
import { RpcLogsSchema, type RpcLog } from './rpc-schema.ts';
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

/**
 * Checks a raw eth_getLogs result and returns its logs, or throws InvalidResponseError when it
 * contradicts itself or the request: a null or malformed result, a removed log, a log of another
 * address or event or outside [fromBlock, toBlock] or not matching the topic filter, two logs at
 * one position, two hashes or timestamps for one block number, a hash that disagrees with a
 * known block. Pure.
 */
export function validateLogs(raw: unknown, expect: LogExpectation): RpcLog[] {
  if (raw === null || raw === undefined) throw new InvalidResponseError('eth_getLogs returned null');
  const parsed = RpcLogsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new InvalidResponseError('eth_getLogs returned malformed logs', { issue: parsed.error.issues[0]?.message });
  }
  const address = expect.address.toLowerCase();
  const from = Number(expect.fromBlock);
  const to = Number(expect.toBlock);
  const positions = new Set<number>();
  const hashes = new Map<number, string>();
  const times = new Map<number, string>();
  const dataLength = 2 + expect.dataBytes * 2;
  const filterIndex = expect.filter.index;
  for (const log of parsed.data) {
    const fail = (why: string) => {
      throw new InvalidResponseError(`eth_getLogs returned an inconsistent log: ${why}`, {
        blockNumber: log.blockNumber,
        logIndex: log.logIndex,
      });
    };
    if (log.removed === true) fail('removed log');
    if (log.address !== address && log.address.toLowerCase() !== address) fail('log of another address');
    if (log.topics.length !== expect.topicCount || log.topics[0]!.toLowerCase() !== expect.topic0) fail('log of another event');
    if (log.data.length !== dataLength) fail('data of the wrong length');
    if (!expect.filter.topics.has(log.topics[filterIndex]!.toLowerCase())) fail('log not matching the filter');
    // Block numbers and log indexes stay far below 2^53: plain numbers are exact and fast here.
    const number = Number(log.blockNumber);
    if (number < from || number > to) fail('log outside the requested range');
    const position = number * 1_000_000 + Number(log.logIndex);
    if (positions.has(position)) fail('two logs at one position');
    positions.add(position);
    const blockHash = log.blockHash.toLowerCase();
    const seen = hashes.get(number) ?? expect.knownHashes?.get(BigInt(number));
    if (seen !== undefined && seen !== blockHash) fail('block hash disagrees with the block');
    hashes.set(number, blockHash);
    if (log.blockTimestamp !== undefined) {
      const seenTs = times.get(number);
      if (seenTs !== undefined && Number(seenTs) !== Number(log.blockTimestamp)) fail('two timestamps for one block');
      times.set(number, log.blockTimestamp);
    }
  }
  return parsed.data;
}

/** The topic set for a filter on addresses. */
export function addressTopics(addresses: Iterable<string>): Set<string> {
  const set = new Set<string>();
  for (const a of addresses) set.add(addressTopic(a));
  return set;
}

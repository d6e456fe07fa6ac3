import { describe, expect, it } from 'vitest';
import { InvalidResponseError } from './errors.ts';
import { addressTopic, TRANSFER_TOPIC } from './events.ts';
import { RpcLogSchema } from './rpc-schema.ts';
import { validateLogs, type LogExpectation } from './validate-logs.ts';
import { BASE_USDC as usdc } from '../config/index.ts';

const seller = `0x${'aa'.repeat(20)}`;
const payer = `0x${'bb'.repeat(20)}`;
const hashA = `0x${'01'.repeat(32)}` as const;
const expectation: LogExpectation = {
  address: usdc,
  fromBlock: 100n,
  toBlock: 200n,
  topic0: TRANSFER_TOPIC,
  topicCount: 3,
  dataBytes: 32,
  filter: { index: 2, topics: new Set([addressTopic(seller)]) },
};
const log = (over: Record<string, unknown> = {}) => ({
  address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  topics: [TRANSFER_TOPIC, addressTopic(payer), addressTopic(seller)],
  data: `0x${'00'.repeat(31)}64`,
  blockNumber: '0x96',
  blockHash: hashA,
  transactionHash: `0x${'0c'.repeat(32)}`,
  logIndex: '0x0',
  ...over,
});

describe('validateLogs', () => {
  it('default: accepts consistent logs (any address case)', () => {
    expect(validateLogs([log(), log({ logIndex: '0x1' })], expectation).map((l) => l.logIndex)).toEqual(['0x0', '0x1']);
  });

  it.each([
    ['null result', null, 'returned null'],
    ['malformed', [{ ...log(), blockNumber: 150 }], 'malformed'],
    ['removed', [log({ removed: true })], 'removed'],
    ['other address', [log({ address: `0x${'12'.repeat(20)}` })], 'another address'],
    [
      'other event',
      [log({ topics: [`0x${'99'.repeat(32)}`, addressTopic(payer), addressTopic(seller)] })],
      'another event',
    ],
    [
      'not in filter',
      [log({ topics: [TRANSFER_TOPIC, addressTopic(payer), addressTopic(payer)] })],
      'matching the filter',
    ],
    ['below range', [log({ blockNumber: '0x63' })], 'outside the requested range'],
    ['above range', [log({ blockNumber: '0xc9' })], 'outside the requested range'],
    ['duplicate position', [log(), log()], 'one position'],
    ['two hashes for a block', [log(), log({ logIndex: '0x1', blockHash: `0x${'02'.repeat(32)}` })], 'disagrees'],
    [
      'two timestamps for a block',
      [log({ blockTimestamp: '0x1' }), log({ logIndex: '0x1', blockTimestamp: '0x2' })],
      'two timestamps',
    ],
    ['short data', [log({ data: '0x64' })], 'wrong length'],
  ])('error: %s', (_name, raw, message) => {
    expect(() => validateLogs(raw, expectation)).toThrow(InvalidResponseError);
    expect(() => validateLogs(raw, expectation)).toThrow(message);
  });

  it('error: a log disagreeing with a known block hash', () => {
    const known = { get: (n: bigint) => (n === 150n ? (`0x${'03'.repeat(32)}` as const) : undefined) };
    expect(() => validateLogs([log()], { ...expectation, knownHashes: known })).toThrow('disagrees with the block');
  });

  // The shape check is hand-written for speed; RpcLogSchema (zod) is the reference it must agree
  // with, on well-formed and malformed logs alike.
  it.each([
    ['well formed', log()],
    ['with blockTimestamp', log({ blockTimestamp: '0x5f5e100' })],
    ['with removed false', log({ removed: false })],
    ['unknown field', log({ transactionIndex: '0x3' })],
    ['numeric blockNumber', log({ blockNumber: 150 })],
    ['odd-length data', log({ data: '0x123' })],
    ['non-hex data', log({ data: '0xzz' })],
    ['short address', log({ address: '0x1234' })],
    ['missing transactionHash', log({ transactionHash: undefined })],
    ['short blockHash', log({ blockHash: '0x01' })],
    ['topics not an array', log({ topics: TRANSFER_TOPIC })],
    ['short topic', log({ topics: [TRANSFER_TOPIC, '0x01', addressTopic(seller)] })],
    ['empty quantity', log({ logIndex: '0x' })],
    ['null blockTimestamp', log({ blockTimestamp: null })],
    ['string removed', log({ removed: 'no' })],
    ['null log', null],
    ['array as log', []],
  ])('behavior: the shape check agrees with RpcLogSchema: %s', (_name, item) => {
    const reference = RpcLogSchema.safeParse(item).success;
    let malformed = false;
    try {
      validateLogs([item], expectation);
    } catch (error) {
      malformed = error instanceof InvalidResponseError && error.message.includes('malformed');
    }
    expect(malformed).toBe(!reference);
  });
});

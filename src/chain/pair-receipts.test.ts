import { describe, expect, it } from 'vitest';
import { InvalidResponseError, shouldRetry } from './errors.ts';
import { addressTopic, AUTHORIZATION_USED_TOPIC, TRANSFER_TOPIC } from './events.ts';
import { pairWithReceipt } from './pair-receipts.ts';
import type { RpcLog } from './rpc-schema.ts';
import { X402_CONTRACTS, X402_TOPIC0 } from './x402.ts';
import { BASE_USDC as usdc } from '../config/index.ts';

// A receipt written by hand: the expected pairings below are read off it, not computed.
const payer = `0x${'bb'.repeat(20)}`;
const seller = `0x${'aa'.repeat(20)}`;
const other = `0x${'cc'.repeat(20)}`;
const tx = `0x${'0c'.repeat(32)}`;
const blockHash = `0x${'01'.repeat(32)}`;
const otherBlockHash = `0x${'02'.repeat(32)}`;
const word = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;

const rlog = (logIndex: number, address: string, topics: string[], data = '0x') => ({
  address,
  topics,
  data,
  blockNumber: '0x64',
  blockHash,
  transactionHash: tx,
  logIndex: `0x${logIndex.toString(16)}`,
  removed: false,
});
const transfer = (i: number, from: string, to: string, value: bigint) =>
  rlog(i, usdc, [TRANSFER_TOPIC, addressTopic(from), addressTopic(to)], word(value));

// 0 Transfer other->seller 7; 1 Transfer payer->seller 1500; 2 exact Settled();
// 3 AuthorizationUsed; 4 upto SettledWithPermit() (last Transfer before it: index 1);
// 5 Transfer payer->other 9 (after every proxy log: pairs with none).
const receiptLogsList = [
  transfer(0, other, seller, 7n),
  transfer(1, payer, seller, 1500n),
  rlog(2, X402_CONTRACTS.exactProxy, [X402_TOPIC0.proxySettled]),
  rlog(3, usdc, [AUTHORIZATION_USED_TOPIC, addressTopic(payer), word(5n)]),
  rlog(4, X402_CONTRACTS.uptoProxy, [X402_TOPIC0.proxySettledWithPermit]),
  transfer(5, payer, other, 9n),
];
const receipt = (over: Record<string, unknown> = {}) => ({
  transactionHash: tx,
  blockHash,
  blockNumber: '0x64',
  status: '0x1',
  logs: receiptLogsList,
  ...over,
});
const proxyLogs = [receiptLogsList[2], receiptLogsList[4]] as unknown as RpcLog[];

describe('pairWithReceipt', () => {
  it('default: each proxy log pairs with the last USDC Transfer before it in the transaction', () => {
    expect(pairWithReceipt(receipt(), proxyLogs, usdc)).toEqual([
      {
        blockNumber: 100n,
        blockHash,
        txHash: tx,
        logIndex: 2,
        proxy: 'exact',
        withPermit: false,
        transfer: { logIndex: 1, from: payer, to: seller, value: 1500n },
      },
      {
        blockNumber: 100n,
        blockHash,
        txHash: tx,
        logIndex: 4,
        proxy: 'upto',
        withPermit: true,
        transfer: { logIndex: 1, from: payer, to: seller, value: 1500n },
      },
    ]);
  });

  it('edge: a proxy log with no USDC Transfer before it is unpaired (a Transfer of another token does not count)', () => {
    const token = `0x${'dd'.repeat(20)}`;
    const logs = [
      rlog(0, token, [TRANSFER_TOPIC, addressTopic(payer), addressTopic(seller)], word(3n)),
      rlog(1, X402_CONTRACTS.exactProxy, [X402_TOPIC0.proxySettled]),
    ];
    expect(pairWithReceipt(receipt({ logs }), [logs[1]] as unknown as RpcLog[], usdc)[0]!.transfer).toBe('unpaired');
  });

  it.each([
    ['a receipt of another block hash', receipt({ blockHash: otherBlockHash }), 'another block hash'],
    ['a receipt of another block number', receipt({ blockNumber: '0x65' }), 'another block number'],
    ['a missing receipt', null, 'no receipt'],
    ['a receipt of another transaction', receipt({ transactionHash: `0x${'0d'.repeat(32)}` }), 'another transaction'],
    [
      'a receipt whose log names another block',
      receipt({ logs: receiptLogsList.map((l) => ({ ...l, blockHash: otherBlockHash })) }),
      'another block',
    ],
    ['a receipt without the proxy log', receipt({ logs: receiptLogsList.slice(0, 2) }), 'not in the receipt'],
  ])('error: %s is refused as a retryable fault', (_name, raw, message) => {
    let caught: unknown;
    try {
      pairWithReceipt(raw, proxyLogs, usdc);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidResponseError);
    expect((caught as Error).message).toContain(message);
    expect(shouldRetry(caught)).toBe(true);
  });
});

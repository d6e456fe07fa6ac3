import { TallyError, TemporaryError } from '../lib/errors.ts';
import type { BlockCache } from './block-cache.ts';
import type { ChainClient } from './client.ts';
import { decodeAuthorization, decodeTransfer } from './decode.ts';
import { addressTopic, AUTHORIZATION_USED_TOPIC, TRANSFER_TOPIC } from './events.ts';
import { getLogsAdaptive, type LogsContext } from './get-logs.ts';
import type { AuthorizationLog, Hex, TransferLog } from './types.ts';

/** A block the stored rows refer to: number, hash, timestamp (unix seconds). */
export interface BlockRecord {
  number: bigint;
  hash: Hex;
  timestamp: bigint;
}

export interface PaymentLogs {
  /** Transfers to the sellers, each with its block's timestamp. */
  transfers: (TransferLog & { blockTimestamp: bigint })[];
  /** AuthorizationUsed logs of the transactions of `transfers` whose authorizer paid in them. */
  authorizations: (AuthorizationLog & { blockTimestamp: bigint })[];
  /** Every block holding one of these logs, plus the range's end block (for reorg checks). */
  blocks: BlockRecord[];
}

export interface PaymentLogsRequest {
  usdcAddress: string;
  /** Seller addresses (any case), at most a few hundred: they go into one topic filter. */
  sellers: readonly string[];
  fromBlock: bigint;
  toBlock: bigint;
  /** Payers per AuthorizationUsed topic filter. Default 500. */
  payerBatchSize?: number;
  /** The as-of block: a log in it must carry its hash. */
  anchor?: { number: bigint; hash: Hex } | undefined;
}

/** Two responses (logs, headers) that disagree about a block: one of them is wrong. */
class CrossCheckError extends TallyError {
  constructor(
    readonly block: bigint,
    why: string,
  ) {
    super(`responses disagree about block ${block}: ${why}`);
  }
}

// Contradictions between two responses cannot be pinned on one request, so the whole chunk is
// read again (a bounded re-read, not a transport retry: those live in ChainClient.request only).
const READS = 3;

/**
 * The x402 settlement evidence for a batch of sellers over [fromBlock, toBlock]:
 * 1. USDC `Transfer` logs with `to` among the sellers;
 * 2. USDC `AuthorizationUsed` logs over the same range with `authorizer` among those transfers'
 *    payers (asked per request span of transfers as soon as it is in, over that span's blocks with
 *    transfers), kept when they share a transaction with one of the transfers;
 * 3. the headers of the blocks involved (for timestamps the provider did not send with the logs,
 *    and for the end block, which lets a later run detect a reorg even where there are no logs).
 * Every response is validated; logs, other logs and headers must agree on each block's hash and
 * timestamp. Whether a transfer is a verified payment is decided later, in SQL (the join by
 * transaction); nothing is filtered on value or payer here. Read-only; safe to repeat.
 */
export async function fetchPaymentLogs(
  client: ChainClient,
  request: PaymentLogsRequest,
  context: LogsContext & { blocks: BlockCache },
): Promise<PaymentLogs> {
  for (let read = 1; ; read++) {
    try {
      return await readOnce(client, request, context);
    } catch (error) {
      if (!(error instanceof CrossCheckError)) throw error;
      context.blocks.forget(error.block);
      if (read >= READS) {
        throw new TemporaryError('the RPC keeps answering inconsistently about a block', {
          details: { block: error.block.toString(), reason: error.message },
        });
      }
    }
  }
}

async function readOnce(
  client: ChainClient,
  request: PaymentLogsRequest,
  context: LogsContext & { blocks: BlockCache },
): Promise<PaymentLogs> {
  const usdc = request.usdcAddress.toLowerCase() as Hex;
  const anchor = request.anchor;
  const knownHashes = { get: (n: bigint) => (anchor && n === anchor.number ? anchor.hash : undefined) };
  const sellerTopics = topicsOf(request.sellers);
  const transferQuery = {
    address: usdc,
    topics: [TRANSFER_TOPIC, null, sellerTopics],
    expect: {
      address: usdc,
      topic0: TRANSFER_TOPIC,
      topicCount: 3,
      dataBytes: 32,
      filter: { index: 2, topics: topicSetOf(sellerTopics) },
      knownHashes,
    },
    decode: decodeTransfer,
  };
  const batchSize = request.payerBatchSize ?? 500;
  // The end block's header depends on no log: asked at once, alongside the logs.
  const endHeader = context.blocks.get(request.toBlock, context.signal);
  endHeader.catch(() => {}); // awaited below

  // An authorization shares its transaction, so its block, with the transfer it authorizes: the
  // transfers of each request span are matched over their own blocks with their own payers, which
  // keeps both the filters and the answers small. Each span's AuthorizationUsed requests go out as
  // soon as its transfers are in (not after the whole chunk's), so with a remote provider a chunk's
  // dependent requests overlap its other spans and the next chunks' requests instead of waiting.
  const pieces: Promise<{ transfers: TransferLog[]; authorizations: AuthorizationLog[] }>[] = [];
  for (let start = request.fromBlock; start <= request.toBlock;) {
    const end = start + context.limit.span - 1n < request.toBlock ? start + context.limit.span - 1n : request.toBlock;
    pieces.push(
      getLogsAdaptive(client, transferQuery, start, end, context).then(async (transfers) => ({
        transfers,
        authorizations: await authorizationsOf(client, usdc, transfers, batchSize, knownHashes, context),
      })),
    );
    start = end + 1n;
  }
  const transfers: TransferLog[] = [];
  const authorizations: AuthorizationLog[] = [];
  for (const piece of await Promise.all(pieces)) {
    for (const t of piece.transfers) transfers.push(t);
    for (const a of piece.authorizations) authorizations.push(a);
  }

  // One hash and one timestamp per block across both responses.
  const hashes = new Map<bigint, Hex>();
  const times = new Map<bigint, bigint>();
  const note = (log: TransferLog | AuthorizationLog) => {
    const hash = hashes.get(log.blockNumber);
    if (hash !== undefined && hash !== log.blockHash)
      throw new CrossCheckError(log.blockNumber, 'two block hashes in the logs');
    hashes.set(log.blockNumber, log.blockHash);
    if (log.blockTimestamp !== undefined) {
      const ts = times.get(log.blockNumber);
      if (ts !== undefined && ts !== log.blockTimestamp)
        throw new CrossCheckError(log.blockNumber, 'two timestamps in the logs');
      times.set(log.blockNumber, log.blockTimestamp);
    }
  };
  for (const log of transfers) note(log);
  for (const log of authorizations) note(log);

  // Headers: the end block always; a block with logs when the provider sent no timestamp.
  const needed = new Set<bigint>();
  for (const n of hashes.keys()) if (!times.has(n) && n !== request.toBlock) needed.add(n);
  const headers = await Promise.all([endHeader, ...[...needed].map((n) => context.blocks.get(n, context.signal))]);
  const blocks = new Map<bigint, BlockRecord>();
  for (const h of headers) {
    const logHash = hashes.get(h.number);
    if (logHash !== undefined && logHash !== h.hash)
      throw new CrossCheckError(h.number, 'the logs disagree with the block hash');
    const logTime = times.get(h.number);
    if (logTime !== undefined && logTime !== h.timestamp)
      throw new CrossCheckError(h.number, 'the logs disagree with the block timestamp');
    times.set(h.number, h.timestamp);
    blocks.set(h.number, { number: h.number, hash: h.hash, timestamp: h.timestamp });
  }
  for (const [number, hash] of hashes) {
    if (!blocks.has(number)) blocks.set(number, { number, hash, timestamp: times.get(number)! });
  }
  // The decoded logs are this read's own objects: stamped in place rather than copied (a copy of
  // every log per chunk was a measurable share of the indexer's garbage).
  for (const log of transfers) log.blockTimestamp = times.get(log.blockNumber)!;
  for (const log of authorizations) log.blockTimestamp = times.get(log.blockNumber)!;
  return {
    transfers: transfers as PaymentLogs['transfers'],
    authorizations: authorizations as PaymentLogs['authorizations'],
    blocks: [...blocks.values()],
  };
}

/**
 * The AuthorizationUsed logs, over the blocks of `transfers`, of their payers (`batchSize` payers per
 * topic filter) that share a transaction with one of them: only those can make one a payment.
 */
async function authorizationsOf(
  client: ChainClient,
  usdc: Hex,
  transfers: readonly TransferLog[],
  batchSize: number,
  knownHashes: { get: (n: bigint) => Hex | undefined },
  context: LogsContext,
): Promise<AuthorizationLog[]> {
  if (transfers.length === 0) return [];
  let from = transfers[0]!.blockNumber;
  let to = from;
  const payers = new Set<Hex>();
  const txs = new Set<Hex>();
  for (const t of transfers) {
    if (t.blockNumber < from) from = t.blockNumber;
    if (t.blockNumber > to) to = t.blockNumber;
    payers.add(addressTopic(t.from));
    txs.add(t.txHash);
  }
  const list = [...payers];
  const batches: Promise<AuthorizationLog[]>[] = [];
  for (let i = 0; i < list.length; i += batchSize) {
    const batch = list.slice(i, i + batchSize);
    batches.push(
      getLogsAdaptive(
        client,
        {
          address: usdc,
          topics: [AUTHORIZATION_USED_TOPIC, batch],
          expect: {
            address: usdc,
            topic0: AUTHORIZATION_USED_TOPIC,
            topicCount: 3,
            dataBytes: 0,
            filter: { index: 1, topics: new Set(batch) },
            knownHashes,
          },
          decode: decodeAuthorization,
        },
        from,
        to,
        context,
      ),
    );
  }
  const out: AuthorizationLog[] = [];
  for (const batch of await Promise.all(batches)) for (const a of batch) if (txs.has(a.txHash)) out.push(a);
  return out;
}

// A batch's sellers are the same array for every chunk: its topic filter is built once.
const topicCache = new WeakMap<readonly string[], Hex[]>();
function topicsOf(sellers: readonly string[]): Hex[] {
  let topics = topicCache.get(sellers);
  if (!topics) {
    topics = [...new Set(sellers.map(addressTopic))];
    topicCache.set(sellers, topics);
  }
  return topics;
}

const topicSets = new WeakMap<Hex[], Set<string>>();
function topicSetOf(topics: Hex[]): Set<string> {
  let set = topicSets.get(topics);
  if (!set) {
    set = new Set(topics);
    topicSets.set(topics, set);
  }
  return set;
}

import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addressTopic, AUTHORIZATION_USED_TOPIC, TRANSFER_TOPIC } from '../../src/chain/index.ts';

/**
 * An in-memory chain served over JSON-RPC (node:http): enough of eth_getLogs,
 * eth_getBlockByNumber, eth_blockNumber and eth_chainId for the indexer, answering like a real
 * node (hex quantities, logs sorted by block and index). For tests of the sync without a node,
 * as the upstream of the fault proxy, and for the benchmark (indexed, so it serves 10^5 logs fast).
 */

export type Hex = `0x${string}`;

export interface FakeLog {
  blockNumber: number;
  logIndex: number;
  txHash: Hex;
  topics: Hex[];
  data: Hex;
  /** The emitting contract; USDC when absent. */
  address?: string;
}

export interface FakeChainOptions {
  usdc: string;
  /** Blocks 0..head. */
  head: number;
  genesisTimestamp: number;
  blockTime: number;
  /** Send the non-standard blockTimestamp field with logs. */
  blockTimestampInLogs?: boolean;
  /** Changes every block hash from this number on (a reorg). */
  salt?: string;
  chainId?: number;
}

const hex = (n: number | bigint) => `0x${n.toString(16)}`;
const word = (v: bigint) => `0x${v.toString(16).padStart(64, '0')}` as Hex;

export class FakeChain {
  readonly logs: FakeLog[] = [];
  #index = new Map<string, FakeLog[]>();
  #sorted = true;
  #forks: { from: number; salt: string }[] = [];
  #nextLogIndex = new Map<number, number>();
  #byTx = new Map<string, FakeLog[]>();

  constructor(readonly options: FakeChainOptions) {}

  timestamp(n: number): number {
    // Math.floor: with blocks of 0.2 s (Base since Denim), five consecutive blocks share a second.
    return this.options.genesisTimestamp + Math.floor(n * this.options.blockTime);
  }

  hash(n: number): Hex {
    let salt = this.options.salt ?? '';
    for (const f of this.#forks) if (n >= f.from) salt = f.salt;
    return `0x${createHash('sha256').update(`${salt}:${n}`).digest('hex')}`;
  }

  /** Every block from `from` on gets a new hash; logs at or above it are dropped. */
  reorg(from: number, salt: string): void {
    this.#forks.push({ from, salt });
    const kept = this.logs.filter((l) => l.blockNumber < from);
    this.logs.length = 0;
    this.logs.push(...kept);
    this.#index.clear();
    this.#nextLogIndex.clear();
    this.#byTx.clear();
    for (const l of kept) this.#add(l);
  }

  #add(log: FakeLog): void {
    this.#nextLogIndex.set(log.blockNumber, Math.max(this.#nextLogIndex.get(log.blockNumber) ?? 0, log.logIndex + 1));
    const ofTx = this.#byTx.get(log.txHash);
    if (ofTx) ofTx.push(log);
    else this.#byTx.set(log.txHash, [log]);
    for (let i = 1; i < log.topics.length; i++) {
      const key = `${log.topics[0]}:${i}:${log.topics[i]}`;
      const list = this.#index.get(key);
      if (list) list.push(log);
      else this.#index.set(key, [log]);
    }
    this.#sorted = false;
  }

  /** Appends a log at the next index of its block (of USDC unless `address` is given). */
  log(blockNumber: number, txHash: Hex, topics: Hex[], data: Hex = '0x', address?: string): FakeLog {
    const log: FakeLog = { blockNumber, logIndex: this.#nextLogIndex.get(blockNumber) ?? 0, txHash, topics, data };
    if (address !== undefined) log.address = address.toLowerCase();
    this.logs.push(log);
    this.#add(log);
    return log;
  }

  // One string per address topic, shared by all its logs: the benchmark's 5M-payment chain has 20,000
  // payers and 10,000 sellers but 10.75M logs, and a copy per log did not fit in the node's heap.
  #topics = new Map<string, Hex>();
  #topic(address: string): Hex {
    let topic = this.#topics.get(address);
    if (topic === undefined) this.#topics.set(address, (topic = addressTopic(address)));
    return topic;
  }

  transfer(blockNumber: number, txHash: Hex, from: string, to: string, value: bigint): FakeLog {
    return this.log(blockNumber, txHash, [TRANSFER_TOPIC, this.#topic(from), this.#topic(to)], word(value));
  }

  authorization(blockNumber: number, txHash: Hex, authorizer: string, nonce: bigint): FakeLog {
    return this.log(blockNumber, txHash, [AUTHORIZATION_USED_TOPIC, this.#topic(authorizer), word(nonce)]);
  }

  /** An x402 settlement: AuthorizationUsed then Transfer, in one transaction. */
  settle(blockNumber: number, txHash: Hex, from: string, to: string, value: bigint, nonce: bigint): void {
    this.authorization(blockNumber, txHash, from, nonce);
    this.transfer(blockNumber, txHash, from, to, value);
  }

  /**
   * An x402 Permit2 proxy settlement: the USDC Transfer, then the proxy's event (`topic0`,
   * `Settled()` or `SettledWithPermit()`, no data) logged by `proxy`, in one transaction.
   */
  proxySettle(
    blockNumber: number,
    txHash: Hex,
    from: string,
    to: string,
    value: bigint,
    proxy: string,
    topic0: Hex,
  ): void {
    this.transfer(blockNumber, txHash, from, to, value);
    this.log(blockNumber, txHash, [topic0], '0x', proxy);
  }

  /** A receipt holding the transaction's logs (status 1), or null for a transaction with none. */
  receipt(txHash: string): Record<string, unknown> | null {
    const logs = this.#byTx.get(txHash.toLowerCase() as Hex);
    if (!logs || logs.length === 0) return null;
    const n = logs[0]!.blockNumber;
    return {
      transactionHash: txHash.toLowerCase(),
      blockHash: this.hash(n),
      blockNumber: hex(n),
      status: '0x1',
      logs: [...logs].sort((a, b) => a.logIndex - b.logIndex).map((l) => this.rpcLog(l)),
    };
  }

  #ensureSorted(): void {
    if (this.#sorted) return;
    for (const list of this.#index.values())
      list.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    this.#sorted = true;
  }

  block(n: number) {
    return {
      number: hex(n),
      hash: this.hash(n),
      parentHash: n === 0 ? word(0n) : this.hash(n - 1),
      timestamp: hex(this.timestamp(n)),
    };
  }

  getLogs(filter: {
    address?: string;
    topics?: (string | string[] | null)[];
    fromBlock: string;
    toBlock: string;
  }): unknown[] {
    this.#ensureSorted();
    const from = Number(BigInt(filter.fromBlock));
    const to = Number(BigInt(filter.toBlock));
    const address = filter.address?.toLowerCase();
    const usdc = this.options.usdc.toLowerCase();
    const topics = filter.topics ?? [];
    const topic0 = topics[0];
    let position = topics.findIndex((t, i) => i > 0 && t !== null && t !== undefined);
    let candidates: FakeLog[][];
    if (typeof topic0 === 'string' && position > 0) {
      const values = topics[position]!;
      candidates = (Array.isArray(values) ? values : [values]).map(
        (v) => this.#index.get(`${topic0}:${position}:${v.toLowerCase()}`) ?? [],
      );
    } else {
      position = -1;
      candidates = [this.logs];
    }
    const out: FakeLog[] = [];
    for (const list of candidates) {
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (list[mid]!.blockNumber < from) lo = mid + 1;
        else hi = mid;
      }
      for (let i = lo; i < list.length && list[i]!.blockNumber <= to; i++) {
        const log = list[i]!;
        if (address !== undefined && (log.address ?? usdc) !== address) continue;
        if (matches(log, topics)) out.push(log);
      }
    }
    if (candidates.length > 1) out.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    return out.map((l) => this.rpcLog(l));
  }

  rpcLog(l: FakeLog): Record<string, unknown> {
    const out: Record<string, unknown> = {
      address: l.address ?? this.options.usdc,
      topics: l.topics,
      data: l.data,
      blockNumber: hex(l.blockNumber),
      transactionHash: l.txHash,
      transactionIndex: '0x0',
      blockHash: this.hash(l.blockNumber),
      logIndex: hex(l.logIndex),
      removed: false,
    };
    if (this.options.blockTimestampInLogs) out.blockTimestamp = hex(this.timestamp(l.blockNumber));
    return out;
  }

  /** Answers one JSON-RPC call; throws {code, message} for a JSON-RPC error. */
  call(method: string, params: unknown[]): unknown {
    switch (method) {
      case 'eth_chainId':
        return hex(this.options.chainId ?? 8453);
      case 'eth_blockNumber':
        return hex(this.options.head);
      case 'eth_getBlockByNumber': {
        const tag = params[0] as string;
        const n = tag === 'latest' || tag === 'finalized' || tag === 'safe' ? this.options.head : Number(BigInt(tag));
        return n > this.options.head || n < 0 ? null : this.block(n);
      }
      case 'eth_getLogs':
        return this.getLogs(params[0] as never);
      case 'eth_getTransactionReceipt':
        return this.receipt(params[0] as string);
      case 'eth_getBlockReceipts': {
        const n = Number(BigInt(params[0] as string));
        if (n > this.options.head || n < 0) return null;
        const txs = new Set(this.logs.filter((l) => l.blockNumber === n).map((l) => l.txHash));
        return [...txs].map((tx) => this.receipt(tx));
      }
      default:
        throw { code: -32601, message: `the method ${method} does not exist/is not available` };
    }
  }
}

function matches(log: FakeLog, topics: (string | string[] | null)[]): boolean {
  for (let i = 0; i < topics.length; i++) {
    const t = topics[i];
    if (t === null || t === undefined) continue;
    const have = log.topics[i]?.toLowerCase();
    if (have === undefined) return false;
    if (Array.isArray(t) ? !t.some((x) => x.toLowerCase() === have) : t.toLowerCase() !== have) return false;
  }
  return true;
}

export interface RpcServer {
  url: string;
  /** JSON-RPC requests answered, by method. */
  calls: Map<string, number>;
  close(): Promise<void>;
}

/** Serves `handler` (one JSON-RPC call -> result) over HTTP on 127.0.0.1, single and batch requests. */
export async function serveJsonRpc(
  handler: (method: string, params: unknown[]) => unknown,
  options: { latencyMs?: number } = {},
): Promise<RpcServer> {
  const calls = new Map<string, number>();
  const answer = (req: { id: unknown; method: string; params?: unknown[] }) => {
    calls.set(req.method, (calls.get(req.method) ?? 0) + 1);
    try {
      return { jsonrpc: '2.0', id: req.id, result: handler(req.method, req.params ?? []) };
    } catch (e) {
      const err = e as { code?: number; message?: string };
      return { jsonrpc: '2.0', id: req.id, error: { code: err.code ?? -32603, message: err.message ?? String(e) } };
    }
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const out = Array.isArray(body) ? body.map(answer) : answer(body);
      const send = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(out));
      };
      // A remote provider's round trip (bench/indexer.ts --latency-ms).
      if (options.latencyMs) setTimeout(send, options.latencyMs);
      else send();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC proxy on 127.0.0.1 between the indexer and a node that injects the faults real
 * providers show: 429 with Retry-After, a response that never comes in time, a "block range too
 * large" refusal (persistently, above a span), and an inconsistent eth_getLogs answer.
 */
export type Fault =
  | { kind: 'rate-limit'; retryAfterSeconds: number }
  | { kind: 'timeout'; holdMs: number }
  | { kind: 'inconsistent'; how: 'duplicate' | 'wrong-hash' | 'out-of-range' | 'null' | 'other-address' }
  /** Answers with this status and body instead of the node (a provider's own error page or JSON-RPC error). */
  | { kind: 'answer'; status: number; body: string | Buffer; headers?: Record<string, string> };

export interface FaultProxy {
  url: string;
  /** Queues faults for the next requests of `method` (each used once, in order). */
  inject(method: string, ...faults: Fault[]): void;
  /** Refuse every eth_getLogs spanning more than `blocks` blocks, as providers do. */
  maxRange: number | undefined;
  /**
   * Rewrites the parameters of every request before it goes upstream (a lying or lagging node):
   * e.g. answer `finalized` with an older block. Returns the params to send.
   */
  rewrite: ((method: string, params: any[]) => any[]) | undefined;
  /** What happened, in order: method, fault (if any), time (ms since start). */
  events: { method: string; fault?: Fault['kind'] | 'range'; at: number; params: string }[];
  /** Faults still queued. */
  pending(): number;
  close(): Promise<void>;
}

export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const queues = new Map<string, Fault[]>();
  const events: FaultProxy['events'] = [];
  const started = Date.now();
  const proxy: FaultProxy = {
    url: '',
    maxRange: undefined,
    rewrite: undefined,
    events,
    inject(method, ...faults) {
      queues.set(method, [...(queues.get(method) ?? []), ...faults]);
    },
    pending: () => [...queues.values()].reduce((n, q) => n + q.length, 0),
    close: async () => {},
  };

  const forward = async (body: string) => {
    const res = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return (await res.json()) as { id: unknown; result?: unknown; error?: unknown };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, body: string) => {
    const call = JSON.parse(body) as { id: unknown; method: string; params: any[] };
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(payload));
    };
    if (call.method === 'eth_getLogs' && proxy.maxRange !== undefined) {
      const span = Number(BigInt(call.params[0].toBlock) - BigInt(call.params[0].fromBlock)) + 1;
      if (span > proxy.maxRange) {
        events.push({
          method: call.method,
          fault: 'range',
          at: Date.now() - started,
          params: JSON.stringify(call.params),
        });
        // The text Alchemy sends; getLogsRetryHelper reads the suggested range from it.
        const from = BigInt(call.params[0].fromBlock);
        const suggestion = `[0x${from.toString(16)}, 0x${(from + BigInt(proxy.maxRange) - 1n).toString(16)}]`;
        return send(200, {
          jsonrpc: '2.0',
          id: call.id,
          error: {
            code: -32602,
            message: `Log response size exceeded. You can make eth_getLogs requests with up to a ${proxy.maxRange} block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: ${suggestion}`,
          },
        });
      }
    }
    const fault = queues.get(call.method)?.shift();
    events.push({
      method: call.method,
      fault: fault?.kind,
      at: Date.now() - started,
      params: JSON.stringify(call.params),
    });
    if (fault?.kind === 'rate-limit') {
      return send(
        429,
        { jsonrpc: '2.0', id: call.id, error: { code: 429, message: 'Too Many Requests' } },
        { 'retry-after': String(fault.retryAfterSeconds) },
      );
    }
    if (fault?.kind === 'answer') {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      res.end(typeof fault.body === 'string' ? fault.body.replace('$ID', JSON.stringify(call.id)) : fault.body);
      return;
    }
    if (fault?.kind === 'timeout') {
      await new Promise((r) => setTimeout(r, fault.holdMs));
      if (!res.destroyed) res.destroy();
      return;
    }
    const answer = await forward(
      proxy.rewrite ? JSON.stringify({ ...call, params: proxy.rewrite(call.method, call.params ?? []) }) : body,
    );
    if (fault?.kind === 'inconsistent') {
      const logs = answer.result as Record<string, string>[] | null;
      if (fault.how === 'null' || !Array.isArray(logs) || logs.length === 0) answer.result = null;
      else if (fault.how === 'duplicate') answer.result = [...logs, logs[0]];
      else if (fault.how === 'wrong-hash')
        answer.result = [{ ...logs[0], blockHash: `0x${'ab'.repeat(32)}` }, ...logs.slice(1)];
      else if (fault.how === 'other-address')
        answer.result = [{ ...logs[0], address: `0x${'12'.repeat(20)}` }, ...logs.slice(1)];
      else
        answer.result = [
          ...logs,
          { ...logs[0], blockNumber: `0x${(BigInt(call.params[0].toBlock) + 1n).toString(16)}` },
        ];
    }
    send(200, answer);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks).toString('utf8')).catch(() => {
        if (!res.headersSent) res.writeHead(502).end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}

import { spawnSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';

/** A free loopback TCP port (asked from the OS, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers with `status` (up to ~10 s). */
export async function waitForHttp(url: string, status: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const got = await new Promise<number>((resolve) => {
      http.get(url, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', () => resolve(0));
    });
    if (got === status) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} did not answer ${status}`);
}

export interface WrkResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

const toMs = (value: string, unit: string) => Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);

/** Closed-loop throughput with wrk: `connections` keep-alive connections on one thread. */
export function runWrk(url: string, opts: { connections: number; seconds: number; script?: string }): WrkResult {
  const args = ['-t1', `-c${opts.connections}`, `-d${opts.seconds}s`, '--latency'];
  if (opts.script) args.push('-s', opts.script);
  const out = spawnSync('wrk', [...args, url], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`wrk failed: ${out.stderr}`);
  const text = out.stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1]);
  const pct = (p: string) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)`).exec(text);
    return m ? toMs(m[1]!, m[2]!) : Number.NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const socketErrors = socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return { rps, p50Ms: pct('50'), p99Ms: pct('99'), errors: non2xx + socketErrors };
}

export interface RateResult {
  sent: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
}

/**
 * Open-loop load at a fixed rate (like wrk2): request i is due at start + i / rps, and its
 * latency counts from that due time, so a stall is not hidden by the client waiting
 * (no coordinated omission). Keep-alive connections from a pool of up to 64.
 */
export async function runFixedRate(url: string, rps: number, seconds: number): Promise<RateResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const total = rps * seconds;
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now() + 50;
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rps;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      new Promise<void>((resolve) => {
        http
          .get(url, { agent }, (res) => {
            res.resume();
            res.on('end', () => {
              if (res.statusCode !== 200) errors++;
              latencies.push(performance.now() - due);
              resolve();
            });
          })
          .on('error', () => {
            errors++;
            resolve();
          });
      }),
    );
  }
  await Promise.all(pending);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? Number.NaN;
  return { sent: total, p50Ms: q(0.5), p99Ms: q(0.99), maxMs: latencies[latencies.length - 1] ?? Number.NaN, errors };
}

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
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

/**
 * One GET on a connection of its own, closed after the answer. The benchmark runs wrk with
 * spawnSync, which blocks this process's event loop for the whole run: a kept-alive connection
 * of the global fetch that the server closed meanwhile is only noticed when it is reused, and
 * the request fails with "other side closed" (the first case passed, the second did not).
 */
export function getOnce(url: string): Promise<{ status: number; etag: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false, headers: { connection: 'close' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            etag: String(res.headers.etag ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** The `apt-get install` line for the tools of `names` that are not on PATH, or null when all are. */
export function missingTools(names: readonly string[]): string | null {
  const missing = names.filter((n) => spawnSync('sh', ['-c', `command -v ${n}`]).status !== 0);
  return missing.length === 0 ? null : `apt-get install -y ${missing.join(' ')}`;
}

/** Polls `url` until it answers with `status` (up to ~10 s). */
export async function waitForHttp(url: string, status: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const got = await new Promise<number>((resolve) => {
      http
        .get(url, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', () => resolve(0));
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
export function runWrk(
  url: string,
  opts: { connections: number; seconds: number; script?: string; headers?: Record<string, string> },
): WrkResult {
  const args = ['-t1', `-c${opts.connections}`, `-d${opts.seconds}s`, '--latency'];
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}: ${v}`);
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

/**
 * Paced load with wrk: `connections` connections, each waiting `delay` ms after every response
 * (wrk's Lua `delay()`), so the offered rate is a few % above `rate` requests/s while the latency
 * of each request is measured by wrk. Returns the achieved rate in `rps`.
 */
export function runPaced(
  url: string,
  opts: { rate: number; seconds: number; dir: string; connections?: number; headers?: Record<string, string> },
): WrkResult {
  const connections = opts.connections ?? 20;
  // 7% under the nominal gap: the response time adds to each connection's cycle.
  const delay = Math.max(0, Math.floor(((connections * 1000) / opts.rate) * 0.93));
  const script = path.join(opts.dir, `paced-${delay}.lua`);
  writeFileSync(script, `delay = function() return ${delay} end\n`);
  return runWrk(url, { connections, seconds: opts.seconds, script, headers: opts.headers });
}

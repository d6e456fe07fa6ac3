import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/index.ts';
import {
  buyerAccount,
  deployUsdc,
  fund,
  mine,
  settle,
  startAnvil,
  type AnvilInstance,
  type UsdcDeployment,
} from '../../src/devchain/index.ts';
import { startFaultProxy, type FaultProxy } from '../chain/fault-proxy.ts';
import { tally as run, targetsFor, usdc, writeOneSellerCatalog, type Target } from '../helpers/e2e.ts';

/**
 * Issue 12, findings 4 and 5, through a fault proxy in front of a real anvil running Circle's USDC:
 * a provider that echoes the key of the request URL in its errors never gets it printed or
 * logged; an answer over the size limit (plain or a gzip bomb) is answered by splitting the block
 * range, and the run publishes the right numbers.
 */
const S1 = '0x5e11e50000000000000000000000000000000001' as Address;
const KEY = 'SECRETKEY1234';
const KEY2 = 'SECRET2XYZ';

/** Runs a command with its stdout/stderr lines and its JSON log lines captured. */
/** The shared tally() with the run's debug logs kept as well. */
async function tally(argv: string[], env: Record<string, string | undefined>) {
  const logs: string[] = [];
  const log = pino({ level: 'debug', base: undefined }, { write: (line: string) => void logs.push(line) });
  return { ...(await run(argv, env, { log })), logs: logs.join('') };
}

let anvil: AnvilInstance;
let proxy: FaultProxy;
let dep: UsdcDeployment;
let dir: string;
const targets: Target[] = [];

async function revenueOf(
  target: Target,
): Promise<{ generation: number; revenue: bigint; payments: number } | undefined> {
  const database = target.database ?? (await openDatabase({ dataDir: String(target.env.DATA_DIR) }));
  try {
    const row = await database.db
      .selectFrom('published_pointer')
      .innerJoin('gen_sellers', 'gen_sellers.generation', 'published_pointer.generation')
      .select(['gen_sellers.generation', 'verified_revenue_30d_micro', 'payments_30d'])
      .where('seller_address', '=', S1)
      .executeTakeFirst();
    return (
      row && { generation: row.generation, revenue: BigInt(row.verified_revenue_30d_micro), payments: row.payments_30d }
    );
  } finally {
    if (!target.database) await database.close();
  }
}

beforeAll(async () => {
  anvil = await startAnvil();
  dep = await deployUsdc(anvil.url);
  for (const n of [0, 1, 2]) await fund(dep, buyerAccount(n).address, usdc(100));
  // 1 + 2 + 3 USDC to seller 1, with blocks between them so a range can split between payments.
  for (const n of [0, 1, 2]) {
    await settle(dep, { from: buyerAccount(n), to: S1, value: usdc(1 + n) });
    await mine(anvil.url, 10);
  }
  proxy = await startFaultProxy(anvil.url);
  dir = mkdtempSync(path.join(os.tmpdir(), 'tally-provider-'));
  writeOneSellerCatalog(path.join(dir, 'catalog.json'), S1);
  // The key sits in the path and in the query, as providers put it; the proxy takes any path.
  const common = {
    RPC_URL: `${proxy.url}/v2/${KEY}?apikey=${KEY2}`,
    CATALOG_SOURCE: path.join(dir, 'catalog.json'),
    CONFIRMATIONS: '0',
    LOG_LEVEL: 'debug',
  };
  targets.push(...(await targetsFor(common, path.join(dir, 'data'))));
});

afterAll(async () => {
  await proxy?.close();
  await anvil?.stop();
  for (const t of targets) await t.database?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a provider echoing the key never gets it printed or logged (finding 4)', () => {
  const echo = `invalid api key in /v2/${KEY}?apikey=${KEY2} (key ${KEY}, apikey ${KEY2})`;

  it('error: a 401 whose body echoes the path and query: exit 1, no key in output or logs', async () => {
    const target = targets[0]!;
    proxy.inject('eth_chainId', { kind: 'answer', status: 401, body: JSON.stringify({ error: echo }) });
    const { code, out, logs } = await tally(['run'], target.env);
    expect(code, out).toBe(1);
    expect(out).toContain('invalid api key in … (key …, apikey …)');
    for (const text of [out, logs]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(KEY2);
    }
  });

  it('behavior: a 429 and a JSON-RPC error echoing the key are retried; the logs show neither key', async () => {
    for (const target of targets) {
      proxy.inject('eth_chainId', {
        kind: 'answer',
        status: 429,
        body: `Too many requests for ${echo}`,
        headers: { 'retry-after': '0', 'content-type': 'text/plain' },
      });
      proxy.inject('eth_getBlockByNumber', {
        kind: 'answer',
        status: 200,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: '$ID',
          error: { code: -32000, message: `rate limited: ${echo}` },
        }).replace('"$ID"', '$ID'),
      });
      const { code, out, logs } = await tally(['run'], target.env);
      expect(code, out).toBe(0);
      expect(logs).toContain('rpc request failed, will retry');
      expect(logs).toContain('rate limited: invalid api key in');
      for (const text of [out, logs]) {
        expect(text).not.toContain(KEY);
        expect(text).not.toContain(KEY2);
      }
      expect(await revenueOf(target)).toMatchObject({ revenue: usdc(6), payments: 3 });
    }
  });

  it('behavior: a provider error text is cut short in the logs', async () => {
    const target = targets[0]!;
    proxy.inject('eth_chainId', {
      kind: 'answer',
      status: 503,
      body: `overloaded ${'x'.repeat(5000)}`,
      headers: { 'retry-after': '0', 'content-type': 'text/plain' },
    });
    const { code, logs } = await tally(['run'], target.env);
    expect(code).toBe(0);
    const line = logs.split('\n').find((l) => l.includes('overloaded'))!;
    expect(line.length).toBeLessThan(1000);
  });
});

describe('an answer over the size limit splits the range (finding 5)', () => {
  it('behavior: one eth_getLogs answered with 11 MB: the range is split and the run publishes the right numbers', async () => {
    for (const target of targets) {
      await mine(anvil.url, 5);
      const big = JSON.stringify({ jsonrpc: '2.0', id: 0, result: [], padding: 'x'.repeat(11_000_000) });
      proxy.inject('eth_getLogs', { kind: 'answer', status: 200, body: big });
      const before = await revenueOf(target);
      const { code, out } = await tally(['run'], target.env);
      expect(code, out).toBe(0);
      expect(proxy.pending()).toBe(0);
      expect(await revenueOf(target)).toMatchObject({
        generation: (before?.generation ?? 0) + 1,
        revenue: usdc(6),
        payments: 3,
      });
    }
  });

  it('behavior: a gzip bomb (about 150 KB on the wire, 150 MB inflated) is stopped at the limit and the range split', async () => {
    const bomb = gzipSync(Buffer.alloc(150_000_000, 0x20), { level: 9 });
    for (const target of targets) {
      await mine(anvil.url, 5);
      proxy.inject('eth_getLogs', { kind: 'answer', status: 200, body: bomb, headers: { 'content-encoding': 'gzip' } });
      const before = await revenueOf(target);
      const { code, out } = await tally(['run'], target.env);
      expect(code, out).toBe(0);
      expect(proxy.pending()).toBe(0); // the bomb was served (memory: src/chain/node-fetch.test.ts)
      expect(await revenueOf(target)).toMatchObject({
        generation: before!.generation + 1,
        revenue: usdc(6),
        payments: 3,
      });
    }
  });
});

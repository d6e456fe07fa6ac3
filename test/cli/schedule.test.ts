import { fixedChain } from '../helpers/fixed-chain.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.ts';
import { runCommand } from '../../src/cli/command.ts';
import { makeSchedule } from '../../src/cli/schedule.ts';
import { TemporaryError } from '../../src/lib/errors.ts';
import { silentLogger } from '../../src/lib/log.ts';
import type { CycleDeps } from '../../src/run/cycle.ts';

const SELLER = '0x' + '34'.repeat(20);
const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const ITEM = {
  resource: 'https://api.example/y',
  type: 'http',
  x402Version: 1,
  lastUpdated: '2025-12-01T00:00:00Z',
  accepts: [
    {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '1000',
      resource: 'https://api.example/y',
      payTo: SELLER,
      asset: USDC,
      maxTimeoutSeconds: 60,
    },
  ],
};

describe('makeSchedule', () => {
  it('args: a duration gives its seconds as the cadence', () => {
    const { job, cadenceSeconds } = makeSchedule('15m', async () => {});
    expect(cadenceSeconds).toBe(900);
    job.stop();
  });

  it('args: a cron expression gives the gap between its runs', () => {
    const { job, cadenceSeconds } = makeSchedule('*/20 * * * *', async () => {});
    expect(cadenceSeconds).toBe(1200);
    job.stop();
  });

  it('error: a malformed cron expression is refused', () => {
    expect(() => makeSchedule('61 * * * *', async () => {})).toThrow();
  });
});

describe('schedule', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-schedule-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('behavior: a failing run does not stop the server; the next tick publishes', async () => {
    let calls = 0;
    // The second run waits until the test has seen the API answer after the failed first one.
    let releaseSecond!: () => void;
    const secondMayRun = new Promise<void>((resolve) => (releaseSecond = resolve));
    // The catalog source is unreachable on the first run only; the chain is a fixed point.
    const deps: Partial<CycleDeps> = {
      readCatalog: async (source, o) => {
        calls++;
        if (calls === 1) throw new TemporaryError('catalog unreachable (test)');
        await secondMayRun;
        return buildCatalog([ITEM], { source, fetchedAt: new Date('2025-12-31T00:00:00Z') }, o);
      },
      ...fixedChain({ number: 10n, hash: `0x${'cd'.repeat(32)}`, timestamp: 1_767_139_200n }),
    };
    const stop = new AbortController();
    const lines: string[] = [];
    let base = '';
    let listened!: () => void;
    const listening = new Promise<void>((r) => (listened = r));
    const exit = runCommand(
      ['schedule', '--every', '2s', '--port', '0', '--rpc-url', 'http://127.0.0.1:9', '--catalog', 'c.json'],
      { DATA_DIR: dir },
      {
        out: (l) => lines.push(l),
        err: (l) => lines.push(l),
        log: silentLogger,
        progress: () => {},
        signal: stop.signal,
        deps,
        onListening: (url) => {
          base = url;
          listened();
        },
      },
    );
    await listening;
    // Wait for the first (failing) run, then the API still answers: nothing published yet.
    while (!lines.some((l) => l.includes('run failed (exit 75)'))) await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`${base}/api/v1/meta`)).status).toBe(503);
    releaseSecond();
    // The next tick succeeds and the same server serves generation 1.
    while (!lines.some((l) => l.includes('published generation 1'))) await new Promise((r) => setTimeout(r, 100));
    // The API re-reads the published pointer at most every 500 ms.
    let response = await fetch(`${base}/api/v1/meta`);
    for (let i = 0; i < 30 && response.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      response = await fetch(`${base}/api/v1/meta`);
    }
    const meta = (await response.json()) as { generation: number; cadence: { interval_seconds: number } };
    expect(response.status, JSON.stringify(meta)).toBe(200);
    expect(meta.generation).toBe(1);
    expect(meta.cadence.interval_seconds).toBe(2);
    stop.abort();
    expect(await exit).toBe(0);
  }, 120_000);
});

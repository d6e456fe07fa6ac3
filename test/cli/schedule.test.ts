import { fixedChain } from '../helpers/fixed-chain.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.ts';
import { runCommand } from '../../src/cli/command.ts';
import { makeSchedule } from '../../src/cli/schedule.ts';
import { migratedDataDir } from '../helpers/db.ts';
import { TemporaryError } from '../../src/lib/errors.ts';
import { silentLogger } from '../../src/lib/log.ts';
import type { CycleDeps } from '../../src/run/cycle.ts';
import { BASE_USDC as USDC } from '../../src/config/index.ts';

const SELLER = '0x' + '34'.repeat(20);
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
  afterEach(() => vi.useRealTimers());

  it('args: a duration gives its seconds as the cadence', () => {
    expect(makeSchedule('15m', async () => {}).cadenceSeconds).toBe(900);
  });

  it('args: a cron expression gives the gap between its runs', () => {
    expect(makeSchedule('*/20 * * * *', async () => {}).cadenceSeconds).toBe(1200);
  });

  it('behavior: the job of a duration runs one interval after the first run started, then every interval', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.300Z'), toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const runs: string[] = [];
    const job = makeSchedule('10s', async () => void runs.push(new Date().toISOString())).start(new Date());
    // startAt 00:00:10.300, which croner rounds up to the next whole second.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(21_000);
    expect(runs).toEqual(['2026-01-01T00:00:11.000Z', '2026-01-01T00:00:21.000Z', '2026-01-01T00:00:31.000Z']);
    job.stop();
  });

  it('behavior: the job of a cron expression runs at its next times (UTC), not at once', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.300Z'), toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const runs: string[] = [];
    const job = makeSchedule('*/20 * * * *', async () => void runs.push(new Date().toISOString())).start(new Date());
    await vi.advanceTimersByTimeAsync(41 * 60_000);
    expect(runs).toEqual(['2026-01-01T00:20:00.000Z', '2026-01-01T00:40:00.000Z']);
    job.stop();
  });

  it('error: a malformed cron expression is refused', () => {
    expect(() => makeSchedule('61 * * * *', async () => {})).toThrow();
  });
});

/**
 * A GET on a new connection: fetch would reuse the kept-alive socket of the previous request,
 * which the server may close meanwhile (minutes apart on a loaded machine: ECONNRESET).
 */
const fresh = (url: string) => fetch(url, { headers: { connection: 'close' } });

describe('schedule', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-schedule-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  afterEach(() => vi.useRealTimers());

  it('behavior: the start makes one run, the next comes one interval later (issue 20: it made two)', async () => {
    // A fake clock (Date and setTimeout, which croner reads and sets): an hour passes at once,
    // with no wall-clock wait. The database and its I/O run for real.
    // The embedded database made beforehand from the migrated template, on the real clock: making
    // one with initdb took 80-110 s at a load average of 24, and is not what this test is about.
    await migratedDataDir(path.join(dir, 'once'));
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    // When each run starts (its first hook, before any I/O), on the fake clock.
    const starts: number[] = [];
    const failures: string[] = [];
    let failed: (() => void) | undefined;
    const nextFailure = () => new Promise<void>((resolve) => (failed = resolve));
    const stop = new AbortController();
    let first = nextFailure();
    const exit = runCommand(
      ['schedule', '--every', '1h', '--no-serve', '--rpc-url', 'http://127.0.0.1:9', '--catalog', 'c.json'],
      { DATA_DIR: path.join(dir, 'once') },
      {
        out: () => {},
        err: (l) => {
          failures.push(l);
          failed?.();
        },
        log: silentLogger,
        progress: () => {},
        signal: stop.signal,
        // Each run fails at once at the catalog, so the first is over long before croner's first tick.
        deps: {
          readCatalog: async () => {
            throw new TemporaryError('catalog unreachable (test)');
          },
        },
        hook: (point) => void (point === 'before:migrate' && starts.push(Date.now())),
      },
    );
    await first;
    expect(starts).toHaveLength(1);
    // 59 min 59 s later (fake): still that one run. The bug ran the task again within a second.
    await vi.advanceTimersByTimeAsync(3_599_000);
    expect(starts).toHaveLength(1);
    expect(failures).toEqual(['run failed (exit 75): catalog unreachable (test)']);
    // The hour is up (croner starts on a whole second): the second run, an hour after the first.
    first = nextFailure();
    await vi.advanceTimersByTimeAsync(2_000);
    // The second run starts at the tick and fails at the catalog (after real database I/O, so
    // awaited rather than expected right after the clock moves).
    await first;
    expect(starts).toHaveLength(2);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(3_600_000);
    expect(starts[1]! - starts[0]!).toBeLessThanOrEqual(3_601_000);
    expect(failures).toHaveLength(2);
    stop.abort();
    expect(await exit).toBe(0);
  });

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
        // Runs after the second fail too, so on a loaded machine a third tick cannot publish
        // generation 2 before the assertions read generation 1.
        if (calls > 2) throw new TemporaryError('catalog unreachable again (test)');
        await secondMayRun;
        return buildCatalog([ITEM], { source, fetchedAt: new Date('2025-12-31T00:00:00Z') }, o);
      },
      ...fixedChain({ number: 10n, hash: `0x${'cd'.repeat(32)}`, timestamp: 1_767_139_200n }),
    };
    await migratedDataDir(dir);
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
    expect((await fresh(`${base}/api/v1/meta`)).status).toBe(503);
    releaseSecond();
    // The next tick succeeds and the same server serves generation 1.
    while (!lines.some((l) => l.includes('published generation 1'))) await new Promise((r) => setTimeout(r, 100));
    // The API re-reads the published pointer at most every 500 ms (polled until then: the test's
    // own timeout bounds the wait, not a count of tries).
    let response = await fresh(`${base}/api/v1/meta`);
    while (response.status === 503) {
      await new Promise((r) => setTimeout(r, 100));
      response = await fresh(`${base}/api/v1/meta`);
    }
    const meta = (await response.json()) as { generation: number; cadence: { interval_seconds: number } };
    expect(response.status, JSON.stringify(meta)).toBe(200);
    expect(meta.generation).toBe(1);
    expect(meta.cadence.interval_seconds).toBe(2);
    stop.abort();
    expect(await exit).toBe(0);
  });
});

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { progressBar } from '../../src/run/cycle.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import { FakeChain, serveJsonRpc, type RpcServer } from '../chain/fake-rpc.ts';
import { BASE_USDC as USDC } from '../../src/config/index.ts';
import { migratedDataDir } from '../helpers/db.ts';

/**
 * The terminal (issue 13): under a pseudo-terminal (`script`), `run` shows readable log lines and
 * progress with counts and an ETA; with LOG_FORMAT=json the same terminal gets JSON lines only.
 */
const SELLER = '0x' + '12'.repeat(20);
const hasScript = spawnSync('script', ['--version']).status === 0;

let rpc: RpcServer;
let dir: string;
beforeAll(async () => {
  const chain = new FakeChain({ usdc: USDC, head: 100, genesisTimestamp: 1_767_000_000, blockTime: 2 });
  chain.settle(50, `0x${'01'.repeat(32)}`, '0x' + 'aa'.repeat(20), SELLER, 250_000n, 1n);
  rpc = await serveJsonRpc((method, params) => chain.call(method, params));
  dir = mkdtempSync(path.join(os.tmpdir(), 'tally-tty-'));
  writeFileSync(
    path.join(dir, 'catalog.json'),
    JSON.stringify({
      resources: [
        {
          resource: 'https://a.example/x',
          type: 'http',
          x402Version: 1,
          lastUpdated: 1,
          accepts: [
            {
              scheme: 'exact',
              network: 'base',
              maxAmountRequired: '1',
              resource: 'https://a.example/x',
              payTo: SELLER,
              asset: USDC,
              maxTimeoutSeconds: 5,
            },
          ],
        },
      ],
    }),
  );
});
afterAll(async () => {
  await rpc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `run` inside a pseudo-terminal; returns everything the terminal showed. Async: the fake node answers from this process. */
async function runInTty(env: Record<string, string>, data: string): Promise<string> {
  await migratedDataDir(path.join(dir, data)); // the first run's migration is bin.test.ts's subject
  const command = [
    process.execPath,
    path.join(projectRoot, 'bin/x402-tally.js'),
    'run',
    '--catalog',
    path.join(dir, 'catalog.json'),
    '--as-of-block',
    '100',
  ]
    .map((a) => `'${a}'`)
    .join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', TERM: 'dumb', DATA_DIR: path.join(dir, data), RPC_URL: rpc.url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'], // stdin /dev/null: script ends with the command
  });
  let shown = '';
  child.stdout.on('data', (d: Buffer) => (shown += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code, shown).toBe(0);
  return shown.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');
}

describe.skipIf(!hasScript)('run at a terminal', () => {
  it('behavior: readable log lines, stages, a progress bar with an ETA, and the closing line', async () => {
    const shown = await runInTty({}, 'pretty');
    expect(shown).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: catalog read/m); // pino-pretty: time, level, message
    expect(shown).not.toMatch(/^\{"level"/m);
    expect(shown).toContain('» catalog…');
    expect(shown).toMatch(/» sync \[#+\.*\] \d+\/\d+ blocks, ETA \d+:\d\d/);
    expect(shown).toContain('published generation 1 as of block 100');
  });

  it('behavior: LOG_FORMAT=json at a terminal: every log line is JSON, no progress lines', async () => {
    const lines = (await runInTty({ LOG_FORMAT: 'json' }, 'json')).trim().split('\n');
    const logs = lines.filter((l) => !l.startsWith('published generation'));
    expect(logs.length).toBeGreaterThan(3);
    for (const line of logs) expect(() => JSON.parse(line), line).not.toThrow();
  });
});

describe('progress bar', () => {
  it('default: filled in proportion, ETA from the pace so far', () => {
    expect(progressBar(5, 20, 10_000)).toBe('[#####...............] 5/20 ranges, ETA 0:30');
    expect(progressBar(20, 20, 10_000)).toBe('[####################] 20/20 ranges, ETA 0:00');
    expect(progressBar(0, 0, 0)).toBe('[####################] 0/0 ranges, ETA 0:00');
  });
});

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.ts';
import { FakeChain, serveJsonRpc, type RpcServer } from '../chain/fake-rpc.ts';
import { startFaultProxy } from '../chain/fault-proxy.ts';
import { BASE_USDC as USDC } from '../../src/config/index.ts';
import { migratedDataDir } from '../helpers/db.ts';

const SELLER = '0x' + '12'.repeat(20);

function runBin(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // A clean environment: only what the command needs, so nothing of the caller leaks in.
    const child = spawn(process.execPath, [path.join(projectRoot, 'bin/x402-tally.js'), ...args], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('bin/x402-tally.js (spawned)', () => {
  let rpc: RpcServer;
  let dir: string;
  beforeAll(async () => {
    const chain = new FakeChain({ usdc: USDC, head: 100, genesisTimestamp: 1_767_000_000, blockTime: 2 });
    chain.settle(50, `0x${'01'.repeat(32)}`, '0x' + 'aa'.repeat(20), SELLER, 250_000n, 1n);
    rpc = await serveJsonRpc((method, params) => chain.call(method, params));
    dir = mkdtempSync(path.join(os.tmpdir(), 'tally-bin-'));
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

  it('default: `run` on a fresh DATA_DIR publishes generation 1 and exits 0; logs are JSON on stderr', async () => {
    const { code, stdout, stderr } = await runBin(
      ['run', '--catalog', path.join(dir, 'catalog.json'), '--as-of-block', '100'],
      {
        DATA_DIR: path.join(dir, 'data'),
        RPC_URL: rpc.url,
      },
    );
    expect(code, stderr).toBe(0);
    // One base_usdc listing, one seller, nothing rejected; as of block 100.
    expect(stdout).toContain('published generation 1 as of block 100');
    expect(stdout).toContain('1 listings, 1 sellers, 0 rejected items');
    const lines = stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(stderr).not.toContain(rpc.url);
  });

  // `audit` runs in a child node process started by the bin with memory flags (bin/x402-tally.js):
  // what a person sees, stdout, stderr and the exit code, is the child's, unchanged.
  it('behavior: `audit --generation 1` through the bin recomputes the generation `run` published: exit 0, the verdict last', async () => {
    const { code, stdout, stderr } = await runBin(['audit', '--generation', '1'], {
      DATA_DIR: path.join(dir, 'data'), // the first test's generation
      RPC_URL: rpc.url,
    });
    expect(code, stderr).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^auditing generation 1 from the database: as of block 100/);
    expect(lines.at(-1)).toMatch(
      /^audit: identical: every digest and number of generation 1 recomputed from the chain \(1 payments, 1 sellers, /,
    );
    for (const line of stderr.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
  }, 120_000);

  it('error: through the bin, a usage mistake in `audit` exits 1 and an unreachable RPC exits 75', async () => {
    const usage = await runBin(['audit'], { DATA_DIR: path.join(dir, 'data'), RPC_URL: rpc.url });
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain('audit needs --generation N');
    expect(usage.stdout).toBe('');
    // A port nothing listens on: a server started and closed again.
    const closed = await serveJsonRpc(() => null);
    await closed.close();
    const away = await runBin(['audit', '--generation', '1'], {
      DATA_DIR: path.join(dir, 'data'),
      RPC_URL: closed.url,
    });
    expect(away.code, away.stderr).toBe(75);
    expect(away.stderr).toContain('temporary failure (exit 75)');
  }, 120_000);

  it('error: a provider answering terminal control sequences: stderr shows them escaped, never raw', async () => {
    // A 200 whose body clears the screen and retitles the window (ESC, BEL), with a C1 CSI and a
    // DEL: no real node answers so, hence the fault proxy. The run retries it (no JSON is a
    // network-like failure) and gives up with exit 75, quoting the body in the pretty log lines
    // (LOG_FORMAT=pretty: pino-pretty, as at a terminal) and in the human error line.
    const proxy = await startFaultProxy(rpc.url);
    const body = '\x1b[2J\x1b]0;pwned\x07\u009b31m\x7f';
    for (let i = 0; i < 6; i++) proxy.inject('eth_chainId', { kind: 'answer', status: 200, body });
    try {
      // (a migrated DATA_DIR: the first test is the one of a new folder)
      const { code, stderr } = await runBin(
        ['run', '--catalog', path.join(dir, 'catalog.json'), '--as-of-block', '100'],
        { DATA_DIR: await migratedDataDir(path.join(dir, 'hostile')), RPC_URL: proxy.url, LOG_FORMAT: 'pretty' },
      );
      expect(code, stderr).toBe(75);
      expect(proxy.pending()).toBe(0); // every hostile answer was read
      // No raw ESC, BEL, C1 CSI or DEL anywhere on stderr (pretty logs are not colorised on a pipe).
      expect(stderr).not.toMatch(/[\x1b\x07\u009b\x7f]/);
      // The human line shows the body as text, `\x1b` as the four characters backslash x 1 b.
      const human = stderr.split('\n').find((l) => l.startsWith('temporary failure (exit 75)'));
      expect(human, stderr).toContain(String.raw`"\x1b[2J\x1b]0;pwned\x07\x9b31m\x7f"`);
      // The pretty log lines quote it too (as JSON text, so each backslash is doubled).
      expect(stderr).toMatch(/WARN.*rpc request failed, will retry/);
      expect(stderr).toContain(String.raw`\\x1b[2J\\x1b]0;pwned\\x07\\x9b31m\\x7f`);
    } finally {
      await proxy.close();
    }
  });

  it('error: a config error exits 1 with every problem named', async () => {
    const { code, stderr } = await runBin(['serve', '--port', '99999', '--log-level', 'chatty'], {});
    expect(code).toBe(1);
    expect(stderr).toContain('PORT:');
    expect(stderr).toContain('LOG_LEVEL:');
  });
});

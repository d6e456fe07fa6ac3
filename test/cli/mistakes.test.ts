// Each configuration mistake of the command line is found at start: exit 1, the setting named,
// and nothing begun (no database folder, no demo catalog, no chain). Real sockets and the real
// command entry (runCommand); the only stand-in is the catalog stage's dependency, recorded.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { holdPort, releasePort } from '../../src/cli/port.ts';
import { tally as run } from '../helpers/e2e.ts';

const dirs: string[] = [];
const servers: net.Server[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'tally-mistakes-'));
  dirs.push(dir);
  return dir;
}

/** A port some other process holds (here: a plain TCP server of this test). */
async function takenPort(): Promise<number> {
  const server = net.createServer();
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

/** Runs a command line; records whether any stage of the run was reached. */
async function tally(argv: string[], env: Record<string, string>) {
  let stagesReached = 0;
  const { code, out } = await run(argv, env, {
    deps: {
      readCatalog: async () => {
        stagesReached++;
        throw new Error('the run must not reach the catalog');
      },
    },
  });
  return { code, text: out, stagesReached };
}

describe('configuration mistakes exit 1 at start, naming the setting', () => {
  it('error: a malformed DATABASE_URL (postgres//oops) is a configuration mistake, not a temporary fault', async () => {
    const dataDir = tempDir();
    const r = await tally(['run', '--rpc-url', 'http://127.0.0.1:9', '--catalog', 'x.json'], {
      DATABASE_URL: 'postgres//oops',
      DATA_DIR: dataDir,
    });
    expect(r.code).toBe(1);
    expect(r.text).toMatch(/DATABASE_URL: must be a URL such as postgres:\/\//);
    expect(r.text).not.toMatch(/temporary/);
    expect(r.stagesReached).toBe(0);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('error: a cron pattern with a field out of range, or one that never fires, stops schedule at start', async () => {
    for (const every of ['61 * * * *', '0 0 31 2 *']) {
      const dataDir = tempDir();
      const r = await tally(['schedule', '--every', every, '--rpc-url', 'http://127.0.0.1:9', '--no-serve'], {
        DATA_DIR: dataDir,
      });
      expect(r.code, every).toBe(1);
      expect(r.text, every).toMatch(/SCHEDULE_EVERY: must be a duration .* or a cron expression/);
      expect(r.stagesReached, every).toBe(0);
      expect(readdirSync(dataDir), every).toEqual([]);
    }
  });

  it('error: a taken PORT stops serve, schedule and demo before they open a database or seed a chain', async () => {
    const port = await takenPort();
    const cases: [string, string[]][] = [
      ['serve', ['serve']],
      ['schedule', ['schedule', '--rpc-url', 'http://127.0.0.1:9', '--catalog', 'x.json']],
      ['demo', ['demo']],
    ];
    for (const [name, argv] of cases) {
      const dataDir = tempDir();
      const r = await tally([...argv, '--port', String(port), '--host', '127.0.0.1'], { DATA_DIR: dataDir });
      expect(r.code, name).toBe(1);
      expect(r.text, name).toContain(`PORT: port ${port} on 127.0.0.1 is in use`);
      expect(r.stagesReached, name).toBe(0);
      // No embedded database opened, no demo catalog written (it is written before the chain starts).
      expect(existsSync(path.join(dataDir, 'pglite')), name).toBe(false);
      expect(existsSync(path.join(dataDir, 'demo', 'pglite')), name).toBe(false);
      expect(existsSync(path.join(dataDir, 'demo', 'demo-catalog.json')), name).toBe(false);
    }
  });

  it('behavior: a held port answers 503 starting, with Retry-After, until the API takes it over', async () => {
    const held = await holdPort({ PORT: 0, HOST: '127.0.0.1' });
    try {
      const { port } = held.address() as net.AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/meta`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await response.json()).toEqual({
        error: { code: 'starting', message: 'x402-tally is starting; try again in a few seconds' },
      });
    } finally {
      await releasePort(held);
    }
    expect(held.listening).toBe(false);
  });
});

describe('help and typos', () => {
  it("behavior: <command> --help prints that command's usage, with its own flags only", async () => {
    const r = await tally(['audit', '--help'], {});
    expect(r.code).toBe(0);
    expect(r.text).toMatch(/^Usage: x402-tally audit /);
    expect(r.text).toContain('--seller 0x...');
    expect(r.text).toContain('[RPC_URL]');
    // not the global page, nor flags audit does not read
    expect(r.text).not.toContain('Commands');
    expect(r.text).not.toContain('[PORT]');
    expect(r.text).not.toContain('--make-latest');
  });

  it('error: a mistyped command or flag gets a suggestion within two edits, a far one none', async () => {
    const cases: [string[], RegExp][] = [
      [['serv'], /unknown command: serv; did you mean serve\?/],
      [['audti'], /unknown command: audti; did you mean audit\?/],
      [['run', '--rpc-ur', 'http://x'], /unknown flag --rpc-ur; did you mean --rpc-url\?/],
      [['schedule', '--evry', '5m'], /unknown flag --evry; did you mean --every\?/],
      [['run', '--nope'], /unknown flag --nope\nsee: x402-tally --help/],
      [['frobnicate'], /unknown command: frobnicate \(one of run,/],
    ];
    for (const [argv, expected] of cases) {
      const r = await tally(argv, {});
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.text, argv.join(' ')).toMatch(expected);
    }
  });
});

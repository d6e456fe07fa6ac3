import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { silentLogger, type Logger } from '../lib/log.ts';

export interface StartAnvilOptions {
  /** Chain id served by eth_chainId. Default 8453 (Base mainnet). */
  chainId?: number;
  /** Genesis block timestamp, unix seconds. Default: anvil's own (wall clock). */
  timestamp?: bigint;
  /** TCP port on 127.0.0.1. Default: a free port picked by the OS. */
  port?: number;
  /**
   * `finalized` = latest - 2 * slotsInAnEpoch and `safe` = latest - slotsInAnEpoch on anvil.
   * Default 32 (like mainnet: finalized trails latest by 64 blocks).
   */
  slotsInAnEpoch?: number;
  /**
   * How long to wait for the node to listen, and then to answer, ms. Default 60000: a bound on a
   * hang, not a speed claim (anvil starts in well under a second, but the tests start it beside
   * other CPU-heavy work on a 2-core machine).
   */
  startTimeoutMs?: number;
  log?: Logger;
}

export interface AnvilInstance {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /** Stops the node and waits for it to exit. Safe to call more than once. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 60_000;

const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
};

/** The anvil binary shipped by the @foundry-rs/anvil platform package installed for this machine. */
export function anvilBinaryPath(): string {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORM_PACKAGES[key];
  if (!pkg) throw new Error(`anvil: no @foundry-rs/anvil binary package exists for ${key}`);
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    manifest = require.resolve(`${pkg}/package.json`);
  } catch {
    throw new Error(
      `anvil: the package ${pkg} is not installed; run \`npm install\` on this machine ` +
        '(npm installs the platform package of @foundry-rs/anvil as an optional dependency)',
    );
  }
  return path.join(path.dirname(manifest), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

// Every node still running, killed when this process exits for any reason we can see.
const running = new Set<() => void>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const kill of running) kill();
  });
}

/**
 * Starts a local anvil node (automine on) on 127.0.0.1 and resolves once it answers eth_chainId.
 * The node holds no state on disk; every start is a fresh chain with anvil's 10 funded dev accounts.
 *
 * On POSIX the node runs under a tiny `sh` watchdog that reads our pipe: when this process dies,
 * even by SIGKILL, the pipe closes and the watchdog kills anvil, so no node outlives its owner.
 */
export async function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilInstance> {
  const log = options.log ?? silentLogger;
  const chainId = options.chainId ?? 8453;
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port ?? 0),
    '--chain-id',
    String(chainId),
    // Pool order = submission order, so several transactions mined in one block keep the order
    // the caller sent them in (deterministic log indexes).
    '--order',
    'fifo',
    '--slots-in-an-epoch',
    String(options.slotsInAnEpoch ?? 32),
  ];
  if (options.timestamp !== undefined) args.push('--timestamp', options.timestamp.toString());

  const binary = anvilBinaryPath();
  const posix = process.platform !== 'win32';
  const child: ChildProcessByStdio<Writable, Readable, Readable> = posix
    ? spawn(
        '/bin/sh',
        [
          '-c',
          // anvil in the background; `cat` waits for our stdin to close (stop() or our death).
          '"$0" "$@" </dev/null & a=$!; echo "anvil-pid $a"; cat >/dev/null; kill $a 2>/dev/null; wait $a',
          binary,
          ...args,
        ],
        { stdio: ['pipe', 'pipe', 'pipe'] },
      )
    : spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });

  let anvilPid: number | undefined = posix ? undefined : child.pid;
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  const killNow = (): void => {
    child.stdin.destroy();
    if (anvilPid !== undefined) {
      try {
        process.kill(anvilPid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  running.add(killNow);
  installExitHook();
  // A node nobody stopped must not keep this process alive: it dies with it (exit hook, watchdog).
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr])
    (stream as unknown as { unref?: () => void }).unref?.();

  let stderrTail = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-2000);
  });

  const port = await new Promise<number>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(
      () => fail(new Error('anvil: did not start listening in time')),
      options.startTimeoutMs ?? START_TIMEOUT_MS,
    );
    function fail(error: Error): void {
      clearTimeout(timer);
      child.stdout.removeListener('data', onData);
      reject(error);
    }
    function onData(chunk: string): void {
      buffer += chunk;
      const pid = /anvil-pid (\d+)/.exec(buffer);
      if (pid) anvilPid = Number(pid[1]);
      const listening = /Listening on 127\.0\.0\.1:(\d+)/.exec(buffer);
      if (listening) {
        clearTimeout(timer);
        child.stdout.removeListener('data', onData);
        // anvil logs every request on stdout: keep draining it so the pipe never fills.
        child.stdout.resume();
        resolve(Number(listening[1]));
      } else if (buffer.length > 100_000) {
        buffer = buffer.slice(-1000);
      }
    }
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', onData);
    child.once('exit', (code) => fail(new Error(`anvil: exited during start (code ${code}): ${stderrTail.trim()}`)));
  }).catch(async (error: unknown) => {
    killNow();
    running.delete(killNow);
    throw error;
  });

  const url = `http://127.0.0.1:${port}`;
  await waitForChainId(url, chainId, options.startTimeoutMs ?? START_TIMEOUT_MS).catch((error: unknown) => {
    killNow();
    running.delete(killNow);
    throw error;
  });
  log.info({ port, chainId }, 'anvil started');

  let stopping: Promise<void> | undefined;
  return {
    url,
    port,
    stop(): Promise<void> {
      stopping ??= (async () => {
        if (!exited) {
          child.ref(); // keep this process alive until the node is really gone
          child.stdin.end();
          const timer = setTimeout(killNow, 5_000);
          await exitPromise;
          clearTimeout(timer);
        }
        running.delete(killNow);
        log.info({ port }, 'anvil stopped');
      })();
      return stopping;
    },
  };
}

async function waitForChainId(url: string, chainId: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      const body = (await response.json()) as { result?: string };
      if (body.result !== undefined) {
        if (Number(body.result) !== chainId)
          throw new Error(`anvil: answers chain id ${Number(body.result)}, not ${chainId}`);
        return;
      }
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('anvil:')) throw error;
      // not up yet
    }
    if (Date.now() > deadline) throw new Error('anvil: did not answer eth_chainId in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

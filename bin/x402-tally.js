#!/usr/bin/env node
// The command line. The sources are TypeScript run through tsx, so the command works right after
// `npm install` with no build step.
//
// `audit` runs in a child node process started with memory flags on its command line, and this
// process only waits for it (docs/operations.md, "Audit"; the measurements in docs/benchmarks.md,
// "Audit memory"). The flags act on the embedded database's WebAssembly, which V8 otherwise
// compiles a second time, optimised, in background threads (~100 MB more resident memory for a
// one-shot process), on glibc's per-thread malloc arenas, which keep what those threads freed, and
// on V8's heap (`--optimize-for-size`: memory over speed; ~40 MB less resident on the demo, for
// somewhat more CPU time). They can only be given when a process starts: V8's flags set later are
// undefined behaviour, and glibc reads MALLOC_ARENA_MAX once. Every other command, and every test
// that runs a command in its own process, is unaffected.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

/** Set in the child, so it runs the command instead of starting another child. */
const AUDIT_CHILD = 'X402_TALLY_AUDIT_CHILD';
/**
 * No optimising tier for WebAssembly (V8's baseline compiler, Liftoff, only), and V8's heap tuned
 * for memory over speed: production flags, not testing ones (docs/benchmarks.md, "Audit memory").
 */
const AUDIT_NODE_FLAGS = ['--no-wasm-dynamic-tiering', '--no-wasm-tier-up', '--optimize-for-size'];

const argv = process.argv.slice(2);
if (argv.includes('audit') && process.env[AUDIT_CHILD] === undefined) {
  // The compiled command line when it can be had (bin/compiled.js), else this file through tsx.
  const { compiledCli } = await import('./compiled.js');
  const script = compiledCli() ?? fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [...AUDIT_NODE_FLAGS, script, ...argv], {
    stdio: 'inherit',
    env: { ...process.env, [AUDIT_CHILD]: '1', MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '1' },
  });
  // Ctrl-C at a terminal reaches the child too (one process group): this process only waits for
  // it to finish. A SIGTERM or SIGHUP sent to this process alone is passed on.
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`failed: could not start the audit process: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (code !== null) process.exit(code);
    // Killed by a signal (a second Ctrl-C): this process ends by the same signal, as the audit
    // itself would have, so the shell reports it alike.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 1000);
  });
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}

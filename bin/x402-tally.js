#!/usr/bin/env node
// The command line. The sources are TypeScript run through tsx, so the command works right after
// `npm install` with no build step.
//
// `audit`, `run` and `schedule` run in a child node process started with the flags of
// bin/node-flags.js on its command line, and this process only waits for it (docs/operations.md,
// "The processes of run, schedule and audit"). They can only be given when a process starts: V8's
// flags set later are undefined behaviour, and glibc reads MALLOC_ARENA_MAX once.
//
// `audit`'s act on the embedded database's WebAssembly, which V8 otherwise compiles a second time,
// optimised, in background threads (~100 MB more resident memory for a one-shot process), on
// glibc's per-thread malloc arenas, which keep what those threads freed, and on V8's heap
// (`--optimize-for-size`: memory over speed; ~40 MB less resident on the demo, for somewhat more
// CPU time); the audit runs the command line compiled to JavaScript (bin/compiled.js).
// `run`'s and `schedule`'s bound V8's young generation, whose garbage otherwise made most of a
// large backfill's peak resident memory (docs/benchmarks.md, "The run's own process"); they run
// the sources through tsx, as before. Every other command, and every test that runs a command in
// its own process, is unaffected.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { COMMAND_PROCESS } from './node-flags.js';

/**
 * Set in the child, so it runs the command instead of starting another child (its name from when
 * only `audit` had one; bench/audit-memory.ts sets it to measure one process).
 */
const CHILD = 'X402_TALLY_AUDIT_CHILD';

const argv = process.argv.slice(2);
// `audit` wherever it stands (as before); `run` and `schedule` as the command, the first word.
const command = argv.includes('audit') ? 'audit' : argv[0] === 'run' || argv[0] === 'schedule' ? argv[0] : undefined;
if (command !== undefined && process.env[CHILD] === undefined) {
  const own = COMMAND_PROCESS[command];
  // The audit's compiled command line when it can be had (bin/compiled.js), else this file
  // through tsx (and always for `run` and `schedule`).
  const script =
    (command === 'audit' && (await import('./compiled.js')).compiledCli()) || fileURLToPath(import.meta.url);
  // The environment's own values win (MALLOC_ARENA_MAX when already set).
  const child = spawn(process.execPath, [...own.node, script, ...argv], {
    stdio: 'inherit',
    env: { ...own.env, ...process.env, [CHILD]: '1' },
  });
  // Ctrl-C at a terminal reaches the child too (one process group): this process only waits for
  // it to finish. A SIGTERM or SIGHUP sent to this process alone is passed on.
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`failed: could not start the ${command} process: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (code !== null) process.exit(code);
    // Killed by a signal (a second Ctrl-C): this process ends by the same signal, as the command
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

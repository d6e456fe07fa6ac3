import { ConfigError, loadConfig, secretUrls, type Config } from '../config/index.ts';
import { escapeControl } from '../lib/terminal.ts';
import { describeError, isTemporary } from '../lib/errors.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { parseCommandLine, UsageError, type CommandName } from './args.ts';
import type { Command, CommandIo } from './context.ts';
import { commandHelp, HELP } from './help.ts';

/** Exit codes: 0 success, 1 failure (fix something first), 75 temporary (run again later). */
export const EXIT = { ok: 0, failure: 1, temporary: 75 } as const;

const COMMAND_MODULES: Record<CommandName, () => Promise<Command>> = {
  run: async () => (await import('./run.ts')).runCommandRun,
  serve: async () => (await import('./serve.ts')).serveCommand,
  schedule: async () => (await import('./schedule.ts')).scheduleCommand,
  audit: async () => (await import('./audit.ts')).auditCommand,
  export: async () => (await import('./export.ts')).exportCommand,
  migrate: async () => (await import('./migrate.ts')).migrateCommand,
  demo: async () => (await import('./demo.ts')).demoCommand,
  mcp: async () => (await import('./mcp.ts')).mcpCommand,
};

/** Configuration keys a command cannot do without. */
const REQUIRED: Partial<Record<CommandName, readonly string[]>> = {
  run: ['RPC_URL'],
  schedule: ['RPC_URL'],
  audit: ['RPC_URL'],
};

function stopSignal(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

/**
 * Runs one command line in this process and returns its exit code (it never calls
 * process.exit; src/cli/main.ts does). `argv` excludes node and the script; `env` is read only
 * through loadConfig.
 */
export async function runCommand(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  io: Partial<CommandIo> = {},
): Promise<number> {
  // Every line for a person goes through escapeControl: error messages and audit lines quote
  // provider, catalog and bundle text, whose ESC or BEL a terminal would obey.
  const toOut = io.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const toErr = io.err ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const out = (line: string) => toOut(escapeControl(line));
  const err = (line: string) => toErr(escapeControl(line));
  let config: Config | undefined;
  let log: Logger | undefined;
  const secrets = () => secretUrls(config);
  let dispose = () => {};
  try {
    const args = parseCommandLine(argv);
    if (args.help || !args.command) {
      out(args.command ? commandHelp(args.command) : HELP);
      return EXIT.ok;
    }
    // Checked before anything is opened, with every other problem of the configuration.
    config = loadConfig(env, args.overrides, { keys: REQUIRED[args.command] ?? [], by: args.command });
    log = (io.log ?? createLogger(config.LOG_LEVEL, config.LOG_FORMAT)).child({ command: args.command });
    let signal = io.signal;
    if (!signal) {
      const stop = stopSignal();
      signal = stop.signal;
      dispose = stop.dispose;
    }
    // Progress lines are for a person at a terminal; LOG_FORMAT=json keeps stderr pure JSON lines.
    const human = process.stderr.isTTY && config.LOG_FORMAT !== 'json';
    const toProgress = io.progress ?? (human ? (line: string) => void process.stderr.write(`» ${line}\n`) : undefined);
    const progress = toProgress && ((line: string) => toProgress(escapeControl(line)));
    // Loading audit's code (the chain client, the method, the embedded database) takes seconds
    // on a slow machine: a person sees a line before it (docs/operations.md, "Audit").
    if (args.command === 'audit') progress?.('audit: starting…');
    const command = await COMMAND_MODULES[args.command]();
    return await command({ args, config, env, log, out, err, signal, progress, io });
  } catch (error) {
    if (error instanceof ConfigError) {
      err(error.message);
      return EXIT.failure;
    }
    if (error instanceof UsageError) {
      err(`${error.message}\nsee: x402-tally --help`);
      return EXIT.failure;
    }
    const message = describeError(error, { urls: secrets() });
    // One JSON line for log collectors, next to the human line on stderr.
    if (isTemporary(error)) {
      log?.warn({ exit: EXIT.temporary, error: message }, 'command failed temporarily');
      err(`temporary failure (exit 75), run again later: ${message}`);
      return EXIT.temporary;
    }
    log?.error({ exit: EXIT.failure, error: message }, 'command failed');
    err(`failed: ${message}`);
    return EXIT.failure;
  } finally {
    dispose();
  }
}

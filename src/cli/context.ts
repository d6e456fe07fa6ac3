import type { Config } from '../config/index.ts';
import type { Logger } from '../lib/log.ts';
import type { CycleDeps } from '../run/deps.ts';
import type { ParsedArgs } from './args.ts';

/** How a command meets the outside world; tests pass their own. */
export interface CommandIo {
  /** Command output for people and scripts (stdout), one call per line. */
  out: (line: string) => void;
  /** Error text for people (stderr), one call per line. */
  err?: (line: string) => void;
  /** Structured logs; default: pino JSON lines on stderr at LOG_LEVEL. */
  log?: Logger;
  /** Stops the long-running commands (serve, schedule, demo); default: SIGINT/SIGTERM. */
  signal?: AbortSignal;
  /** Whether to print progress lines on stderr; default: process.stderr.isTTY. */
  progress?: (line: string) => void;
  /** Called with the API base URL once it listens (serve, schedule, demo). */
  onListening?: (url: string) => void;
  /** Replaces stages of the run (tests). */
  deps?: Partial<CycleDeps>;
  /** Interruption hook of the run (tests): see CycleOptions.hook. */
  hook?: (point: string) => void | Promise<void>;
}

export interface CommandContext {
  args: ParsedArgs;
  config: Config;
  env: Record<string, string | undefined>;
  log: Logger;
  out: (line: string) => void;
  err: (line: string) => void;
  signal: AbortSignal;
  progress: ((line: string) => void) | undefined;
  io: Partial<CommandIo>;
}

/** A command returns its exit code: 0 success; errors are thrown and mapped by runCommand. */
export type Command = (ctx: CommandContext) => Promise<number>;

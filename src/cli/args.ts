import { parseArgs } from 'node:util';
import { CONFIG_FLAGS } from '../config/index.ts';
import { TallyError } from '../lib/errors.ts';
import { didYouMean } from './suggest.ts';

export { CONFIG_FLAGS } from '../config/index.ts';

/** Flags of single commands, not configuration. */
const COMMAND_FLAGS = {
  generation: { type: 'string' },
  out: { type: 'string' },
  bundle: { type: 'string' },
  seller: { type: 'string' },
  'no-serve': { type: 'boolean' },
  'make-latest': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const COMMANDS = ['run', 'serve', 'schedule', 'audit', 'export', 'migrate', 'demo', 'mcp'] as const;
export type CommandName = (typeof COMMANDS)[number];

export interface ParsedArgs {
  command: CommandName | undefined;
  help: boolean;
  /** Configuration overrides named like the environment variables. */
  overrides: Record<string, string>;
  generation: string | undefined;
  out: string | undefined;
  bundle: string | undefined;
  /** audit --seller 0x...: recompute one seller from its own logs only. */
  seller: string | undefined;
  noServe: boolean;
  /** run: make a generation as of an older block than the live one the latest anyway. */
  makeLatest: boolean;
}

/** A mistake on the command line: exit 1 with the usage hint. */
export class UsageError extends TallyError {}

/**
 * Parses `argv` (without node and the script): one command name, then flags. Unknown flags and
 * extra positionals are usage errors.
 */
export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { ...COMMAND_FLAGS };
  for (const flag of Object.keys(CONFIG_FLAGS)) options[flag] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(explainParseError(error as Error & { code?: string }, options));
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1) throw new UsageError(`unexpected argument: ${positionals[1]}`);
  const name = positionals[0];
  if (name !== undefined && name !== 'help' && !(COMMANDS as readonly string[]).includes(name)) {
    throw new UsageError(`unknown command: ${name}${didYouMean(name, COMMANDS)} (one of ${COMMANDS.join(', ')})`);
  }
  const overrides: Record<string, string> = {};
  for (const [flag, envName] of Object.entries(CONFIG_FLAGS)) {
    const value = values[flag];
    if (typeof value === 'string') overrides[envName] = value;
  }
  const str = (key: string): string | undefined =>
    typeof values[key] === 'string' ? (values[key] as string) : undefined;
  return {
    command: name === 'help' || name === undefined ? undefined : (name as CommandName),
    help: values.help === true || name === 'help' || name === undefined,
    overrides,
    generation: str('generation'),
    out: str('out'),
    bundle: str('bundle'),
    seller: str('seller'),
    noServe: values['no-serve'] === true,
    makeLatest: values['make-latest'] === true,
  };
}

/**
 * parseArgs' message in our words: an unknown flag is named, with the closest known flag; the
 * rest (a string flag without its value, ...) pass through.
 */
function explainParseError(error: Error & { code?: string }, options: Record<string, unknown>): string {
  const unknown = /^Unknown option '(-{1,2})([^'=]+)'/.exec(error.message);
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) {
    const typed = `${unknown[1]}${unknown[2]}`;
    const flags = Object.keys(options).map((f) => `--${f}`);
    return `unknown flag ${typed}${didYouMean(typed.replace(/^-(?!-)/, '--'), flags)}`;
  }
  return error.message;
}

/** `--generation N`: a positive integer, or a usage error naming the flag. */
export function parseGeneration(value: string | undefined): number {
  if (value === undefined || !/^[1-9][0-9]{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
    throw new UsageError(
      `--generation must be a positive integer, got ${value === undefined ? 'nothing' : JSON.stringify(value)}`,
    );
  }
  return Number(value);
}

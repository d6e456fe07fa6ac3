import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { escapeControl } from './terminal.ts';

export type { Logger } from 'pino';

// A JSON string literal, and whether a line may hold a control character at all: escaped in a
// string (\u00XX, \b, \f, \r) or raw (DEL and C1, which JSON leaves as they are).
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;
const MAY_HOLD_CONTROL = /\\u00[01]|\\u007[fF]|\\[bfr]|[\x7f-\x9f]/;

/**
 * One pino JSON line with every string in it (keys, values, error messages and stacks) passed
 * through escapeControl: outside text in a log field (a provider's error, a catalog or bundle
 * value) is shown by pino-pretty or `tail` as `\x1b`, never obeyed by the terminal. The line stays
 * valid JSON, and is returned unchanged when it holds no control character (almost always).
 */
export function escapeLogLine(line: string): string {
  if (!MAY_HOLD_CONTROL.test(line)) return line;
  return line.replace(JSON_STRING, (literal) => JSON.stringify(escapeControl(JSON.parse(literal) as string)));
}

/**
 * Logs on stderr (stdout stays free for command output). `json`: one JSON object per line, for
 * collectors; `pretty`: one readable line per event (pino-pretty: time, level, message, fields);
 * `auto` (LOG_FORMAT's default): pretty on a terminal, JSON otherwise. Either way control
 * characters in fields are escaped (escapeLogLine).
 */
export function createLogger(
  level = 'info',
  format: 'auto' | 'pretty' | 'json' = 'auto',
  isTty = Boolean(process.stderr.isTTY),
): Logger {
  const options = { level, base: undefined, hooks: { streamWrite: escapeLogLine } };
  if (format === 'pretty' || (format === 'auto' && isTty)) {
    const stream = pretty({
      destination: 2,
      sync: true,
      colorize: isTty,
      translateTime: 'HH:MM:ss',
      ignore: 'pid,hostname',
      singleLine: true,
    });
    return pino(options, stream);
  }
  return pino(options, pino.destination({ dest: 2, sync: true }));
}

/** A logger that writes nothing: the default in library code and tests. */
export const silentLogger: Logger = pino({ level: 'silent' });

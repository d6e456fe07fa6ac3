import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger } from 'pino';

/**
 * Logs on stderr (stdout stays free for command output). `json`: one JSON object per line, for
 * collectors; `pretty`: one readable line per event (pino-pretty: time, level, message, fields);
 * `auto` (LOG_FORMAT's default): pretty on a terminal, JSON otherwise.
 */
export function createLogger(
  level = 'info',
  format: 'auto' | 'pretty' | 'json' = 'auto',
  isTty = Boolean(process.stderr.isTTY),
): Logger {
  if (format === 'pretty' || (format === 'auto' && isTty)) {
    const stream = pretty({
      destination: 2,
      sync: true,
      colorize: isTty,
      translateTime: 'HH:MM:ss',
      ignore: 'pid,hostname',
      singleLine: true,
    });
    return pino({ level, base: undefined }, stream);
  }
  return pino({ level, base: undefined }, pino.destination({ dest: 2, sync: true }));
}

/** A logger that writes nothing: the default in library code and tests. */
export const silentLogger: Logger = pino({ level: 'silent' });

import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/** JSON lines on stderr (stdout stays free for command output). */
export function createLogger(level = 'info'): Logger {
  return pino({ level, base: undefined }, pino.destination({ dest: 2, sync: true }));
}

/** A logger that writes nothing: the default in library code and tests. */
export const silentLogger: Logger = pino({ level: 'silent' });

/**
 * The two kinds of failure the command line maps to exit codes: a temporary one (a source that
 * cannot be reached, a lock held by another run, a database that is restarting) ends a run with
 * exit 75, "run again later"; anything else with exit 1. Both carry a short message that says
 * what to do, details for the log, and the cause chain.
 */
export class TallyError extends Error {
  /** True when running again later may succeed without any change (exit 75). */
  readonly temporary: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    message: string,
    options: { temporary?: boolean; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.temporary = options.temporary ?? false;
    this.details = options.details;
  }
}

/** A failure that a later run may not meet: exit 75. */
export class TemporaryError extends TallyError {
  constructor(message: string, options: { details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, { ...options, temporary: true });
  }
}

// SQLSTATE classes that mean "the database is not available right now" (connection exceptions,
// operator intervention such as a restart, insufficient resources) or "this transaction lost a
// race" (40: serialization failure, deadlock), so a run can be retried.
const TEMPORARY_SQLSTATE_CLASSES = ['08', '57', '53', '40'];
// And single codes of other classes: 55000 is what a database with ALLOW_CONNECTIONS false (being
// moved or restored) answers to a new connection: "database ... is not currently accepting connections".
const TEMPORARY_SQLSTATES = new Set(['55000']);
const TEMPORARY_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

/** Whether an error (from any layer) is temporary: ours, a Postgres SQLSTATE, or a socket error. */
export function isTemporary(error: unknown): boolean {
  for (
    let e: unknown = error;
    e instanceof Error || (e && typeof e === 'object');
    e = (e as { cause?: unknown }).cause
  ) {
    if (e instanceof TallyError) return e.temporary;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (
        /^[0-9A-Z]{5}$/.test(code) &&
        (TEMPORARY_SQLSTATE_CLASSES.includes(code.slice(0, 2)) || TEMPORARY_SQLSTATES.has(code))
      )
        return true;
      if (TEMPORARY_NODE_CODES.has(code)) return true;
    }
    if (!(e as { cause?: unknown }).cause) break;
  }
  return false;
}

import { redactText, redactUrl, untrustedText } from './redact.ts';

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

/**
 * One line that says what failed, for an operator: the message of the error and of each cause
 * (a cause its effect already quotes is not repeated; no stack), viem's short message and details
 * in place of its long message, every given URL redacted (the URL, and any part of it a provider
 * echoed, then any other http(s) URL down to its origin: providers put keys in URLs), and, with
 * `maxChars`, cut short, for text a provider wrote (untrusted).
 */
export function describeError(error: unknown, options: { urls?: readonly string[]; maxChars?: number } = {}): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const line = firstLine(e);
    if (line && !parts.some((p) => p.includes(line))) parts.push(line);
    // viem's errors carry their cause's text in details already
    e = e instanceof Error && !isViemError(e) ? e.cause : undefined;
  }
  let text = parts.join(': ') || (error instanceof TallyError ? error.name : 'unknown error');
  if (options.urls) {
    text = redactText(text, options.urls).replace(/https?:\/\/[^\s"']+/g, (u) => redactUrl(u));
  }
  return options.maxChars === undefined ? text : untrustedText(text, options.maxChars);
}

/** viem's BaseError, by shape (lib/ does not import viem): a short message, and details. */
function isViemError(e: Error): e is Error & { shortMessage: string; details?: string } {
  return typeof (e as { shortMessage?: unknown }).shortMessage === 'string';
}

function firstLine(e: unknown): string {
  if (!(e instanceof Error)) return String(e).split('\n')[0]!;
  // viem's short message and details may span lines, all of them the provider's answer: kept, on one line
  if (isViemError(e)) return [e.shortMessage, e.details].filter(Boolean).join(': ').replace(/\s+/g, ' ').trim();
  return e.message.split('\n')[0]!;
}

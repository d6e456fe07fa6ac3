// C0 but tab (0x09) and newline (0x0A), DEL, and C1: the characters a terminal may obey as commands.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Text made safe to write to a terminal: each control character that could command it (C0
 * U+0000-U+001F but tab and newline, DEL U+007F, C1 U+0080-U+009F: ESC, BEL, CR, CSI, ...) becomes
 * the visible text `\xNN` (two lowercase hex digits), so `ESC[2J` shows as `\x1b[2J` instead of
 * clearing the screen. Tab and newline are kept: they move the cursor but command nothing (our
 * own help and usage texts have newlines; `untrustedText` in src/lib/redact.ts turns a
 * provider's into spaces). Nothing else changes (a backslash stays one), so escaping twice gives
 * the text of escaping once. Every line x402-tally writes to stdout or stderr, log lines
 * included, goes through it (runCommand, createLogger).
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

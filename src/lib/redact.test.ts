import { describe, expect, it } from 'vitest';
import { untrustedText } from './redact.ts';

// The hostile body of issue 20: clear the screen, then set the window title to "pwned".
const HOSTILE = '\x1b[2J\x1b]0;pwned\x07';

describe('untrustedText', () => {
  it('default: one line, control characters escaped', () => {
    expect(untrustedText(`  bad\tgateway\r\n${HOSTILE}  `)).toBe(String.raw`bad gateway \x1b[2J\x1b]0;pwned\x07`);
  });

  it('args: cut to max characters before escaping, so an escape is never cut in half', () => {
    // 'ab' + ESC + 'cd' cut to 3 characters is 'ab' + ESC, then '…'.
    expect(untrustedText('ab\x1bcd', 3)).toBe(String.raw`ab\x1b…`);
    expect(untrustedText('x'.repeat(10), 4)).toBe('xxxx…');
  });
});

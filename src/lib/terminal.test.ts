import { describe, expect, it } from 'vitest';
import { escapeControl } from './terminal.ts';

// The hostile body of issue 20: clear the screen, then set the window title to "pwned".
const HOSTILE = '\x1b[2J\x1b]0;pwned\x07';

describe('escapeControl', () => {
  it('default: ESC and BEL become the visible text \\x1b and \\x07', () => {
    expect(escapeControl(HOSTILE)).toBe(String.raw`\x1b[2J\x1b]0;pwned\x07`);
  });

  it('behavior: every C0 but tab and newline, DEL and every C1 is escaped; tab and newline are kept', () => {
    const all = Array.from({ length: 0xa0 }, (_, i) => String.fromCharCode(i)).join('');
    const escaped = escapeControl(all);
    // Worked out by hand: 0x00-0x08 escaped, tab and newline kept, 0x0b-0x1f escaped, the
    // printable ASCII 0x20-0x7e as is, then DEL and C1 0x7f-0x9f escaped.
    const hex = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => `\\x${(from + i).toString(16).padStart(2, '0')}`).join('');
    const printable = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
    expect(escaped).toBe(hex(0x00, 0x08) + '\t\n' + hex(0x0b, 0x1f) + printable + hex(0x7f, 0x9f));
    expect(escaped).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  });

  it('behavior: text without control characters is unchanged, and escaping twice equals escaping once', () => {
    const plain = 'RPC answered 0x1f at C:\\x\\y — naïve ✓';
    expect(escapeControl(plain)).toBe(plain);
    expect(escapeControl(escapeControl(HOSTILE))).toBe(escapeControl(HOSTILE));
  });

  it('behavior: a CR (which would overwrite the line) and a C1 CSI (U+009B) are escaped', () => {
    expect(escapeControl('ok\rFAKE\u009b2J')).toBe(String.raw`ok\x0dFAKE\x9b2J`);
  });
});

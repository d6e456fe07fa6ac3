import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeControl } from './terminal.ts';
import { escapeLogLine } from './log.ts';

/** The model: the same JSON value with escapeControl applied to every string, keys included. */
function escapedValue(v: unknown): unknown {
  if (typeof v === 'string') return escapeControl(v);
  if (Array.isArray(v)) return v.map(escapedValue);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [escapeControl(k), escapedValue(x)]));
  return v;
}

describe('escapeLogLine', () => {
  it('default: an ESC and a BEL in a field (JSON \\u001b, \\u0007) become the text \\x1b, \\x07', () => {
    const line = '{"level":50,"error":"bad \\u001b[2J\\u001b]0;pwned\\u0007","msg":"command failed"}\n';
    const escaped = escapeLogLine(line);
    expect(escaped).toBe(
      String.raw`{"level":50,"error":"bad \\x1b[2J\\x1b]0;pwned\\x07","msg":"command failed"}` + '\n',
    );
    expect(JSON.parse(escaped).error).toBe(String.raw`bad \x1b[2J\x1b]0;pwned\x07`);
  });

  it('behavior: DEL and C1, which JSON leaves raw, are escaped; keys too', () => {
    const line = JSON.stringify({ ['k\u009b']: 'a\u007fb' });
    expect(JSON.parse(escapeLogLine(line))).toEqual({ [String.raw`k\x9b`]: String.raw`a\x7fb` });
  });

  it('behavior: newlines and tabs (a stack) are kept; an escaped backslash followed by u001b is not a control', () => {
    const line = JSON.stringify({ stack: 'Error: x\n\tat f', path: String.raw`C:\u001b`, cr: 'a\rb' });
    expect(JSON.parse(escapeLogLine(line))).toEqual({
      stack: 'Error: x\n\tat f',
      path: String.raw`C:\u001b`,
      cr: String.raw`a\x0db`,
    });
  });

  it('behavior: a line without control characters is returned as it is', () => {
    const line = '{"level":30,"time":1,"path":"C:\\\\tmp","msg":"catalog read"}\n';
    expect(escapeLogLine(line)).toBe(line);
  });

  it('behavior: any JSON line reads back as its value with every string escaped', () => {
    // Strings of any UTF-16 code unit, so C0, DEL and C1 come up often next to quotes and backslashes.
    const text = fc.string({ unit: 'binary' });
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        text,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('node'), { maxLength: 3 }),
        fc.dictionary(text, tie('node'), { maxKeys: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        expect(JSON.parse(escapeLogLine(JSON.stringify(v)))).toEqual(escapedValue(v));
      }),
    );
  });
});

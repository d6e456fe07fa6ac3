import { HttpRequestError } from 'viem';
import { describe, expect, it } from 'vitest';
import { describeError, TallyError } from './errors.ts';

describe('describeError', () => {
  it('default: the message and its causes on one line, a cause the message quotes not repeated', () => {
    const inner = new Error('connect ECONNREFUSED 127.0.0.1:5432\n    at stack line');
    const outer = new TallyError('database not reachable', { cause: new Error('pool failed', { cause: inner }) });
    expect(describeError(outer)).toBe('database not reachable: pool failed: connect ECONNREFUSED 127.0.0.1:5432');
    expect(describeError(new TallyError('x failed: y', { cause: new Error('y') }))).toBe('x failed: y');
    expect(describeError('a thrown string')).toBe('a thrown string');
  });

  it('behavior: a viem error gives its short message and details, every URL given redacted, cut when asked', () => {
    const url = 'https://base.example/v2/SECRETKEY123';
    const error = new HttpRequestError({ url, status: 500, details: `upstream ${url} said ${'x'.repeat(400)}` });
    const text = describeError(error, { urls: [url], maxChars: 300 });
    expect(text.startsWith('HTTP request failed.: upstream')).toBe(true);
    expect(text).not.toContain('SECRETKEY123');
    expect(text.length).toBe(301); // 300 characters of text, then the ellipsis (untrustedText)
    expect(text.endsWith('…')).toBe(true);
    // a URL not given is still cut to its origin once urls are given (providers echo keys)
    expect(describeError(new Error('failed at https://other.example/k/SECRET'), { urls: [] })).toBe(
      'failed at https://other.example/…',
    );
  });
});

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodePaymentCursor, decodeRankCursor, encodePaymentCursor, encodeRankCursor } from './cursor.ts';
import { ApiError } from './errors.ts';

describe('page cursors', () => {
  it('default: a rank cursor is 01 + the rank in hex, padded to 64 digits', () => {
    expect(encodeRankCursor(255)).toBe(`01${'0'.repeat(60)}ff`);
    expect(decodeRankCursor(`01${'0'.repeat(60)}ff`)).toBe(255);
  });

  it('default: a payment cursor is 02 + block (46 hex) + log index (16 hex)', () => {
    const c = encodePaymentCursor({ blockNumber: 0x2625a00n, logIndex: 7 });
    expect(c).toBe(`02${'0'.repeat(39)}2625a00${'0'.repeat(15)}7`);
    expect(c).toHaveLength(64);
  });

  it('behavior: encode then decode gives the position back', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (rank) => {
        expect(decodeRankCursor(encodeRankCursor(rank))).toBe(rank);
      }),
    );
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (blockNumber, logIndex) => {
          expect(decodePaymentCursor(encodePaymentCursor({ blockNumber, logIndex }))).toEqual({
            blockNumber,
            logIndex,
          });
        },
      ),
    );
  });

  it('error: a cursor of the other endpoint, rank 0 or an oversized field is a 400 invalid_cursor', () => {
    const bad = [
      encodePaymentCursor({ blockNumber: 1n, logIndex: 1 }).replace(/^02/, '03'),
      `01${'0'.repeat(62)}`,
      `01${'f'.repeat(62)}`,
      `02${'f'.repeat(62)}`,
    ];
    for (const c of bad) {
      const decode = c.startsWith('01') ? decodeRankCursor : decodePaymentCursor;
      expect(() => decode(c)).toThrow(ApiError);
    }
    expect(() => decodeRankCursor(encodePaymentCursor({ blockNumber: 1n, logIndex: 1 }))).toThrow(/cursor/);
    expect(() => decodePaymentCursor(encodeRankCursor(1))).toThrow(/cursor/);
  });

  it('behavior: a cursor of one ranking order is a 400 in the other; each round-trips in its own', () => {
    expect(encodeRankCursor(255, 'external_revenue')).toBe(`04${'0'.repeat(60)}ff`);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (rank) => {
        const external = encodeRankCursor(rank, 'external_revenue');
        expect(decodeRankCursor(external, 'external_revenue')).toBe(rank);
        expect(() => decodeRankCursor(external, 'verified_revenue')).toThrow(/^cursor: /);
        expect(() => decodeRankCursor(encodeRankCursor(rank), 'external_revenue')).toThrow(/^cursor: /);
      }),
    );
  });
});

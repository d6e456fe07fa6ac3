import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../lib/paths.ts';
import { canonicalJson, catalogSha256 } from './canonical.ts';

describe('canonicalJson', () => {
  it('default: keys sorted recursively, arrays in order, no whitespace', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }], e: { z: null, y: 'x' } })).toBe(
      '{"a":[{"c":3,"d":2}],"b":1,"e":{"y":"x","z":null}}',
    );
  });

  it('behavior: keys sort by UTF-16 code unit (uppercase before lowercase, astral before U+FFFF)', () => {
    // U+1F600 is the surrogate pair D83D DE00, which sorts before U+FF5E in UTF-16 units.
    expect(canonicalJson({ b: 1, B: 2, '～': 3, '😀': 4 })).toBe('{"B":2,"b":1,"😀":4,"～":3}');
  });

  it('behavior: a "__proto__" key stays an ordinary key', () => {
    const item = JSON.parse('{"z":1,"__proto__":{"x":1}}');
    expect(canonicalJson(item)).toBe('{"__proto__":{"x":1},"z":1}');
  });

  it('behavior: canonical JSON read back gives itself (what audit relies on for a bundle)', () => {
    const crawl = path.join(projectRoot, 'fixtures/catalog/bazaar-catalog-2025-12-31.json');
    const items = (JSON.parse(readFileSync(crawl, 'utf8')) as { resources: unknown[] }).resources;
    const lines = items.map((item) => canonicalJson(item));
    expect(lines.filter((line) => canonicalJson(JSON.parse(line)) !== line)).toEqual([]);
    // Numbers are written as JavaScript's shortest round-trip form, which reads back to itself.
    const numbers = '{"big":1e+21,"f":0.30000000000000004,"n":0}';
    expect(canonicalJson({ n: -0, big: 1e21, f: 0.1 + 0.2 })).toBe(numbers);
    expect(canonicalJson(JSON.parse(numbers))).toBe(numbers);
  });
});

describe('catalogSha256', () => {
  it('default: sha256 of each canonical line followed by a newline', () => {
    // printf '{"a":[{"c":3,"d":2}],"b":1}\n[]\n' | sha256sum
    const lines = [canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] }), canonicalJson([])];
    expect(catalogSha256(lines)).toBe('15ecdcfd00abafeae825a39e5e4456c917c09b81a8f045d1556e7d606df5c458');
  });

  it('args: an empty catalog hashes the empty text', () => {
    expect(catalogSha256([])).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

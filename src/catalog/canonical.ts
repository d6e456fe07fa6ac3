import { createHash } from 'node:crypto';

/**
 * Canonical JSON of a value: object keys sorted recursively by UTF-16 code unit order (the JS
 * default sort), no whitespace; array order kept. Values JSON cannot hold (undefined, functions)
 * are dropped from objects the way JSON.stringify drops them. Pure; deterministic.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const input = value as Record<string, unknown>;
    // A null prototype so that a "__proto__" key read by JSON.parse stays an ordinary key.
    const out: Record<string, unknown> = Object.create(null);
    for (const key of Object.keys(input).sort()) out[key] = sortKeys(input[key]);
    return out;
  }
  return value;
}

/**
 * sha256 of a catalog's canonical form: lowercase hex sha256 of the UTF-8 text made of each
 * item's canonical JSON followed by "\n", in input order.
 */
export function catalogSha256(itemLines: readonly string[]): string {
  const hash = createHash('sha256');
  for (const line of itemLines) hash.update(`${line}\n`, 'utf8');
  return hash.digest('hex');
}

/** Lowercase hex sha256 of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

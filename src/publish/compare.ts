import { writeJson } from '../lib/json.ts';
import type { GenerationRows } from './bundle.ts';

/** One difference between a published generation and its recomputation, said for a person. */
export interface Difference {
  /** What differs: `digest`, `as_of`, `listing`, `seller`, `payment`, `market_day`, `catalog`. */
  kind: string;
  /** The row's key (listing_id, seller address, tx_hash:log_index, day) or the field's name. */
  key: string;
  field?: string;
  published: string;
  recomputed: string;
}

export function formatDifference(d: Difference): string {
  const where = d.field ? `${d.kind} ${d.key} ${d.field}` : `${d.kind} ${d.key}`;
  return `${where}: published ${d.published}, recomputed ${d.recomputed}`;
}

const show = (v: unknown) => (v === undefined ? '(absent)' : writeJson(v));

function compareRows(
  kind: string,
  keyOf: (row: Record<string, unknown>) => string,
  published: Record<string, unknown>[],
  recomputed: Record<string, unknown>[],
  out: Difference[],
): void {
  const mine = new Map(recomputed.map((r) => [keyOf(r), r]));
  const theirs = new Map(published.map((r) => [keyOf(r), r]));
  for (const [key, p] of theirs) {
    const r = mine.get(key);
    if (!r) {
      out.push({ kind, key, published: 'present', recomputed: 'absent' });
      continue;
    }
    for (const field of new Set([...Object.keys(p), ...Object.keys(r)])) {
      const a = show(p[field]);
      const b = show(r[field]);
      if (a !== b) out.push({ kind, key, field, published: a, recomputed: b });
    }
  }
  for (const key of mine.keys()) {
    if (!theirs.has(key)) out.push({ kind, key, published: 'absent', recomputed: 'present' });
  }
}

/**
 * Every difference between a published generation (from our database or a bundle) and the
 * same generation recomputed from raw chain data: digests first, then the as-of point, then
 * each row of listings, sellers, payments and market days, field by field. Values are compared
 * as canonical JSON text, so a bigint and the same integer read from JSON are equal.
 */
export function compareGenerationRows(published: GenerationRows, recomputed: GenerationRows): Difference[] {
  const out: Difference[] = [];
  const pg = published.generation;
  const rg = recomputed.generation;
  for (const name of ['catalog_sha256', 'evidence_sha256'] as const) {
    if (pg.digests[name] !== rg.digests[name]) {
      out.push({ kind: 'digest', key: name, published: String(pg.digests[name]), recomputed: String(rg.digests[name]) });
    }
  }
  if (pg.method_version !== rg.method_version) {
    out.push({ kind: 'method', key: 'method_version', published: pg.method_version, recomputed: rg.method_version });
  }
  for (const field of ['block_number', 'block_hash', 'timestamp'] as const) {
    const a = show(pg.as_of[field]);
    const b = show(rg.as_of[field]);
    if (a !== b) out.push({ kind: 'as_of', key: field, published: a, recomputed: b });
  }
  compareRows('listing', (r) => String(r.listing_id), published.listings, recomputed.listings, out);
  compareRows('seller', (r) => String(r.seller_address), published.sellers, recomputed.sellers, out);
  compareRows('payment', (r) => `${r.tx_hash}:${r.log_index}`, published.payments, recomputed.payments, out);
  compareRows('market_day', (r) => String(r.day), published.marketDaily, recomputed.marketDaily, out);
  return out;
}

import { writeJson } from '../lib/json.ts';
import type { GenerationRows } from './bundle.ts';

/** One difference between a published generation and its recomputation, said for a person. */
export interface Difference {
  /**
   * What differs: `digest`, `first_period` (method 2.0.0: the first period, and seller, whose digest
   * differs), `method`, `constant`, `window`, `as_of`, `listing`, `seller`, `payment`, `market_day`, `seller_day`,
   * `period`, `seller_period`.
   */
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

/**
 * Compares rows matched by `keyOf`, field by field. `named` says a row's key in a difference
 * (default the key itself): e.g. a 3.0.0 payment with its class, seller and period.
 */
function compareRows(
  kind: string,
  keyOf: (row: Record<string, unknown>) => string,
  published: Record<string, unknown>[],
  recomputed: Record<string, unknown>[],
  out: Difference[],
  named: (key: string, row: Record<string, unknown>) => string = (key) => key,
): void {
  const mine = new Map(recomputed.map((r) => [keyOf(r), r]));
  const theirs = new Map(published.map((r) => [keyOf(r), r]));
  for (const [key, p] of theirs) {
    const r = mine.get(key);
    if (!r) {
      out.push({ kind, key: named(key, p), published: 'present', recomputed: 'absent' });
      continue;
    }
    for (const field of new Set([...Object.keys(p), ...Object.keys(r)])) {
      const a = show(p[field]);
      const b = show(r[field]);
      if (a !== b) out.push({ kind, key: named(key, p), field, published: a, recomputed: b });
    }
  }
  for (const [key, r] of mine) {
    if (!theirs.has(key)) out.push({ kind, key: named(key, r), published: 'absent', recomputed: 'present' });
  }
}

const paymentKey = (r: Record<string, unknown>) => `${String(r.tx_hash)}:${String(r.log_index)}`;

/**
 * A payment's key in a difference: under method 3.0.0 (rows with a class) also its class, its
 * seller and its digest period, so a changed claim says where it lies, as a differing period does.
 */
function paymentNamed(generation: GenerationRows['generation']) {
  const period = BigInt(
    String((generation.constants as Record<string, unknown> | null)?.digest_period_seconds ?? 3600),
  );
  return (key: string, row: Record<string, unknown>) => {
    if (row.class === undefined || row.class === null) return key;
    const ts = BigInt(String(row.block_timestamp));
    const start = String(ts - (ts % period));
    return `${key} (${String(row.class)}, seller ${String(row.seller_address)}, period ${isoOf(start)} (${start}))`;
  };
}

const periodText = (p: Record<string, unknown> | undefined) =>
  p ? `${String(p.payments)} payments ${String(p.sha256)}` : 'no payment';
const isoOf = (start: string) => new Date(Number(start) * 1000).toISOString().replace('.000Z', 'Z');

/**
 * Method 2.0.0 bisection: the first period (in time) whose digest differs between the two, and
 * the first seller (byte order of its address) whose own digest of that period differs. Found
 * from the published period digests alone, before any row is compared: it says where two
 * computations part. Undefined when every period agrees (or under 1.0.0, which has no periods).
 */
export function firstPeriodDifference(published: GenerationRows, recomputed: GenerationRows): Difference | undefined {
  const index = (rows: Record<string, unknown>[], key: (r: Record<string, unknown>) => string) =>
    new Map(rows.map((r) => [key(r), r]));
  const start = (r: Record<string, unknown>) => String(r.period_start);
  const p = index(published.periods, start);
  const r = index(recomputed.periods, start);
  const starts = [...new Set([...p.keys(), ...r.keys()])].sort((a, b) => Number(BigInt(a) - BigInt(b)) || 0);
  const first = starts.find((k) => periodText(p.get(k)) !== periodText(r.get(k)));
  if (first === undefined) return undefined;
  const sellerKey = (row: Record<string, unknown>) => `${String(row.seller_address)}@${start(row)}`;
  const ps = index(
    published.sellerPeriods.filter((x) => start(x) === first),
    sellerKey,
  );
  const rs = index(
    recomputed.sellerPeriods.filter((x) => start(x) === first),
    sellerKey,
  );
  const seller = [...new Set([...ps.keys(), ...rs.keys()])]
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .find((k) => periodText(ps.get(k)) !== periodText(rs.get(k)));
  const where = `${isoOf(first)} (${first})${seller ? ` seller ${seller.split('@')[0]}` : ''}`;
  const [a, b] = seller ? [ps.get(seller), rs.get(seller)] : [p.get(first), r.get(first)];
  return { kind: 'first_period', key: where, published: periodText(a), recomputed: periodText(b) };
}

/**
 * Every difference between a published generation (from our database or a bundle) and the
 * same generation recomputed from raw chain data: digests first, then the method version, every
 * constant and the window, then the as-of point, then
 * each row of listings, sellers, payments and market days, field by field. Under method 2.0.0 the
 * first differing period and seller come right after the digests (firstPeriodDifference), and
 * every period digest is compared at the end. Values are compared
 * as canonical JSON text, so a bigint and the same integer read from JSON are equal.
 */
export function compareGenerationRows(published: GenerationRows, recomputed: GenerationRows): Difference[] {
  const out: Difference[] = [];
  const pg = published.generation;
  const rg = recomputed.generation;
  for (const name of ['catalog_sha256', 'evidence_sha256'] as const) {
    if (pg.digests[name] !== rg.digests[name]) {
      out.push({
        kind: 'digest',
        key: name,
        published: String(pg.digests[name]),
        recomputed: String(rg.digests[name]),
      });
    }
  }
  const bisected = firstPeriodDifference(published, recomputed);
  if (bisected) out.push(bisected);
  if (pg.method_version !== rg.method_version) {
    out.push({ kind: 'method', key: 'method_version', published: pg.method_version, recomputed: rg.method_version });
  }
  // What defines the method's run besides its version: every constant, and the window.
  const pc = (pg.constants ?? {}) as Record<string, unknown>;
  const rc = (rg.constants ?? {}) as Record<string, unknown>;
  for (const key of [...new Set([...Object.keys(pc), ...Object.keys(rc)])].sort()) {
    if (show(pc[key]) !== show(rc[key]))
      out.push({ kind: 'constant', key, published: show(pc[key]), recomputed: show(rc[key]) });
  }
  for (const field of ['start', 'end', 'seconds', 'market_from'] as const) {
    const a = show(pg.window?.[field]);
    const b = show(rg.window?.[field]);
    if (a !== b) out.push({ kind: 'window', key: field, published: a, recomputed: b });
  }
  for (const field of ['block_number', 'block_hash', 'timestamp'] as const) {
    const a = show(pg.as_of[field]);
    const b = show(rg.as_of[field]);
    if (a !== b) out.push({ kind: 'as_of', key: field, published: a, recomputed: b });
  }
  compareRows('listing', (r) => String(r.listing_id), published.listings, recomputed.listings, out);
  compareRows('seller', (r) => String(r.seller_address), published.sellers, recomputed.sellers, out);
  compareRows('payment', paymentKey, published.payments, recomputed.payments, out, paymentNamed(pg));
  compareRows('market_day', (r) => String(r.day), published.marketDaily, recomputed.marketDaily, out);
  compareRows(
    'seller_day',
    (r) => `${String(r.seller_address)}@${String(r.day)}`,
    published.sellerDaily,
    recomputed.sellerDaily,
    out,
  );
  compareRows('period', (r) => String(r.period_start), published.periods, recomputed.periods, out);
  compareRows(
    'seller_period',
    (r) => `${String(r.seller_address)}@${String(r.period_start)}`,
    published.sellerPeriods,
    recomputed.sellerPeriods,
    out,
  );
  return out;
}

/**
 * `audit --seller`: the differences of one seller only, between a published generation and a
 * recomputation that indexed that seller's logs alone. Compared: its digest periods (the first
 * differing one named first), its seller row (all but `rank`, which depends on the other sellers),
 * its listing rows and its payments. Market days and the generation digest are not (they need
 * every seller).
 */
export function compareSellerRows(published: GenerationRows, recomputed: GenerationRows, seller: string): Difference[] {
  const out: Difference[] = [];
  const own = (rows: Record<string, unknown>[]) => rows.filter((r) => r.seller_address === seller);
  const periodsOf = (rows: GenerationRows) => {
    const periods = own(rows.sellerPeriods);
    return { ...rows, periods: periods.map(({ seller_address: _s, ...p }) => p), sellerPeriods: periods };
  };
  const bisected = firstPeriodDifference(periodsOf(published), periodsOf(recomputed));
  if (bisected) out.push(bisected);
  const noRank = (rows: Record<string, unknown>[]) => own(rows).map(({ rank: _r, ...r }) => r);
  compareRows('seller', (r) => String(r.seller_address), noRank(published.sellers), noRank(recomputed.sellers), out);
  compareRows('listing', (r) => String(r.listing_id), own(published.listings), own(recomputed.listings), out);
  compareRows(
    'payment',
    paymentKey,
    own(published.payments),
    own(recomputed.payments),
    out,
    paymentNamed(published.generation),
  );
  compareRows(
    'seller_period',
    (r) => `${String(r.seller_address)}@${String(r.period_start)}`,
    own(published.sellerPeriods),
    own(recomputed.sellerPeriods),
    out,
  );
  return out;
}

/**
 * The SQL expressions bench/method.ts generates its chain with (and bench/method-mix.ts, method
 * 3.0.0's traffic, on top): deterministic, from a payment's counter i alone, so a load is one
 * `insert ... select from generate_series` and anything generated can be counted again later by
 * the same expressions without keeping it.
 */

export const SELLERS = Number(process.env.SELLERS ?? 50_000);
export const LISTINGS = Number(process.env.LISTINGS ?? Math.round(SELLERS * 1.2));
export const AS_OF_TS = 1_767_268_800n; // 2026-01-01T12:00:00Z
export const AS_OF_BLOCK = 40_000_000n;
export const BLOCKS_PER_PAYMENT = Number(process.env.BLOCKS_PER_PAYMENT ?? 1);
if (!(BLOCKS_PER_PAYMENT > 0 && BLOCKS_PER_PAYMENT <= 1)) throw new Error('BLOCKS_PER_PAYMENT must be in (0, 1]');
export const BLOCKS_PER_SECOND = 5n; // post-Denim: 200 ms blocks, five share each timestamp
export const WINDOW_BLOCKS = 2_592_000n * BLOCKS_PER_SECOND;
export const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';

// Hashes and addresses look like real ones (uniformly random hex, from sha256 of a counter), not
// zero-padded counters: sorts and hash tables behave on them as on chain data.
export const hex = (tag: string, expr: string, chars: number) =>
  `'0x' || left(encode(sha256(convert_to('${tag}' || (${expr}), 'UTF8')), 'hex'), ${chars})`;
export const seller = (expr: string) => hex('seller', expr, 40);
/** The timestamp of block `b` (five blocks a second, AS_OF_BLOCK at AS_OF_TS). */
export const blockTs = (b: string) => `(${AS_OF_TS} - (${AS_OF_BLOCK} - (${b})) / ${BLOCKS_PER_SECOND})`;
/** A uniform number in [0, 1) from a counter and a salt (hashint8: a fixed hash in every Postgres). */
export const uniform = (expr: string, salt: number) =>
  `((hashint8((${expr}) * 7 + ${salt})::bigint + 2147483648) / 4294967296.0)`;
/** The seller index (1..SELLERS) of payment i: 40% seller 1, the rest log-uniform (Zipf, s = 1). */
export const sellerIndex = (i: string) =>
  `(case when ${uniform(i, 1)} < 0.4 then 1
         else 1 + floor(exp((${uniform(i, 2)}) * ln(${SELLERS})))::int end)`;
/** The value of payment i to seller s: one of the seller's three prices, or (1%) any amount. */
export const value = (i: string, s: string) =>
  `(case when ${uniform(i, 3)} < 0.01 then 1 + floor(${uniform(i, 4)} * 5000000)::bigint
         else 100 * (1 + (abs(hashint8((${s}) * 3 + floor(${uniform(i, 5)} * 3)::bigint)) % 500)) end)`;
/** The payer of payment i: one of 100,000 addresses. */
export const payerIndex = (i: string) => `abs(hashint8((${i}) * 7 + 6)) % 100000`;

/**
 * The block of payment i of `count` payments numbered from `first`, spread evenly over `span`
 * blocks ending at `last` (descending from it when `down`): the payments are grouped into
 * round(count * BLOCKS_PER_PAYMENT) blocks (at least one, at most `span`), consecutive payments
 * sharing a block.
 */
export function blockOf(i: string, first: number, count: number, span: bigint, last: bigint, down: boolean): string {
  const blocks = BigInt(Math.min(Number(span), Math.max(1, Math.round(count * BLOCKS_PER_PAYMENT))));
  const k = `((${i} - ${first})::bigint * ${blocks} / ${count})`; // 0 .. blocks - 1
  return down
    ? `${last} - (${k} + 1) * ${span} / ${blocks}`
    : `${last} - ${span} + 1 + ${k} * (${span} - 1) / ${blocks}`;
}

/**
 * The addresses of the benchmarks' fake chains (bench/indexer.ts, bench/cron.ts): recognisable
 * prefixes (5e11 seller, 9a7e payer, 07e5 other) and the index in hex.
 */
export const seller = (i: number) => `0x5e11${i.toString(16).padStart(36, '0')}`;
export const payer = (i: number) => `0x9a7e${i.toString(16).padStart(36, '0')}`;
export const other = (i: number) => `0x07e5${i.toString(16).padStart(36, '0')}`;

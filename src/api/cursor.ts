import { createHash } from 'node:crypto';
import { badParameter } from './errors.ts';

/**
 * Opaque page cursors of the rankings and the evidence payments: 64 lowercase hex digits, so
 * every cursor of the API has one shape. Layout (docs/api.md):
 * - rankings: `01` + the last rank of the page, zero-padded to 62 hex digits;
 * - payments: `02` + the last block number (46 hex digits) + the last log index (16 hex digits);
 * - search results: `03` + the number of results already served (62 hex digits), a position in
 *   the ranked results of one generation (they never change once published);
 * - rankings by external revenue (`sort=external_revenue`): `04` + the last position of the page
 *   in that order, zero-padded to 62 hex digits;
 * - the seller directory: `05` + the order's digit + 21 hex digits of the sha256 of the order and
 *   filters (directoryFilterDigest) + the last seller address of the page without 0x (40 hex).
 * - operator groups: `06` + the number of groups already served (62 hex digits), a position in
 *   the groups of one generation (they never change once published).
 * The kind tag makes a cursor of one endpoint (or of one order of the rankings) a 400 on the
 * other. Pure functions.
 */
const RANKING = '01';
const PAYMENT = '02';
const SEARCH = '03';
const EXTERNAL_RANKING = '04';
const DIRECTORY = '05';
const OPERATORS = '06';
const INT4_MAX = 2_147_483_647n;

/** The orders of the rankings, each with its own cursor kind. */
export type RankingOrder = 'verified_revenue' | 'external_revenue';
const RANKING_KIND: Record<RankingOrder, string> = { verified_revenue: RANKING, external_revenue: EXTERNAL_RANKING };

export function encodeRankCursor(rank: number, order: RankingOrder = 'verified_revenue'): string {
  return RANKING_KIND[order] + rank.toString(16).padStart(62, '0');
}

/**
 * The rank (position in `order`) after which the next page starts; throws a 400
 * `invalid_cursor` when malformed or made by the other order.
 */
export function decodeRankCursor(cursor: string, order: RankingOrder = 'verified_revenue'): number {
  if (!cursor.startsWith(RANKING_KIND[order])) throw invalid();
  const rank = BigInt(`0x${cursor.slice(2)}`);
  if (rank < 1n || rank > INT4_MAX) throw invalid();
  return Number(rank);
}

export interface PaymentPosition {
  blockNumber: bigint;
  logIndex: number;
}

export function encodePaymentCursor(position: PaymentPosition): string {
  return (
    PAYMENT + position.blockNumber.toString(16).padStart(46, '0') + position.logIndex.toString(16).padStart(16, '0')
  );
}

/** The (block, log index) after which the next page starts, newest first; 400 when malformed. */
export function decodePaymentCursor(cursor: string): PaymentPosition {
  if (!cursor.startsWith(PAYMENT)) throw invalid();
  const blockNumber = BigInt(`0x${cursor.slice(2, 48)}`);
  const logIndex = BigInt(`0x${cursor.slice(48)}`);
  // Block numbers are int8 in the database.
  if (blockNumber > 2n ** 63n - 1n || logIndex > INT4_MAX) throw invalid();
  return { blockNumber, logIndex: Number(logIndex) };
}

export function encodeSearchCursor(served: number): string {
  return SEARCH + served.toString(16).padStart(62, '0');
}

/** How many ranked search results come before the next page; 400 when malformed. */
export function decodeSearchCursor(cursor: string): number {
  if (!cursor.startsWith(SEARCH)) throw invalid();
  const served = BigInt(`0x${cursor.slice(2)}`);
  if (served < 1n || served > INT4_MAX) throw invalid();
  return Number(served);
}

/** The orders of the seller directory, in the order of their cursor digit (0..3). */
export const DIRECTORY_SORTS = ['verified_revenue', 'external_revenue', 'payments', 'payers'] as const;
export type DirectorySort = (typeof DIRECTORY_SORTS)[number];

/**
 * 21 hex digits naming one order and one set of filters of the seller directory: a cursor
 * carries it, so a cursor of another order or filter set is a 400. `filters` holds each given
 * filter's value (undefined when not given); the key order does not matter.
 */
export function directoryFilterDigest(
  sort: DirectorySort,
  filters: Record<string, string | number | undefined>,
): string {
  const given = Object.entries(filters)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256')
    .update(JSON.stringify([sort, given]))
    .digest('hex')
    .slice(0, 21);
}

export function encodeDirectoryCursor(sort: DirectorySort, digest: string, lastSeller: string): string {
  return DIRECTORY + DIRECTORY_SORTS.indexOf(sort).toString(16) + digest + lastSeller.slice(2);
}

/**
 * The seller after which the next directory page starts (0x + 40 hex); a 400 `invalid_cursor`
 * when the cursor is not a directory cursor of this order and these filters.
 */
export function decodeDirectoryCursor(cursor: string, sort: DirectorySort, digest: string): string {
  if (!cursor.startsWith(DIRECTORY + DIRECTORY_SORTS.indexOf(sort).toString(16))) throw invalid();
  if (cursor.slice(3, 24) !== digest)
    throw badParameter(
      'cursor',
      'was made for another sort or other filters; use it with the parameters of the page that gave it, or start again without cursor',
      'invalid_cursor',
    );
  return `0x${cursor.slice(24)}`;
}

export function encodeOperatorsCursor(served: number): string {
  return OPERATORS + served.toString(16).padStart(62, '0');
}

/** How many operator groups come before the next page; 400 when malformed. */
export function decodeOperatorsCursor(cursor: string): number {
  if (!cursor.startsWith(OPERATORS)) throw invalid();
  const served = BigInt(`0x${cursor.slice(2)}`);
  if (served < 1n || served > INT4_MAX) throw invalid();
  return Number(served);
}

function invalid() {
  return badParameter(
    'cursor',
    'is not a cursor of this endpoint; use next_cursor of the previous page',
    'invalid_cursor',
  );
}

import type { Kysely, Selectable } from 'kysely';
import { sql } from 'kysely';
import type { z } from 'zod';
import type { GenOperatorGroupsTable, GenMarketSummaryTable, Schema } from '../../db/schema.ts';
import { decodeOperatorsCursor, encodeOperatorsCursor } from '../cursor.ts';
import { ApiError } from '../errors.ts';
import type { MarketSummary, OperatorGroup, OperatorGroupDetail, OperatorsPage } from '../schemas/groups.ts';
import { hasClasses } from './classes.ts';
import type { GenerationRow } from './generation.ts';

/** The optional outputs of migration 0038 a generation may lack (computed before it). */
export type GenerationOutput = 'operator_groups' | 'market_summary';

/** Whether the method computed `output` for the generation (gen_outputs). */
export async function hasOutput(db: Kysely<Schema>, g: GenerationRow, output: GenerationOutput): Promise<boolean> {
  // (a database whose schema predates migration 0038 has no such table: `serve` keeps serving a
  // database migrate has not reached yet, e.g. during the compact layout's copy; its generations
  // have none of these outputs)
  const { rows } = await sql<{ present: boolean }>`select to_regclass('gen_outputs') is not null as present`.execute(
    db,
  );
  if (!rows[0]?.present) return false;
  const row = await db
    .selectFrom('gen_outputs')
    .select('output')
    .where('generation', '=', g.generation)
    .where('output', '=', output)
    .executeTakeFirst();
  return row !== undefined;
}

function groupOf(r: Selectable<GenOperatorGroupsTable>, v3: boolean): z.input<typeof OperatorGroup> {
  return {
    id: r.group_id,
    seller_count: r.seller_count,
    sellers: r.seller_addresses,
    hosts: r.hosts,
    payments_30d: r.payments_30d,
    payers_30d: r.payers_30d,
    verified_revenue_30d_micro: r.verified_revenue_30d_micro,
    external_revenue_30d_micro: v3 ? r.external_revenue_30d_micro : null,
  };
}

/** A page of the generation's operator groups: by verified revenue descending, then id in byte order. */
export async function readOperators(
  db: Kysely<Schema>,
  g: GenerationRow,
  p: { cursor?: string | undefined; limit: number },
): Promise<z.input<typeof OperatorsPage>> {
  const served = p.cursor === undefined ? 0 : decodeOperatorsCursor(p.cursor);
  const computed = await hasOutput(db, g, 'operator_groups');
  // One row more than the page tells whether another page follows.
  const rows = await db
    .selectFrom('gen_operator_groups')
    .selectAll()
    .where('generation', '=', g.generation)
    .orderBy('verified_revenue_30d_micro', 'desc')
    .orderBy(sql`group_id collate "C"`)
    .offset(served)
    .limit(p.limit + 1)
    .execute();
  const page = rows.slice(0, p.limit);
  const v3 = hasClasses(g);
  return {
    count: page.length,
    next_cursor: rows.length > p.limit ? encodeOperatorsCursor(served + page.length) : null,
    generation: g.generation,
    method_version: g.method_version,
    computed,
    groups: page.map((r) => groupOf(r, v3)),
  };
}

export function operatorNotFound(id: string, computed: boolean): ApiError {
  return new ApiError(
    404,
    'operator_not_found',
    computed
      ? `${id} is not an operator group of this generation`
      : `${id}: this generation was computed before operator groups existed (it has none)`,
  );
}

/** One operator group with its members' own numbers; 404 operator_not_found. */
export async function readOperator(
  db: Kysely<Schema>,
  g: GenerationRow,
  id: string,
): Promise<z.input<typeof OperatorGroupDetail>> {
  const row = await db
    .selectFrom('gen_operator_groups')
    .selectAll()
    .where('generation', '=', g.generation)
    .where('group_id', '=', id)
    .executeTakeFirst();
  if (!row) throw operatorNotFound(id, await hasOutput(db, g, 'operator_groups'));
  const v3 = hasClasses(g);
  const members = await db
    .selectFrom('gen_operator_members as m')
    .innerJoin('gen_sellers as s', (join) =>
      join.onRef('s.generation', '=', 'm.generation').onRef('s.seller_address', '=', 'm.seller_address'),
    )
    .select([
      's.seller_address',
      's.tier',
      's.evidence_state',
      's.rank',
      's.payments_30d',
      's.payers_30d',
      's.verified_revenue_30d_micro',
      's.external_revenue_30d_micro',
    ])
    .where('m.generation', '=', g.generation)
    .where('m.group_id', '=', id)
    .orderBy(sql`s.seller_address collate "C"`)
    .execute();
  return {
    generation: g.generation,
    method_version: g.method_version,
    ...groupOf(row, v3),
    members: members.map((m) => ({
      seller_address: m.seller_address,
      slug: m.seller_address,
      tier: m.tier as 'verified' | 'listed_only',
      evidence_state: m.evidence_state as 'verified' | 'insufficient' | 'not_observed',
      rank: m.rank,
      payments_30d: m.payments_30d,
      payers_30d: m.payers_30d,
      verified_revenue_30d_micro: m.verified_revenue_30d_micro,
      external_revenue_30d_micro: v3 ? m.external_revenue_30d_micro : null,
    })),
  };
}

/** The seller's operator group id in the generation, or null (in none, or none computed). */
export async function operatorGroupOf(db: Kysely<Schema>, g: GenerationRow, address: string): Promise<string | null> {
  if (!(await hasOutput(db, g, 'operator_groups'))) return null;
  const row = await db
    .selectFrom('gen_operator_members')
    .select('group_id')
    .where('generation', '=', g.generation)
    .where('seller_address', '=', address)
    .executeTakeFirst();
  return row?.group_id ?? null;
}

type Summary = z.input<typeof MarketSummary>;
const PERIODS = ['last_7d', 'prev_7d', 'last_30d'] as const;

function periodOf(r: Selectable<GenMarketSummaryTable> | undefined, v3: boolean): Summary['periods']['last_7d'] {
  if (!r || r.days === 0 || r.first_day === null || r.last_day === null) return null;
  return {
    first_day: r.first_day,
    last_day: r.last_day,
    days: r.days,
    payments: Number(r.payments ?? 0),
    volume_micro: r.volume_micro ?? 0n,
    external_volume_micro: v3 ? r.external_volume_micro : null,
    payers: r.payers ?? 0,
    sellers_paid: r.sellers_paid ?? 0,
  };
}

/** A change column (numeric text, or a bigint when integral) as a JSON number; null stays null. */
const change = (v: string | bigint | null): number | null => (v === null ? null : Number(v));

/** The market summary of the generation: its three periods and the change of the last 7 days. */
export async function readMarketSummary(db: Kysely<Schema>, g: GenerationRow): Promise<Summary> {
  const rows = await db.selectFrom('gen_market_summary').selectAll().where('generation', '=', g.generation).execute();
  const computed = rows.length > 0 || (await hasOutput(db, g, 'market_summary'));
  const by = new Map(rows.map((r) => [r.period, r]));
  const v3 = hasClasses(g);
  const last = by.get('last_7d');
  const [last7, prev7, last30] = PERIODS.map((p) => periodOf(by.get(p), v3));
  return {
    generation: g.generation,
    method_version: g.method_version,
    computed,
    periods: { last_7d: last7!, prev_7d: prev7!, last_30d: last30! },
    change: {
      payments: change(last?.change_payments ?? null),
      volume: change(last?.change_volume ?? null),
      external_volume: v3 ? change(last?.change_external_volume ?? null) : null,
      payers: change(last?.change_payers ?? null),
      sellers_paid: change(last?.change_sellers_paid ?? null),
    },
  };
}

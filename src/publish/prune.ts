import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { ADDRESS_REFS } from '../db/address-refs.ts';
import type { Schema } from '../db/schema.ts';
import { FUNDING_LOOKBACK_SECONDS } from '../config/index.ts';

export interface PruneResult {
  /** Generations deleted (published ones past retention, and unpublished leftovers). */
  generations: number[];
  catalogSnapshots: number;
  /** Chain fact rows deleted because a reorg removed them before every retained generation's run. */
  removedFacts: number;
  /**
   * The partitions of `blocks` and `transfers` dropped because no retained generation reaches
   * their blocks, by range: the first block number of each (`blocks_from_<n>`, `transfers_from_<n>`).
   */
  droppedPartitions: bigint[];
  /**
   * Addresses deleted because no row refers to them any more: only when this prune dropped a
   * partition, or an earlier one did and its address prune did not finish; in a transaction after
   * the one that dropped (pruneGenerations).
   */
  addresses: number;
}

/**
 * Keeps the newest `retain` published generations and deletes the rest with their rows; also
 * deletes generations that were computed but never published and are older than the live one,
 * catalog snapshots that no remaining generation uses (except the newest snapshot), chain fact
 * rows that a reorg removed before the oldest retained generation's run, and hour partials
 * closed at or before the oldest remaining generation; then drops the fact partitions no
 * remaining generation reaches (dropFactPartitions). In one transaction; safe to re-run. Never
 * deletes the live generation.
 *
 * When that transaction dropped a partition it also marks an address prune due (a row of
 * `address_prune_due`, migration 0049), and after it commits the addresses nothing refers to any
 * more are deleted in a transaction of their own (pruneDueAddresses): the drops lock the fact
 * parents exclusively until their commit, and the evidence endpoint waits on them, so they commit
 * first and the address prune, the long part (seconds to tens of seconds a week), waits on
 * nothing. A run killed between the two leaves the row; the next prune deletes those addresses
 * even when it drops nothing. Must run under the run lock (src/run/lock.ts), as pruneAddresses.
 */
export async function pruneGenerations(db: Kysely<Schema>, retain: number): Promise<PruneResult> {
  const pruned = await pruneGenerationRows(db, retain);
  return { ...pruned, addresses: await pruneDueAddresses(db) };
}

/**
 * The first transaction of pruneGenerations: everything but the address prune, which it marks due
 * when it dropped a partition. Exported for the tests, which stop a prune between its two
 * transactions with it.
 */
export async function pruneGenerationRows(db: Kysely<Schema>, retain: number): Promise<Omit<PruneResult, 'addresses'>> {
  if (!Number.isInteger(retain) || retain < 1) throw new RangeError('retain must be a positive integer');
  const result = await db.transaction().execute(async (trx) => {
    // The deleted generations' partitions of gen_sellers stay until this transaction commits
    // (migration 0047): dropping one locks gen_sellers exclusively, and this transaction may run long.
    await sql`select set_config('x402tally.gen_sellers_drop', 'later', true)`.execute(trx);
    const live = await trx.selectFrom('published_pointer').select('generation').executeTakeFirst();
    if (!live) return { generations: [], catalogSnapshots: 0, removedFacts: 0, droppedPartitions: [] };

    const keep = await trx
      .selectFrom('generations')
      .select('generation')
      .where('status', '=', 'published')
      .orderBy('generation', 'desc')
      .limit(retain)
      .execute();
    const kept = keep.map((r) => r.generation);
    if (!kept.includes(live.generation)) kept.push(live.generation);

    const deleted = await trx
      .deleteFrom('generations')
      .where('generation', 'not in', kept)
      .where((eb) => eb.or([eb('status', '=', 'published'), eb('generation', '<', live.generation)]))
      .returning('generation')
      .execute();

    const snapshots = await sql<{ n: bigint }>`
      with gone as (
        delete from catalog_snapshots s
         where not exists (select 1 from generations g where g.catalog_snapshot_id = s.snapshot_id)
           and s.snapshot_id < (select max(snapshot_id) from catalog_snapshots)
        returning 1)
      select count(*) as n from gone`.execute(trx);

    const oldestSeq = await trx
      .selectFrom('generations')
      .select((eb) => eb.fn.min('run_seq').as('seq'))
      .executeTakeFirst();
    let removedFacts = 0;
    if (oldestSeq?.seq != null) {
      // Block versions a reorg removed before every remaining generation's run, with their
      // transfers (addresses stay: the dictionary is only pruned with partitions, docs/data-model.md).
      const gone = await sql<{ blocks: bigint; transfers: bigint; claims: bigint }>`
        with versions as (
          delete from blocks where removed_seq <= ${oldestSeq.seq} returning block_id
        ), facts as (
          delete from transfers where block_id in (select block_id from versions) returning 1
        ), claims as (
          delete from batch_claims where block_id in (select block_id from versions) returning 1
        )
        select (select count(*) from versions) as blocks, (select count(*) from facts) as transfers,
               (select count(*) from claims) as claims`.execute(trx);
      removedFacts = Number(gone.rows[0]!.blocks) + Number(gone.rows[0]!.transfers) + Number(gone.rows[0]!.claims);
      // The rows of method 3.0.0's streams that carry their own visibility, likewise.
      for (const table of ['seller_outgoing', 'batch_channel_created', 'x402_proxy_pairings'] as const) {
        const rows = await sql<{ n: bigint }>`
          with gone as (delete from ${sql.table(table)} where removed_seq <= ${oldestSeq.seq} returning 1)
          select count(*) as n from gone`.execute(trx);
        removedFacts += Number(rows.rows[0]?.n ?? 0);
      }
    }
    // Hour partials (method 2.0.0) and daily rows closed at or before the oldest remaining generation serve none.
    const oldest = await trx
      .selectFrom('generations')
      .select((eb) => eb.fn.min('generation').as('g'))
      .executeTakeFirst();
    if (oldest?.g != null) {
      for (const table of ['part_seller_hours', 'part_hours', 'seller_daily_rows'] as const) {
        await trx.deleteFrom(table).where('gen_to', '<=', oldest.g).execute();
      }
    }
    // Last, as they lock the fact tables exclusively until commit (the evidence endpoint waits).
    const droppedPartitions = await dropFactPartitions(trx);
    await dropOutgoingPartitions(trx);
    // the addresses only the dropped partitions named: deleted after this commits (pruneDueAddresses)
    if (droppedPartitions.length > 0)
      await trx
        .insertInto('address_prune_due')
        .defaultValues()
        .onConflict((oc) => oc.doNothing())
        .execute();
    return {
      generations: deleted.map((r) => r.generation).sort((a, b) => a - b),
      catalogSnapshots: Number(snapshots.rows[0]?.n ?? 0),
      removedFacts,
      droppedPartitions,
    };
  });
  // Then, in a short transaction (readers of gen_sellers wait only for it), the partitions of the
  // generations no longer stored: those just deleted, and any a killed prune left.
  await sql`select gen_sellers_drop_unused()`.execute(db);
  return result;
}

/**
 * When an address prune is due (a row of `address_prune_due`), deletes the addresses nothing
 * refers to (pruneAddresses) and the row, in one transaction of its own, and returns how many
 * addresses went; else 0 at once. Under the run lock, as pruneAddresses.
 */
export async function pruneDueAddresses(db: Kysely<Schema>): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const due = await trx.deleteFrom('address_prune_due').returning('due').execute();
    return due.length > 0 ? pruneAddresses(trx) : 0;
  });
}

/** The tables partitioned on the facts' block-id ranges, created and dropped together (migrations 0027, 0029). */
const FACT_PARENTS = ['transfers', 'batch_claims', 'blocks'] as const;

/** One range of the fact tables: its partition of each of FACT_PARENTS (any may be missing). */
interface FactRange {
  /** Block ids [from, to). */
  from: bigint;
  to: bigint;
  blocks?: string;
  transfers?: string;
  batch_claims?: string;
}

/** The partitions of FACT_PARENTS in this schema, by range, lowest first. */
async function factRanges(trx: Transaction<Schema>): Promise<FactRange[]> {
  const { rows } = await sql<{ parent: (typeof FACT_PARENTS)[number]; name: string; bound: string }>`
    select p.relname as parent, c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_inherits h
      join pg_class c on c.oid = h.inhrelid
      join pg_class p on p.oid = h.inhparent
      join pg_namespace n on n.oid = p.relnamespace
     where n.nspname = current_schema()
       and p.relname in (${sql.join(FACT_PARENTS.map((p) => sql.lit(p)))})`.execute(trx);
  const ranges = new Map<string, FactRange>();
  for (const r of rows) {
    // FOR VALUES FROM ('a') TO ('b'): migration 0027 makes no other kind of partition
    const bound = /^FOR VALUES FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)$/.exec(r.bound);
    if (!bound) throw new Error(`the partition ${r.name} of ${r.parent} has a bound prune does not know: ${r.bound}`);
    const key = `${bound[1]}:${bound[2]}`;
    const range = ranges.get(key) ?? { from: BigInt(bound[1]!), to: BigInt(bound[2]!) };
    range[r.parent] = r.name;
    ranges.set(key, range);
  }
  return [...ranges.values()].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
}

/**
 * Drops (detaches, then drops) every partition pair of `transfers` and `blocks` that is not the
 * newest and whose blocks all have `block_timestamp < H`, H being the earliest time a remaining
 * generation reaches: the least `market_from_ts` (the UTC day holding its window start, where its
 * market days, its evidence rows in `generation_payments` and its audit begin). A partition only
 * the oldest retained generation still reaches is kept until that generation goes. Block numbers
 * grow with time, so only facts older than every window go. Then `seller_coverage` moves past the
 * dropped blocks: a seller covered only below them loses its row, the others start after them
 * (`from_ts` one second after the latest dropped block), so coverage never claims facts that are
 * gone, and a later run whose window reaches back there (an older as-of point) backfills them
 * from the chain (src/sync/index.ts). Returns the first block number of each dropped range.
 */
async function dropFactPartitions(trx: Transaction<Schema>): Promise<bigint[]> {
  const horizon = await trx
    .selectFrom('generations')
    .select((eb) => eb.fn.min('market_from_ts').as('ts'))
    .executeTakeFirst();
  if (horizon?.ts == null) return [];
  const h = BigInt(horizon.ts);
  const ranges = await factRanges(trx);
  const dropped: bigint[] = [];
  let coveredFrom: { block: bigint; ts: bigint } | undefined;
  for (const range of ranges.slice(0, -1)) {
    // The latest block of the range (its partition's block_timestamp index), and whether a transfer
    // or claim is left where no block is (none should be: a fact lives in its block's partition).
    const facts = [range.transfers, range.batch_claims].filter((p) => p !== undefined);
    const { rows } = await sql<{ ts: string | null; orphans: boolean }>`
      select ${range.blocks ? sql`(select max(block_timestamp) from ${sql.table(range.blocks)})` : sql`null::int8`} as ts,
             ${
               facts.length > 0
                 ? sql.join(
                     facts.map((p) => sql`exists (select 1 from ${sql.table(p)})`),
                     sql` or `,
                   )
                 : sql`false`
             } as orphans`.execute(trx);
    const latest = rows[0]!.ts === null ? null : BigInt(rows[0]!.ts);
    if (latest === null ? rows[0]!.orphans : latest >= h) continue;
    for (const parent of FACT_PARENTS) {
      const part = range[parent];
      if (!part) continue;
      await sql`alter table ${sql.table(parent)} detach partition ${sql.table(part)}`.execute(trx);
      await sql`drop table ${sql.table(part)}`.execute(trx);
    }
    dropped.push(range.from >> 20n);
    if (latest !== null) coveredFrom = { block: range.to >> 20n, ts: latest + 1n };
  }
  if (coveredFrom) {
    const top = coveredFrom.block.toString();
    await moveCoverage(trx, sql`seller_coverage`, coveredFrom);
    // The window streams' rows went with the partitions (claims) or go now (the proxy pairings,
    // which only the dropped transfers needed): their coverage moves as the sellers' does. The
    // channels' stream keeps every ChannelCreated from deployment on and is never moved.
    await moveCoverage(trx, sql`stream_coverage`, coveredFrom, sql`stream in ('x402_proxies', 'x402_claims')`);
    await sql`delete from x402_proxy_pairings where block_number < ${top}::int8`.execute(trx);
  }
  return dropped;
}

/**
 * Moves a coverage table past dropped blocks (below `to.block`, the latest dropped one at
 * `to.ts - 1`): a row covered only below them goes, the others start after them, so coverage never
 * claims rows that are gone, and a run whose window reaches back there reads them again.
 */
async function moveCoverage(
  trx: Transaction<Schema>,
  table: RawBuilder<unknown>,
  to: { block: bigint; ts: bigint },
  where: RawBuilder<unknown> = sql`true`,
): Promise<void> {
  const top = to.block.toString();
  await sql`delete from ${table} where to_block < ${top}::int8 and ${where}`.execute(trx);
  await sql`update ${table}
               set from_block = ${top}::int8, from_ts = greatest(from_ts, ${to.ts.toString()}::int8)
             where from_block < ${top}::int8 and ${where}`.execute(trx);
}

/**
 * Drops every partition of `seller_outgoing` (migration 0029, bounds in block numbers) that is
 * not the newest and whose rows are all older than H - funding_lookback_seconds, H being the
 * least `market_from_ts` of the remaining generations (as dropFactPartitions): a payment at or
 * after H may be tested against a transfer up to the lookback before it. Then
 * seller_outgoing_coverage moves past the dropped blocks. An empty partition is dropped when a
 * newer one was (its range lies wholly below: no row of it could be newer).
 */
async function dropOutgoingPartitions(trx: Transaction<Schema>): Promise<bigint[]> {
  const horizon = await trx
    .selectFrom('generations')
    .select((eb) => eb.fn.min('market_from_ts').as('ts'))
    .executeTakeFirst();
  if (horizon?.ts == null) return [];
  const h = BigInt(horizon.ts) - BigInt(FUNDING_LOOKBACK_SECONDS);
  const { rows: parts } = await sql<{ name: string; bound: string }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_inherits i
      join pg_class c on c.oid = i.inhrelid
      join pg_class p on p.oid = i.inhparent
      join pg_namespace n on n.oid = p.relnamespace
     where n.nspname = current_schema() and p.relname = 'seller_outgoing'`.execute(trx);
  const ranges = parts
    .map((r) => {
      const bound = /^FOR VALUES FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)$/.exec(r.bound);
      if (!bound)
        throw new Error(`the partition ${r.name} of seller_outgoing has a bound prune does not know: ${r.bound}`);
      return { name: r.name, from: BigInt(bound[1]!), to: BigInt(bound[2]!) };
    })
    .sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  // Newest first, so that an empty partition is dropped only below a dropped one.
  const dropped: bigint[] = [];
  let coveredFrom: { block: bigint; ts: bigint } | undefined;
  let newerDropped = false;
  for (const range of ranges.slice(0, -1).reverse()) {
    const { rows } = await sql<{ ts: string | null }>`
      select max(block_timestamp)::text as ts from ${sql.table(range.name)}`.execute(trx);
    const latest = rows[0]!.ts === null ? null : BigInt(rows[0]!.ts);
    if (latest === null ? !newerDropped : latest >= h) continue;
    newerDropped = true;
    await sql`alter table seller_outgoing detach partition ${sql.table(range.name)}`.execute(trx);
    await sql`drop table ${sql.table(range.name)}`.execute(trx);
    dropped.push(range.from);
    coveredFrom ??= { block: range.to, ts: (latest ?? 0n) + 1n };
  }
  if (coveredFrom) await moveCoverage(trx, sql`seller_outgoing_coverage`, coveredFrom);
  return dropped.reverse();
}

/**
 * Deletes the addresses that no column of ADDRESS_REFS (src/db/address-refs.ts) names. Safe
 * against the writers of the dictionary because there are none while it runs: the store adds
 * addresses, and hands out their ids, only inside a run (the sync) or `migrate` (the copy), both
 * under the run lock (src/run/lock.ts) that the run pruning here holds (pruneGenerations calls it
 * after its own transaction has committed, still under the lock), and the run's method has written
 * its work state before publishing and pruning. An id is never reused (an identity), so an address
 * stored again later gets a new id and no stale id can name it.
 *
 * One `not exists` per referring column, in one delete: the planner orders the anti-joins, probes an
 * index that leads with the column (most seller columns) for the addresses still left, hashes the
 * others, and never builds the hash of a table once no address is left to test. Other forms were
 * not faster on both backends at 1M (one `union` of the columns: a sort of every id; one `select
 * distinct` a column into a temporary table; this one with `work_mem` 64 MB): docs/benchmarks.md,
 * h-prune3.
 */
export async function pruneAddresses(trx: Transaction<Schema>): Promise<number> {
  const unreferenced = ADDRESS_REFS.map(({ table, column, array }) =>
    array
      ? sql`not exists (select 1 from ${sql.table(table)} r cross join lateral unnest(${sql.ref(`r.${column}`)}) x(id)
                         where x.id = a.address_id)`
      : sql`not exists (select 1 from ${sql.table(table)} r where ${sql.ref(`r.${column}`)} = a.address_id)`,
  );
  const gone = await sql<{ n: bigint }>`
    with gone as (delete from addresses a where ${sql.join(unreferenced, sql` and `)} returning 1)
    select count(*) as n from gone`.execute(trx);
  return Number(gone.rows[0]?.n ?? 0);
}

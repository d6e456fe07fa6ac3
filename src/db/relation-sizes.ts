import { sql, type Kysely } from 'kysely';

/** The disk use of one table of the current schema, with its indexes and TOAST (docs/data-model.md). */
export interface RelationSize {
  name: string;
  /** Rows, counted exactly (`count(*)`: seconds on a table of 10M rows). */
  rows: bigint;
  /** Heap, TOAST, free-space and visibility maps (`pg_table_size`), in bytes. */
  tableBytes: bigint;
  /** All its indexes (`pg_indexes_size`), in bytes. */
  indexBytes: bigint;
  /** tableBytes + indexBytes (`pg_total_relation_size`). */
  totalBytes: bigint;
  /** totalBytes / rows, rounded; null for an empty table. */
  bytesPerRow: number | null;
}

/**
 * The size of every table of the current schema (`current_schema()`), largest first. A
 * partitioned table counts the rows and bytes of all its partitions (pg_partition_tree), which do
 * not appear on their own; views, functions and sequences take no space worth counting and are
 * left out. Reads only; safe to run on a live database (the counts scan every table once).
 */
export async function relationSizes(db: Kysely<any>): Promise<RelationSize[]> {
  const { rows: tables } = await sql<{ name: string; tableBytes: string; indexBytes: string }>`
    select c.relname as name,
           coalesce(sum(pg_table_size(t.relid)), 0)::text as "tableBytes",
           coalesce(sum(pg_indexes_size(t.relid)), 0)::text as "indexBytes"
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      -- a plain table is counted itself; a partitioned one, its leaf partitions
      -- (pg_partition_tree gives no row for a table that is not partitioned); a partitioned
      -- table with no partition yet (a new database's facts) is listed with 0 bytes
      left join lateral (select c.oid as relid where c.relkind = 'r'
                         union all
                         select relid from pg_partition_tree(c.oid) where isleaf) t on true
     where n.nspname = current_schema()
       and c.relkind in ('r', 'p')
       and not c.relispartition
     group by c.relname`.execute(db);
  const sizes: RelationSize[] = [];
  for (const t of tables) {
    // (counting through the parent reads every partition)
    const { rows } = await sql<{ n: string }>`select count(*)::text as n from ${sql.table(t.name)}`.execute(db);
    const count = BigInt(rows[0]!.n);
    const tableBytes = BigInt(t.tableBytes);
    const indexBytes = BigInt(t.indexBytes);
    const totalBytes = tableBytes + indexBytes;
    sizes.push({
      name: t.name,
      rows: count,
      tableBytes,
      indexBytes,
      totalBytes,
      bytesPerRow: count === 0n ? null : Math.round(Number(totalBytes) / Number(count)),
    });
  }
  return sizes.sort((a, b) =>
    b.totalBytes === a.totalBytes ? a.name.localeCompare(b.name) : b.totalBytes > a.totalBytes ? 1 : -1,
  );
}

/**
 * VACUUM ANALYZE of every table of the current schema, one by one (a VACUUM without a table would
 * take the whole database): how issue 21 defines `bytes_per_payment`, "after the steady runs and
 * a VACUUM". Not in a transaction (VACUUM refuses one).
 */
export async function vacuumSchema(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ t: string }>`
    select tablename as t from pg_tables where schemaname = current_schema() order by 1`.execute(db);
  for (const r of rows) await sql`vacuum analyze ${sql.table(r.t)}`.execute(db);
}

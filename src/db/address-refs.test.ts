import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { backends, freshDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { pruneAddresses } from '../publish/prune.ts';
import { ADDRESS_REFS } from './address-refs.ts';

/**
 * The integer `*_id` (and integer array `*_ids`) columns of the schema's tables that are NOT
 * address ids, each with why. A new such column goes either here or into ADDRESS_REFS; anywhere
 * else, the test below fails.
 */
const NOT_ADDRESS_IDS: readonly { table: string; column: string; why: string }[] = [
  { table: 'addresses', column: 'address_id', why: 'the id itself' },
  { table: 'blocks', column: 'block_id', why: 'a block version' },
  { table: 'transfers', column: 'block_id', why: 'a block version' },
  { table: 'batch_claims', column: 'block_id', why: 'a block version' },
  { table: 'batch_claims', column: 'channel_id', why: 'a batch_channels row' },
  { table: 'batch_channels', column: 'channel_id', why: 'the id itself' },
  { table: 'batch_channel_created', column: 'channel_id', why: 'a batch_channels row' },
  { table: 'acc_market_days', column: 'set_id', why: "the number of a day's payer and seller sets (migration 0038)" },
  { table: 'catalog_items', column: 'snapshot_id', why: 'a catalog snapshot' },
  { table: 'catalog_listing_words', column: 'snapshot_id', why: 'a catalog snapshot' },
  { table: 'catalog_listings', column: 'snapshot_id', why: 'a catalog snapshot' },
  { table: 'catalog_rejects', column: 'snapshot_id', why: 'a catalog snapshot' },
  { table: 'catalog_snapshot_sellers', column: 'snapshot_id', why: 'a catalog snapshot' },
  {
    table: 'catalog_snapshot_sellers',
    column: 'seller_id',
    why: "the seller's number in its snapshot, in address order (migration 0022), not an addresses id",
  },
  { table: 'catalog_snapshots', column: 'snapshot_id', why: 'a catalog snapshot' },
  { table: 'catalog_word_bands', column: 'snapshot_id', why: 'a catalog snapshot' },
  { table: 'generations', column: 'catalog_snapshot_id', why: 'a catalog snapshot' },
];

const key = (r: { table: string; column: string }) => `${r.table}.${r.column}`;

/**
 * The columns of the schema's tables (a partitioned table, not its partitions; no views) that
 * could hold an address id: every integer column whose name ends in `_id`, every integer array
 * whose name ends in `_ids`, and every column of a foreign key to `addresses`.
 */
async function candidateColumns(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ table: string; column: string }>`
    select c.relname as table, a.attname as column
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
     where n.nspname = current_schema()
       and c.relkind in ('r', 'p')
       and not c.relispartition
       and ((a.atttypid in ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) and a.attname like '%\\_id')
            or (a.atttypid in ('int2[]'::regtype, 'int4[]'::regtype, 'int8[]'::regtype) and a.attname like '%\\_ids'))
    union
    select c.relname, a.attname
      from pg_constraint k
      join pg_class c on c.oid = k.conrelid
      join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum = any(k.conkey)
     where n.nspname = current_schema()
       and k.contype = 'f'
       and k.confrelid = (select oid from pg_class
                           where relname = 'addresses' and relnamespace = n.oid)`.execute(db);
  return rows.map(key).sort();
}

/** The candidates listed in neither ADDRESS_REFS nor NOT_ADDRESS_IDS. */
async function unlisted(db: Kysely<any>): Promise<string[]> {
  const listed = new Set([...ADDRESS_REFS, ...NOT_ADDRESS_IDS].map(key));
  return (await candidateColumns(db)).filter((c) => !listed.has(c));
}

describe.each(backends())('the columns referring to addresses on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: every integer *_id column of the schema is listed as an address reference or as not one', async () => {
    database = await freshDatabase(backend);
    expect(await unlisted(database.db)).toEqual([]);
    // and every listed column exists: an entry left behind by a dropped column is an error too
    const candidates = new Set(await candidateColumns(database.db));
    expect([...ADDRESS_REFS, ...NOT_ADDRESS_IDS].map(key).filter((c) => !candidates.has(c))).toEqual([]);
  });

  it('behavior: a new column holding payer ids, or a foreign key to addresses, is caught until listed', async () => {
    database = await freshDatabase(backend);
    await sql`create table scratch_day_payers (day int4 not null, payer_id int4 not null, n int8 not null)`.execute(
      database.db,
    );
    await sql`create table scratch_channels (channel int8 not null, receiver int4 not null references addresses)`.execute(
      database.db,
    );
    await sql`create table scratch_day_sets (day int4 not null, payer_ids int4[] not null)`.execute(database.db);
    expect(await unlisted(database.db)).toEqual([
      'scratch_channels.receiver',
      'scratch_day_payers.payer_id',
      'scratch_day_sets.payer_ids',
    ]);
  });

  it("behavior: the prune keeps an address that only an array column names (a market day's payer_ids)", async () => {
    database = await freshDatabase(backend);
    const db = database.db;
    // three addresses no fact names: the first in a day's payers, the second in its sellers
    const ids = (
      await sql<{ address_id: number }>`
        insert into addresses (address) values (decode(repeat('01', 20), 'hex')), (decode(repeat('02', 20), 'hex')),
                                               (decode(repeat('03', 20), 'hex'))
        returning address_id`.execute(db)
    ).rows.map((r) => r.address_id);
    await sql`
      insert into acc_market_days (day_start, payments, volume_micro, payers, sellers_paid, payer_ids, seller_ids, set_id)
      values (86400, 1, 5, 1, 1, ${[ids[0]!]}::int4[], ${[ids[1]!]}::int4[], 1)`.execute(db);
    expect(await db.transaction().execute((trx) => pruneAddresses(trx))).toBe(1);
    const left = await db.selectFrom('addresses').select('address_id').orderBy('address_id').execute();
    expect(left.map((r) => r.address_id)).toEqual([ids[0], ids[1]]);
  });
});

/**
 * One row in `table` that names `id` in `column` (an array of it for an array column) and no other
 * address: every other referring column of the table is null, -1 (no address has that id) or an
 * empty array; every other column without a default gets `n` (its row number, so that two rows of a
 * table differ in their keys) as a number, text or 32 bytes, an empty array or true, by type.
 */
async function insertNaming(db: Kysely<any>, table: string, column: string, id: number, n: number): Promise<void> {
  const { rows } = await sql<{ column: string; type: string; category: string; nullable: boolean }>`
    select a.attname as column, format_type(a.atttypid, a.atttypmod) as type, t.typcategory as category,
           not a.attnotnull as nullable
      from pg_attribute a join pg_type t on t.oid = a.atttypid
     where a.attrelid = ${table}::regclass and a.attnum > 0 and not a.attisdropped
       and a.attidentity = '' and a.attgenerated = ''
       and (a.atthasdef is false or a.attname = ${column})`.execute(db);
  const refs = new Set(ADDRESS_REFS.filter((r) => r.table === table).map((r) => r.column));
  const values = rows.map((c) => {
    if (c.column === column) return c.category === 'A' ? `array[${id}]::${c.type}` : `${id}`;
    if (refs.has(c.column)) return c.nullable ? 'null' : c.category === 'A' ? `'{}'::${c.type}` : '-1';
    if (c.category === 'N') return c.type === 'smallint' ? '1' : `${n}`;
    if (c.category === 'S') return `'${n}'`;
    if (c.category === 'A') return `'{}'::${c.type}`;
    if (c.type === 'bytea') return `decode(lpad(to_hex(${n}), 64, '0'), 'hex')`;
    if (c.type === 'boolean') return 'true';
    if (c.type === 'date') return `date '2026-01-01' + ${n}`;
    throw new Error(`insertNaming: no value for ${table}.${c.column} (${c.type}): add one`);
  });
  await sql
    .raw(`insert into ${table} (${rows.map((c) => `"${c.column}"`).join(', ')}) values (${values.join(', ')})`)
    .execute(db);
}

describe.each(backends())('the address prune on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('behavior: an address any one referring column names stays, one none names goes', async () => {
    database = await freshDatabase(backend);
    const db = database.db;
    // one address per referring column, and one more that nothing names
    const ids = (
      await sql<{ address_id: number }>`
        insert into addresses (address)
        select decode(lpad(to_hex(g), 40, '0'), 'hex') from generate_series(1, ${ADDRESS_REFS.length + 1}) g
        returning address_id`.execute(db)
    ).rows.map((r) => r.address_id);
    // the partitions of block 0 (the facts' block ids 1.. are block 0's versions) and of the
    // outgoing rows' block numbers 1..
    await sql`select fact_partitions_cover(array[0]::int8[])`.execute(db);
    await sql`select outgoing_partitions_cover(array[1, ${ADDRESS_REFS.length}]::int8[])`.execute(db);
    for (const [i, ref] of ADDRESS_REFS.entries()) await insertNaming(db, ref.table, ref.column, ids[i]!, i + 1);
    // each column names its address (the generator put it there, and only there)
    for (const [i, ref] of ADDRESS_REFS.entries()) {
      const named = ref.array
        ? sql`exists (select 1 from ${sql.table(ref.table)} r where ${ids[i]!}::int4 = any(${sql.ref(`r.${ref.column}`)}))`
        : sql`exists (select 1 from ${sql.table(ref.table)} r where ${sql.ref(`r.${ref.column}`)} = ${ids[i]!})`;
      expect((await sql<{ named: boolean }>`select ${named} as named`.execute(db)).rows[0]!.named).toBe(true);
    }
    expect(await db.transaction().execute((trx) => pruneAddresses(trx))).toBe(1);
    const left = await db.selectFrom('addresses').select('address_id').orderBy('address_id').execute();
    expect(left.map((r) => r.address_id)).toEqual(ids.slice(0, -1));
    // and once a column's row is gone, its address goes with the next prune
    await sql`delete from acc_payers`.execute(db);
    const payerRef = ADDRESS_REFS.findIndex((r) => r.table === 'acc_payers' && r.column === 'payer_id');
    const sellerRef = ADDRESS_REFS.findIndex((r) => r.table === 'acc_payers' && r.column === 'seller_id');
    expect(await db.transaction().execute((trx) => pruneAddresses(trx))).toBe(2);
    const after = await db.selectFrom('addresses').select('address_id').orderBy('address_id').execute();
    expect(after.map((r) => r.address_id)).toEqual(
      ids.slice(0, -1).filter((_, i) => i !== payerRef && i !== sellerRef),
    );
  });
});

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

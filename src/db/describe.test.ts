import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { sqlDir } from '../lib/paths.ts';
import { backends, freshDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { describeSchema } from './describe.ts';

/** The lines of `after` that `before` lacks, and those it lost, in their order (blank lines aside). */
function drift(before: string, after: string) {
  const a = new Set(before.split('\n'));
  const b = new Set(after.split('\n'));
  return {
    added: after.split('\n').filter((l) => l !== '' && !a.has(l)),
    removed: before.split('\n').filter((l) => l !== '' && !b.has(l)),
  };
}

describe.each(backends())('the migrated schema on $backend', ({ backend }) => {
  let database: TestDatabase | undefined;
  afterEach(async () => database?.close());

  it('default: matches sql/schema.txt (run `npm run schema:describe` after changing a migration)', async () => {
    database = await freshDatabase(backend);
    const committed = readFileSync(path.join(sqlDir, 'schema.txt'), 'utf8');
    expect(await describeSchema(database.db)).toBe(committed);
  });

  it('behavior: a partitioned table shows its key and each partition its bound, once', async () => {
    database = await freshDatabase(backend);
    // (column names of no other table: drift compares sets of lines)
    const before = await describeSchema(database.db);
    await sql`
      create table scratch_facts (
        day_ts bigint not null,
        s_hash          bytea  not null,
        s_value           bigint not null,
        primary key (day_ts, s_hash)
      ) partition by range (day_ts)`.execute(database.db);
    await sql`create index scratch_facts_s_value on scratch_facts (s_value)`.execute(database.db);
    await sql`create table scratch_facts_d1 partition of scratch_facts for values from (1767225600) to (1767312000)`.execute(
      database.db,
    );
    await sql`create table scratch_facts_d2 partition of scratch_facts for values from (1767312000) to (1767398400)
                partition by hash (s_hash)`.execute(database.db);
    await sql`create table scratch_facts_d2_h0 partition of scratch_facts_d2 for values with (modulus 2, remainder 0)`.execute(
      database.db,
    );
    await sql`create table scratch_facts_d2_h1 partition of scratch_facts_d2 for values with (modulus 2, remainder 1)`.execute(
      database.db,
    );
    await sql`create table scratch_facts_rest partition of scratch_facts default`.execute(database.db);
    // an index of one partition alone is its own, and shows; the copies of the parent's do not
    await sql`create index scratch_facts_d1_tx on scratch_facts_d1 (s_hash)`.execute(database.db);

    expect(drift(before, await describeSchema(database.db))).toEqual({
      added: [
        'table scratch_facts partition by RANGE (day_ts)',
        '  day_ts bigint not null',
        '  s_hash bytea not null',
        '  s_value bigint not null',
        'constraint scratch_facts.scratch_facts_pkey: PRIMARY KEY (day_ts, s_hash)',
        'index CREATE UNIQUE INDEX scratch_facts_pkey ON ONLY scratch_facts USING btree (day_ts, s_hash)',
        'index CREATE INDEX scratch_facts_s_value ON ONLY scratch_facts USING btree (s_value)',
        'index CREATE INDEX scratch_facts_d1_tx ON scratch_facts_d1 USING btree (s_hash)',
        "partition scratch_facts_d1 of scratch_facts: FOR VALUES FROM ('1767225600') TO ('1767312000')",
        "partition scratch_facts_d2 of scratch_facts: FOR VALUES FROM ('1767312000') TO ('1767398400') partition by HASH (s_hash)",
        'partition scratch_facts_rest of scratch_facts: DEFAULT',
        'partition scratch_facts_d2_h0 of scratch_facts_d2: FOR VALUES WITH (modulus 2, remainder 0)',
        'partition scratch_facts_d2_h1 of scratch_facts_d2: FOR VALUES WITH (modulus 2, remainder 1)',
      ],
      removed: [],
    });
  });

  it('behavior: a changed view, function body or trigger is drift', async () => {
    database = await freshDatabase(backend);
    const before = await describeSchema(database.db);
    // rule 2 of verified_transfers with another bound (migrations 0026 and 0028 say value > 0)
    await sql`
      create or replace view verified_transfers as
      select t.tx_hash, t.log_index, t.block_hash, t.block_number, t.block_timestamp,
             t.from_address as payer, t.to_address as seller_address, t.value, t.added_seq, t.removed_seq,
             t.block_id, t.to_id as seller_id, t.from_id as payer_id
        from transfer_facts t
       where t.from_id <> t.to_id and t.value > 1 and t.authorized`.execute(database.db);
    // (the body as migration 0043 writes it, but numbering in the other order)
    await sql`
create or replace function gen_sellers_set_numbers(g int4) returns void language sql as $$
  update gen_sellers s
     set seller_no = n.no
    from (select seller_address, row_number() over (order by seller_address desc) as no
            from gen_sellers
           where generation = g) n
   where s.generation = g and s.seller_address = n.seller_address
$$`.execute(database.db);
    await sql`drop trigger catalog_listing_words_add on catalog_listings`.execute(database.db);

    expect(drift(before, await describeSchema(database.db))).toEqual({
      added: [
        '      WHERE from_id <> to_id AND value > 1::numeric AND authorized;',
        '      from (select seller_address, row_number() over (order by seller_address desc) as no',
      ],
      removed: [
        '      WHERE from_id <> to_id AND value > 0::numeric AND authorized;',
        '      from (select seller_address, row_number() over (order by seller_address) as no',
        'trigger catalog_listing_words_add AFTER INSERT ON catalog_listings REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_listing_words_add()',
      ],
    });
  });
});

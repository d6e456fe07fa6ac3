-- The compact facts, partitioned by time (docs/data-model.md, "Partitions"): `blocks` and
-- `transfers` become range-partitioned by block_id, in ranges of whole block numbers (one UTC
-- week of post-Denim blocks by default), so that prune (src/publish/prune.ts) drops the facts
-- that left every retained window a partition at a time instead of deleting them row by row.
-- On one chain block numbers grow with block timestamps, so a block-number range is a time range;
-- a transfer lies in the partition of its block version (same block_id), so the two tables are
-- cut on the same ranges and dropped together. Every key and index already starts with, or
-- holds, block_id: no key changes. No default partition: the store creates the partitions a chunk
-- needs (fact_partitions_cover, below) in the chunk's transaction before inserting.
--
-- The existing rows are moved in place, in this one transaction: the tables are renamed, the
-- partitioned ones created under the old names with the same columns, checks, keys and indexes,
-- the rows copied, the old tables dropped, and the three views over them created again with
-- their definitions of migration 0026 (same columns, same rows). The same SQL runs on
-- Postgres 15 and on PGlite (Postgres 17).

-- The width of a new partition, in block numbers: 3,024,000 = one UTC week of 0.2 s (post-Denim)
-- blocks. Read when a partition is created; the tests set a small one on an empty database. A
-- partition's range is [k * width, (k + 1) * width) block numbers, i.e. block ids
-- [k * width * 2^20, (k + 1) * width * 2^20); a width changed while partitions exist must keep
-- the new ranges from overlapping the old ones (creating one that does fails, and so does the
-- chunk that needed it: nothing is stored wrong).
create table fact_partitioning (
  id            boolean primary key default true check (id),
  width_blocks  int8 not null check (width_blocks > 0)
);
insert into fact_partitioning (width_blocks) values (3024000);

drop view generation_payments;
drop view verified_transfers;
drop view transfer_facts;

alter table blocks rename to blocks_unpartitioned;
alter table blocks_unpartitioned rename constraint blocks_pkey to blocks_unpartitioned_pkey;
alter table blocks_unpartitioned drop constraint blocks_check;  -- (its name is the new table's)
drop index blocks_ts;
drop index blocks_added_seq;
drop index blocks_removed_seq;
alter table transfers rename to transfers_unpartitioned;
alter table transfers_unpartitioned rename constraint transfers_pkey to transfers_unpartitioned_pkey;
alter table transfers_unpartitioned drop constraint transfers_value_check, drop constraint transfers_class_check;
drop index transfers_to;

-- As migration 0025 made them, partitioned.
create table blocks (
  block_id         int8  not null,
  block_number     int8  not null,
  block_timestamp  int8  not null,                 -- unix seconds
  added_seq        int8  not null,
  removed_seq      int8,
  block_hash       bytea not null,                 -- 32 bytes
  primary key (block_id),
  check (block_id >> 20 = block_number)
) partition by range (block_id);

create table transfers (
  value           int8  not null check (value >= 0),  -- micro-USDC, < 2^63 (the sync refuses more)
  block_id        int8  not null,                  -- blocks
  log_index       int4  not null,
  from_id         int4  not null,                  -- addresses
  to_id           int4  not null,                  -- addresses
  pair_log_index  int4,                            -- the AuthorizationUsed that decided class; null when unpaired
  class           int2  not null check (class in (0, 1)),  -- 0 unpaired, 1 EIP-3009 (rule 3); 3.0.0 adds 2, 3
  tx_hash         bytea not null,                  -- 32 bytes
  auth_nonce      bytea,                           -- the AuthorizationUsed nonce (32 bytes), class 1 only
  primary key (block_id, log_index)
) partition by range (block_id);

-- Creates the partitions of `blocks` and `transfers` that hold these block numbers, when missing
-- (named blocks_from_<first block number> and transfers_from_<first block number>); returns how
-- many tables it created. Callers run it first in the transaction that then inserts (the store,
-- src/db/load-facts.ts), before touching the fact tables: creating a partition locks its parent
-- exclusively until commit, and a transaction that already holds a lock on the parent while
-- waiting for that could deadlock with another one doing the same. Creators serialise on a
-- transaction-scoped advisory lock and look again once they hold it, so two chunks needing the
-- same new partition create it once. Existing partitions cost a catalog lookup and no lock.
create function fact_partitions_cover(block_numbers int8[]) returns integer
language plpgsql volatile as $$
declare
  width    int8;
  first    int8;
  created  integer := 0;
  part     text;
  parent   text;
begin
  select width_blocks into strict width from fact_partitioning;
  for first in select distinct n - n % width from unnest(block_numbers) as u(n) where n is not null order by 1 loop
    if to_regclass(format('%I.%I', current_schema(), 'blocks_from_' || first)) is null
       or to_regclass(format('%I.%I', current_schema(), 'transfers_from_' || first)) is null then
      perform pg_advisory_xact_lock(402000027, hashtext(current_schema()));
      foreach parent in array array['blocks', 'transfers'] loop
        part := parent || '_from_' || first;
        if to_regclass(format('%I.%I', current_schema(), part)) is null then
          execute format('create table %I.%I partition of %I.%I for values from (%s) to (%s)',
                         current_schema(), part, current_schema(), parent,
                         first * 1048576, (first + width) * 1048576);
          created := created + 1;
        end if;
      end loop;
    end if;
  end loop;
  return created;
end
$$;

-- The existing rows: their partitions, then the rows in key order, then the secondary indexes
-- (built once over the moved rows, on every partition).
select fact_partitions_cover(array(select distinct block_id >> 20 from blocks_unpartitioned
                                   union
                                   select distinct block_id >> 20 from transfers_unpartitioned));
insert into blocks (block_id, block_number, block_timestamp, added_seq, removed_seq, block_hash)
select block_id, block_number, block_timestamp, added_seq, removed_seq, block_hash
  from blocks_unpartitioned
 order by block_id;
insert into transfers (value, block_id, log_index, from_id, to_id, pair_log_index, class, tx_hash, auth_nonce)
select value, block_id, log_index, from_id, to_id, pair_log_index, class, tx_hash, auth_nonce
  from transfers_unpartitioned
 order by block_id, log_index;
drop table blocks_unpartitioned, transfers_unpartitioned;

create index blocks_ts on blocks (block_timestamp);   -- the window's edges (steps 1a, 4, digests)
create index blocks_added_seq on blocks (added_seq);  -- facts changed since a seq
create index blocks_removed_seq on blocks (removed_seq) where removed_seq is not null;
create index transfers_to on transfers (to_id, block_id);  -- a seller's payments in chain order

-- The views of migration 0026, unchanged.
create view transfer_facts as
select '0x' || encode(t.tx_hash, 'hex')    as tx_hash,
       t.log_index,
       '0x' || encode(b.block_hash, 'hex') as block_hash,
       b.block_number,
       b.block_timestamp,
       '0x' || encode(f.address, 'hex')    as from_address,
       '0x' || encode(s.address, 'hex')    as to_address,
       t.value::numeric(78,0)              as value,
       b.added_seq,
       b.removed_seq,
       t.class = 1                         as authorized,
       t.block_id,
       t.from_id,
       t.to_id
  from transfers t
  join blocks b on b.block_id = t.block_id
  join addresses f on f.address_id = t.from_id
  join addresses s on s.address_id = t.to_id;

create view verified_transfers as
select t.tx_hash,
       t.log_index,
       t.block_hash,
       t.block_number,
       t.block_timestamp,
       t.from_address as payer,
       t.to_address   as seller_address,
       t.value,
       t.added_seq,
       t.removed_seq,
       t.block_id,
       t.to_id        as seller_id
  from transfer_facts t
 where t.from_id <> t.to_id   -- rule 2 (an address has one id)
   and t.value > 0            -- rule 2
   and t.authorized;          -- rule 3

create view generation_payments as
select g.generation,
       t.tx_hash,
       t.log_index,
       t.block_number,
       t.block_hash,
       t.block_timestamp,
       t.payer,
       t.seller_address,
       t.value,
       t.block_timestamp > g.window_start_ts as in_window
  from generations g
  join (select distinct snapshot_id, seller_address
          from catalog_listings
         where verifiability = 'base_usdc') s
    on s.snapshot_id = g.catalog_snapshot_id
  join verified_transfers t
    on t.seller_address = s.seller_address
   and t.block_number <= g.as_of_block
   and t.block_timestamp >= g.market_from_ts
   and t.block_timestamp <= g.as_of_ts
   and visible_at(t.added_seq, t.removed_seq, g.run_seq);

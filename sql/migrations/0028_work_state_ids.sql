-- The method's work state keyed by address ids (issue 21; docs/data-model.md, "Work state"):
-- the accumulators of step 1a and the 2.0.0 digests' per-seller state name a seller by its
-- `addresses.address_id` (seller_id) and a payer by its id (payer_id), 4 bytes each, instead of
-- its 42-character text (43 bytes a copy, in the row and again in each index). At 1M payments
-- acc_day_payers and acc_payers alone were 280 and 336 bytes a row.
--
-- The work state is derived (docs/METHOD.md 2.10): these tables are dropped and created empty,
-- and the rows that say what they are exact for (acc_state, part_state) are deleted, so the next
-- run is cold and builds them from the facts. The versioned rows that retained generations read
-- (part_seller_hours, part_hours, seller_daily_rows, through the views gen_seller_periods,
-- gen_seller_daily) keep their text keys and rows: published bodies do not change. A cold run
-- closes their live rows and adds new ones, as after any reset.
--
-- Columns in alignment order (8-byte, 4-byte, then variable length): no padding.

-- The payer's id beside the seller's, at the end of the view (its other columns and rows as
-- migration 0026 defined them).
create or replace view verified_transfers as
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
       t.to_id        as seller_id,
       t.from_id      as payer_id
  from transfer_facts t
 where t.from_id <> t.to_id   -- rule 2 (an address has one id)
   and t.value > 0            -- rule 2
   and t.authorized;          -- rule 3

delete from acc_state;
delete from part_state;

drop table acc_sellers, acc_values, acc_payers, acc_day_payers, acc_seller_days;
drop table part_sellers, part_seller_digests, part_seller_lines;

-- One seller of the catalog with an address id (a catalog seller no transfer names yet has no
-- id and no row: step 2 reads it as unpaid).
create table acc_sellers (
  payments     int8    not null,
  payers       int8    not null,
  first_ts     int8,
  last_ts      int8,
  first_block  int8,
  last_block   int8,
  seller_id    int4    primary key,            -- addresses
  revenue      numeric(78,0) not null,
  top_sum      numeric(78,0) not null,
  median       numeric(78,0)
);

create table acc_values (
  n          int8 not null,
  seller_id  int4 not null,                    -- addresses
  value      numeric(78,0) not null,
  primary key (seller_id, value)
);

create table acc_payers (
  n          int8 not null,
  seller_id  int4 not null,                    -- addresses
  payer_id   int4 not null,                    -- addresses
  total      numeric(78,0) not null,
  primary key (seller_id, payer_id)
);
create index acc_payers_top on acc_payers (seller_id, total);

create table acc_day_payers (
  day_start  int8 not null,                    -- unix seconds, a multiple of 86,400
  n          int8 not null,
  seller_id  int4 not null,                    -- addresses
  payer_id   int4 not null,                    -- addresses
  total      numeric(78,0) not null,
  primary key (seller_id, day_start, payer_id)
);

create table acc_seller_days (
  day_start  int8 not null,
  payments   int8 not null,
  payers     int8 not null,
  seller_id  int4 not null,                    -- addresses
  revenue    numeric(78,0) not null,
  primary key (seller_id, day_start)
);

create table part_sellers (
  seller_id  int4 primary key                  -- addresses
);

create table part_seller_digests (
  seller_id  int4    primary key,              -- addresses
  edge       boolean not null,
  digest     text    not null
);
create index part_seller_digests_edge on part_seller_digests (seller_id) where edge;

create table part_seller_lines (
  seller_id  int4 primary key,                 -- addresses
  lines      text not null
);
-- (uncompressed, as migration 0020 set it: the step cuts and appends, and hashes the whole)
alter table part_seller_lines alter column lines set storage external;

-- Prototype of the compact fact layout (docs/data-model.md, "The compact layout"): builds the
-- proposed fact tables and today's (migrations 0001-0016) in a scratch schema from the same
-- synthetic chain, with the indexes each needs, VACUUMs, and prints the bytes per payment of each
-- relation (pg_total_relation_size: heap + TOAST + indexes; a partitioned table sums its partitions).
--
--   psql postgres://postgres@127.0.0.1:5432/test -v n=1000000 -v schema=compact_proto -f bench/compact-layout.sql
--   psql postgres://postgres@127.0.0.1:5432/test -c 'drop schema compact_proto cascade'
--
-- Psql variables: n payments; schema (created, must not exist); today=0 skips today's layout.
-- The synthetic chain: 50,000 sellers (one takes 40% of the payments, the rest Zipf-like:
-- log-uniform ranks), 100,000 payers (log-uniform), ~100 distinct prices; blocks every 200 ms over
-- a 30-day window, of which n/5 hold a payment (about 5 payments per block, one block per
-- timestamp); every transfer authorized (an AuthorizationUsed in its transaction). Rows are
-- inserted in block order with the indexes in place, as the sync stores them, so the B-trees
-- have the fill they get in use (not the denser fill of an index built after the load).
\set ON_ERROR_STOP 1
\if :{?today}
\else
\set today 1
\endif
\timing on
create schema :schema;
set search_path = :schema;
set work_mem = '256MB';
set maintenance_work_mem = '512MB';

-- The payments: i, block j, seller, payer, value.
create unlogged table src as
select i,
       (random() * (:n / 5 - 1))::int8                                                      as j,
       case when random() < 0.4 then 1 else 1 + floor(exp(random() * ln(49999)))::int end as seller,
       1 + floor(exp(random() * ln(100000)))::int                                            as payer,
       (1000 * (1 + floor(random() * 100)))::int8                                            as value
  from generate_series(1, :n) i;
-- Blocks: n/5 holding payments, spread evenly over the 12,960,000 blocks of 30 days at 200 ms.
create unlogged table src_blocks as
select j,
       30000000 + j * 12960000 / (:n / 5)            as block_number,
       1700000000 + (30000000 + j * 12960000 / (:n / 5)) / 5 as block_timestamp,
       sha256(('b' || j)::bytea)                     as block_hash
  from generate_series(0::int8, :n / 5 - 1) j;
create unlogged table src_logs as
select s.*, b.block_number, b.block_timestamp, b.block_hash,
       (2 * row_number() over (partition by s.j order by s.i) - 2)::int4 as log_index,  -- AuthorizationUsed at log_index + 1
       sha256(('t' || s.i)::bytea) as tx_hash,
       sha256(('n' || s.i)::bytea) as nonce
  from src s join src_blocks b using (j);
create unlogged table src_addresses as
select 's' || k as name, substr(sha256(('s' || k)::bytea), 1, 20) as h from generate_series(1, 50000) k
union all
select 'p' || k, substr(sha256(('p' || k)::bytea), 1, 20) from generate_series(1, 100000) k;

-- ---------------------------------------------------------------------------------------------
-- The compact layout.
-- ---------------------------------------------------------------------------------------------
create table addresses (
  address_id  int4  generated always as identity primary key,
  address     bytea not null unique                      -- 20 bytes
);

-- One row per block version: block_id = block_number * 2^20 + version (ordered like the chain).
create table blocks (
  block_id         int8  not null,
  block_number     int8  not null,
  block_timestamp  int8  not null,
  added_seq        int8  not null,
  removed_seq      int8,
  block_hash       bytea not null,                       -- 32 bytes
  primary key (block_id)
) partition by range (block_id);
create index blocks_ts on blocks (block_timestamp);
create index blocks_added_seq on blocks (added_seq);
create index blocks_removed_seq on blocks (removed_seq) where removed_seq is not null;

-- One row per USDC Transfer log to (or, in 3.0.0, paired for) a seller; the authorization folded in.
create table transfers (
  value           int8  not null,                        -- micro-USDC, < 2^63
  block_id        int8  not null,
  log_index       int4  not null,
  from_id         int4  not null,
  to_id           int4  not null,
  pair_log_index  int4,                                  -- the AuthorizationUsed (or 3.0.0 proxy) log that decided class
  class           int2  not null,                        -- 0 unpaired, 1 eip3009, 2 permit2_exact, 3 permit2_upto
  tx_hash         bytea not null,                        -- 32 bytes
  auth_nonce      bytea,                                 -- 32 bytes, eip3009 only
  primary key (block_id, log_index)
) partition by range (block_id);
create index transfers_to on transfers (to_id, block_id);

-- Weekly partitions (3,024,000 blocks of 200 ms).
do $$
declare w int;
begin
  for w in 0..5 loop
    execute format('create table blocks_w%s partition of blocks for values from (%s) to (%s)', w,
                   (30000000 + w * 3024000)::int8 * 1048576, (30000000 + (w + 1) * 3024000)::int8 * 1048576);
    execute format('create table transfers_w%s partition of transfers for values from (%s) to (%s)', w,
                   (30000000 + w * 3024000)::int8 * 1048576, (30000000 + (w + 1) * 3024000)::int8 * 1048576);
  end loop;
end $$;

-- The dictionary holds the addresses the facts reference (in order of first appearance, as the sync adds them).
insert into addresses (address)
select a.h
  from src_addresses a
  join (select 's' || seller as name, min(i) as first_i from src group by seller
        union all
        select 'p' || payer, min(i) from src group by payer) u using (name)
 order by u.first_i;
create unlogged table src_ids as
select a.name, d.address_id from src_addresses a join addresses d on d.address = a.h;

insert into blocks (block_id, block_number, block_timestamp, added_seq, block_hash)
select block_number * 1048576, block_number, block_timestamp, 1, block_hash
  from src_blocks order by block_number;

insert into transfers (value, block_id, log_index, from_id, to_id, pair_log_index, class, tx_hash, auth_nonce)
select l.value, l.block_number * 1048576, l.log_index, p.address_id, s.address_id, l.log_index + 1, 1, l.tx_hash, l.nonce
  from src_logs l
  join src_ids p on p.name = 'p' || l.payer
  join src_ids s on s.name = 's' || l.seller
 order by l.block_number, l.log_index;

-- The lean variant: no nonce (rule 3 is decided at store; the pairing log index stays).
create table transfers_lean (
  value           int8  not null,
  block_id        int8  not null,
  log_index       int4  not null,
  from_id         int4  not null,
  to_id           int4  not null,
  pair_log_index  int4,
  class           int2  not null,
  tx_hash         bytea not null,
  primary key (block_id, log_index)
) partition by range (block_id);
create index transfers_lean_to on transfers_lean (to_id, block_id);
do $$
declare w int;
begin
  for w in 0..5 loop
    execute format('create table transfers_lean_w%s partition of transfers_lean for values from (%s) to (%s)', w,
                   (30000000 + w * 3024000)::int8 * 1048576, (30000000 + (w + 1) * 3024000)::int8 * 1048576);
  end loop;
end $$;
insert into transfers_lean select value, block_id, log_index, from_id, to_id, pair_log_index, class, tx_hash
  from transfers order by block_id, log_index;

-- ---------------------------------------------------------------------------------------------
-- Today's layout (migrations 0001, 0003, 0004, 0007, 0016), same rows.
-- ---------------------------------------------------------------------------------------------
\if :today
create table chain_blocks (
  block_number bigint not null, block_hash text not null, block_timestamp bigint not null,
  added_seq bigint not null, removed_seq bigint
);
create unique index chain_blocks_live on chain_blocks (block_number, block_hash) where removed_seq is null;
create table usdc_transfers (
  tx_hash text not null, log_index integer not null, block_hash text not null, block_number bigint not null,
  block_timestamp bigint not null, from_address text not null, to_address text not null,
  value numeric(78,0) not null check (value >= 0), added_seq bigint not null, removed_seq bigint,
  authorized boolean not null
);
create unique index usdc_transfers_live on usdc_transfers (tx_hash, log_index, block_hash) where removed_seq is null;
create index usdc_transfers_to on usdc_transfers (to_address, block_number);
create index usdc_transfers_ts on usdc_transfers (block_timestamp);
create index usdc_transfers_added_seq on usdc_transfers (added_seq);
create index usdc_transfers_removed_seq on usdc_transfers (removed_seq) where removed_seq is not null;
create table usdc_authorizations (
  tx_hash text not null, log_index integer not null, block_hash text not null, block_number bigint not null,
  authorizer text not null, nonce text not null, added_seq bigint not null, removed_seq bigint
);
create unique index usdc_authorizations_live on usdc_authorizations (tx_hash, log_index, block_hash) where removed_seq is null;

insert into chain_blocks (block_number, block_hash, block_timestamp, added_seq)
select block_number, '0x' || encode(block_hash, 'hex'), block_timestamp, 1 from src_blocks order by block_number;
insert into usdc_transfers
select '0x' || encode(l.tx_hash, 'hex'), l.log_index, '0x' || encode(l.block_hash, 'hex'), l.block_number, l.block_timestamp,
       '0x' || encode(p.h, 'hex'), '0x' || encode(s.h, 'hex'), l.value, 1, null, true
  from src_logs l
  join src_addresses p on p.name = 'p' || l.payer
  join src_addresses s on s.name = 's' || l.seller
 order by l.block_number, l.log_index;
insert into usdc_authorizations
select '0x' || encode(l.tx_hash, 'hex'), l.log_index + 1, '0x' || encode(l.block_hash, 'hex'), l.block_number,
       '0x' || encode(p.h, 'hex'), '0x' || encode(l.nonce, 'hex'), 1, null
  from src_logs l
  join src_addresses p on p.name = 'p' || l.payer
 order by l.block_number, l.log_index;
\endif

drop table src, src_blocks, src_logs, src_addresses, src_ids;
vacuum analyze;

-- Bytes per payment of each relation (a partitioned table: the sum of its partitions).
select c.relname as relation,
       coalesce((select sum(pg_total_relation_size(i.inhrelid)) from pg_inherits i where i.inhparent = c.oid),
                pg_total_relation_size(c.oid))::int8 as bytes,
       round(coalesce((select sum(pg_total_relation_size(i.inhrelid)) from pg_inherits i where i.inhparent = c.oid),
                      pg_total_relation_size(c.oid)) / :n::numeric, 1) as bytes_per_payment
  from pg_class c
 where c.relnamespace = :'schema'::regnamespace
   and c.relkind in ('r', 'p')
   and not c.relispartition
 order by bytes desc;

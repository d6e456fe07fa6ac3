-- A slimmer blocks table (issues 21/22: bytes per payment at 10M). A block version's heap tuple
-- was 96 bytes: a 24-byte header, block_id, block_number, block_timestamp and added_seq (8 each),
-- the 32-byte hash with its 1-byte header (89, padded to 96; removed_seq is null but on the few
-- versions a reorg removed). Now 80:
--   - block_number goes: it was block_id >> 20 (the dropped check blocks_check said so), and the
--     views compute it; the method's SQL and the store read block_id >> 20.
--   - added_seq and removed_seq become int4 (24 + 8 + 8 + 4 + 33 = 77, padded to 80; a removed
--     version 81, padded to 88). A seq is one value of ingest_seq per run: the sequence now stops
--     at 2^31 - 1 (nextval fails with "reached maximum value of sequence"), so a seq never wraps
--     or truncates; at one run a second that is 68 years of runs.
-- The views keep their columns and types (added_seq and removed_seq stay bigint there).
--
-- ALTER ... TYPE rewrites every partition of blocks (one at a time, in this migration's one
-- transaction), and the rewrite stores the dropped block_number as null, so the bytes go; the
-- indexes are rebuilt with their options. Killed halfway, the transaction rolls back whole and
-- a rerun starts again: nothing lost or doubled. Extra disk until commit: the new blocks.
--
-- The version bound that blocks_check gave (a version below 2^20, else block_id >> 20 would not be
-- the block's number) is now block_version_id's: the store numbers versions through it, and it
-- refuses a version outside [0, 2^20).

alter sequence ingest_seq maxvalue 2147483647;

drop view generation_payments;
drop view verified_transfers;
drop view verified_payments;
drop view transfer_facts;

alter table blocks drop constraint blocks_check;
alter table blocks drop column block_number,
                   alter column added_seq type int4,
                   alter column removed_seq type int4;

create function block_version_id(block_number int8, version int8) returns int8
  language plpgsql immutable parallel safe
  as $$
begin
  if version < 0 or version >= 1048576 then
    raise exception 'block % would have version %: a block has at most 2^20 versions', block_number, version;
  end if;
  return block_number * 1048576 + version;
end $$;

-- visible_at (migration 0023) for blocks' int4 seqs: the same rule, so that a call on blocks'
-- columns inlines to comparisons of the columns themselves (int4 against the int8 seq, operators the
-- B-tree and BRIN integer families hold), not of casts of them. The bigint one stays for the other
-- fact tables and the views.
create function visible_at(added_seq int4, removed_seq int4, seq int8) returns boolean
  language sql immutable parallel safe
  as $$ select added_seq <= seq and (removed_seq is null or removed_seq > seq) $$;

-- The views of migrations 0027-0031, with block_number computed and the seqs as bigint.
create view transfer_facts as
select '0x' || encode(t.tx_hash, 'hex')    as tx_hash,
       t.log_index,
       '0x' || encode(b.block_hash, 'hex') as block_hash,
       b.block_id >> 20                    as block_number,
       b.block_timestamp,
       '0x' || encode(f.address, 'hex')    as from_address,
       '0x' || encode(s.address, 'hex')    as to_address,
       t.value::numeric(78,0)              as value,
       b.added_seq::int8                   as added_seq,
       b.removed_seq::int8                 as removed_seq,
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
       t.to_id        as seller_id,
       t.from_id      as payer_id
  from transfer_facts t
 where t.from_id <> t.to_id   -- rule 2 (an address has one id)
   and t.value > 0            -- rule 2
   and t.authorized;          -- rule 3

create view verified_payments as
select '0x' || encode(p.tx_hash, 'hex')    as tx_hash,
       p.log_index,
       '0x' || encode(b.block_hash, 'hex') as block_hash,
       b.block_id >> 20                    as block_number,
       b.block_timestamp,
       '0x' || encode(f.address, 'hex')    as payer,
       '0x' || encode(s.address, 'hex')    as seller_address,
       p.value::numeric(78,0)              as value,
       b.added_seq::int8                   as added_seq,
       b.removed_seq::int8                 as removed_seq,
       p.block_id,
       p.to_id                             as seller_id,
       p.from_id                           as payer_id,
       p.class
  from (select value, block_id, log_index, from_id, to_id, tx_hash, class::int4 as class from transfers
        union all
        select value, block_id, log_index, from_id, to_id, tx_hash, 4 from batch_claims) p
  join blocks b on b.block_id = p.block_id
  join addresses f on f.address_id = p.from_id
  join addresses s on s.address_id = p.to_id
 where p.class > 0 and p.from_id <> p.to_id and p.value > 0;

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
       t.block_timestamp > g.window_start_ts as in_window,
       null::text as class,
       null::text as internal_reason
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
   and visible_at(t.added_seq, t.removed_seq, g.run_seq)
 where g.method_version in ('1.0.0', '2.0.0')
union all
select g.generation,
       t.tx_hash,
       t.log_index,
       t.block_number,
       t.block_hash,
       t.block_timestamp,
       t.payer,
       t.seller_address,
       t.value,
       t.block_timestamp > g.window_start_ts,
       (array['eip3009', 'permit2_exact', 'permit2_upto', 'batch_settlement'])[t.class],
       case
         when seller_funded(t.seller_id, t.payer_id, t.block_number, t.log_index, t.block_timestamp,
                            g.run_seq, (g.constants ->> 'funding_lookback_seconds')::int8)
           then 'seller_funded'
         when exists (select 1
                        from catalog_operator_pairs o
                       where o.snapshot_id = g.catalog_snapshot_id
                         and o.seller_address = t.seller_address
                         and o.payer_address = t.payer)
           then 'same_operator'
       end
  from generations g
  join (select distinct snapshot_id, seller_address
          from catalog_listings
         where verifiability = 'base_usdc') s
    on s.snapshot_id = g.catalog_snapshot_id
  join verified_payments t
    on t.seller_address = s.seller_address
   and t.block_number <= g.as_of_block
   and t.block_timestamp >= g.market_from_ts
   and t.block_timestamp <= g.as_of_ts
   and visible_at(t.added_seq, t.removed_seq, g.run_seq)
 where g.method_version not in ('1.0.0', '2.0.0');

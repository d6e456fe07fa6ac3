-- The compact fact layout, step C of three: the switch (docs/data-model.md, "Migration: in place,
-- resumable"). Step B, the copy of every old row (src/db/compact-copy.ts), ran before this, in
-- batches; `migrate` runs it, `run` refuses to start while it is pending (exit 75). In one
-- transaction this checks that the new tables hold exactly the old rows, points the views at them
-- (same columns, same rows: the method, the API, bundles and digests are unchanged) and drops
-- the old tables. A `serve` running through it keeps answering: it reads the views and the gen_*
-- tables, and the switch is one commit.
do $$
declare
  missing bigint;
begin
  if exists (select 1 from compact_copy where next_block < top_block) then
    raise exception 'the copy of the chain facts into the compact layout is not complete: run `x402-tally migrate`';
  end if;
  -- Every old transfer, once, with its visibility, its values and its flag: the multiset of
  -- (key, block, seqs, value, authorized) rows on both sides is the same.
  select count(*) into missing
    from (select tx_hash, log_index, block_hash, block_number, block_timestamp, from_address, to_address,
                 value, added_seq, removed_seq, authorized
            from usdc_transfers
          except all
          select '0x' || encode(t.tx_hash, 'hex'), t.log_index, '0x' || encode(b.block_hash, 'hex'),
                 b.block_number, b.block_timestamp, '0x' || encode(f.address, 'hex'),
                 '0x' || encode(s.address, 'hex'), t.value, b.added_seq, b.removed_seq, t.class = 1
            from transfers t
            join blocks b on b.block_id = t.block_id
            join addresses f on f.address_id = t.from_id
            join addresses s on s.address_id = t.to_id) d;
  if missing > 0 or (select count(*) from usdc_transfers) <> (select count(*) from transfers) then
    raise exception 'the compact transfers differ from usdc_transfers (% old rows without their copy): nothing was switched', missing;
  end if;
  -- Every old block row has a block version with its number, hash, time and seqs.
  select count(*) into missing
    from chain_blocks c
   where not exists (select 1 from blocks b
                      where b.block_id between c.block_number * 1048576 and c.block_number * 1048576 + 1048575
                        and b.block_hash = decode(substr(c.block_hash, 3), 'hex')
                        and b.block_timestamp = c.block_timestamp
                        and b.added_seq = c.added_seq
                        and b.removed_seq is not distinct from c.removed_seq);
  if missing > 0 then
    raise exception 'the compact blocks miss % rows of chain_blocks: nothing was switched', missing;
  end if;
end
$$;

-- One row per stored transfer, in the old layout's columns and text forms (lowercase 0x hex,
-- numeric values), with visibility from its block version, and the ids for lookups by seller
-- and block range. What the tests and the method's changed-fact scans read.
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

-- The verified payments (rules 2 and 3), as migration 0016 defined them, over the new tables:
-- the same columns and rows, plus block_id and seller_id (the seller's address_id) at the end,
-- through which the method reaches one seller's payments in chain order by the index
-- transfers_to (a lookup by the seller's text cannot keep that order through the join).
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
       t.to_id        as seller_id
  from transfer_facts t
 where t.from_id <> t.to_id   -- rule 2 (an address has one id)
   and t.value > 0            -- rule 2
   and t.authorized;          -- rule 3

-- Migration 0003's view over verified_transfers: the same columns and rows.
create or replace view generation_payments as
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

drop table usdc_transfers, usdc_authorizations, chain_blocks, compact_copy;

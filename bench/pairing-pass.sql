-- The sync's last pass over the Permit2 pairings (src/sync/streams-store.ts, reclassPaired), before
-- and after issue 22's change, on a schema bench/method.ts kept (KEEP=1), in a transaction rolled
-- back at the end: nothing of the schema changes.
--
--   PGOPTIONS="-c search_path=bench_method_<hex>" psql -X "$BENCH_DATABASE_URL" -f bench/pairing-pass.sql
--
-- It adds a proxy pairing for one payment in 20 (5%, as the 10M target's mix), stored by earlier
-- runs (seq 1) but for 70 of this run (seq 100), and makes a tenth of the transfers unpaired
-- (class 0, as real incoming transfers that are no x402 payment; the benchmark's are all EIP-3009).
-- No pairing names a class-0 transfer, so neither pass changes a row: what is timed is finding that.
\timing on
begin;
set local jit = off;
insert into x402_proxy_pairings (block_number, added_seq, removed_seq, log_index, transfer_log_index, class, tx_hash, block_hash)
select b.block_number, case when row_number() over () <= 70 then 100 else 1 end, null, t.log_index + 1, t.log_index, 2,
       t.tx_hash, b.block_hash
  from transfers t join blocks b on b.block_id = t.block_id
 where t.log_index % 20 = 0;
-- (a schema migrated before migration 0034 had its index)
create index if not exists x402_proxy_pairings_added on x402_proxy_pairings (added_seq) where removed_seq is null;
update transfers set class = 0 where log_index % 10 = 3;
analyze x402_proxy_pairings;
analyze transfers;
select count(*) as pairings, count(*) filter (where added_seq > 1) as new_pairings from x402_proxy_pairings;

-- Before: every live pairing, as joins.
explain (analyze, summary, costs off, timing off)
    with pairing as (
      select distinct on (p.tx_hash, p.block_hash, p.transfer_log_index)
             p.block_number, p.block_hash, p.tx_hash, p.transfer_log_index, p.log_index, p.class
        from x402_proxy_pairings p
       where p.removed_seq is null
       order by p.tx_hash, p.block_hash, p.transfer_log_index, p.log_index
    ), changed as (
      update transfers x set class = pairing.class, pair_log_index = pairing.log_index
        from pairing
        join blocks b
          on b.block_id between pairing.block_number * 1048576 and pairing.block_number * 1048576 + 1048575
         and b.block_hash = pairing.block_hash
         and b.removed_seq is null
       where x.block_id = b.block_id
         and x.log_index = pairing.transfer_log_index
         and x.tx_hash = pairing.tx_hash
         and x.class = 0
      returning 1)
    select count(*)::int4 as n from changed;

-- After: the pairings newer than paired_seq (here 1), each probed by primary key.
explain (analyze, summary, costs off, timing off)
    with pairing as (
      select distinct on (p.tx_hash, p.block_hash, p.transfer_log_index)
             p.block_number, p.block_hash, p.tx_hash, p.transfer_log_index, p.log_index, p.class
        from x402_proxy_pairings p
       where p.removed_seq is null and p.added_seq > 1
       order by p.tx_hash, p.block_hash, p.transfer_log_index, p.log_index
    ), target as materialized (
      select (select b.block_id
                from blocks b
               where b.block_id between pairing.block_number * 1048576 and pairing.block_number * 1048576 + 1048575
                 and b.block_hash = pairing.block_hash
                 and b.removed_seq is null) as block_id,
             pairing.transfer_log_index, pairing.tx_hash, pairing.log_index, pairing.class
        from pairing
    ), changed as (
      update transfers x set class = target.class, pair_log_index = target.log_index
        from target
       where x.block_id = target.block_id
         and x.log_index = target.transfer_log_index
         and x.tx_hash = target.tx_hash
         and x.class = 0
      returning 1)
    select count(*)::int4 as n from changed;
rollback;

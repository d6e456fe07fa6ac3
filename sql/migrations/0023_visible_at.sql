-- Each SQL rule written once (issue 21): the visibility of a chain fact, and one definition of a
-- verified payment under both views that read payments.
--
-- A fact row (usdc_transfers, usdc_authorizations, chain_blocks) is one interval of visibility
-- [added_seq, removed_seq) (migrations 0001, 0004): a run, or a generation whose run_seq is S,
-- sees the rows with added_seq <= S and (removed_seq is null or removed_seq > S). This function is
-- that rule; the views below and every method step (sql/method) call it instead of repeating it.
--
-- It is inlined: a LANGUAGE sql function that is IMMUTABLE, not STRICT and one SELECT of one
-- expression is replaced by its expression when a query is planned, so a call costs nothing and
-- its comparisons keep the columns' statistics and indexes, as if written out. Postgres inlines a
-- call only if every argument the body uses twice (seq) is cheap and holds no subquery: pass a
-- column or a constant, never `(select run_seq from m_gen)` (then the call stays a function call,
-- run once per row). The method steps read the seq from a joined one-row table for this.
create function visible_at(added_seq bigint, removed_seq bigint, seq bigint) returns boolean
  language sql immutable parallel safe
  as $$ select added_seq <= seq and (removed_seq is null or removed_seq > seq) $$;

-- generation_payments (migrations 0002, 0003), now on verified_transfers (migration 0016): rules 2
-- and 3 (not a self-payment, value > 0, authorized) are written only there. Same columns, same
-- rows: rule 1 (the generation's catalog), rule 4 (at or before the as-of block, from the first
-- market day) and the facts the generation's run sees.
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

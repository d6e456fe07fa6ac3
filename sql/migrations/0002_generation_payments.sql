-- Method 1.0.0, rules 1-4 of a verified payment (docs/METHOD.md), as one view that the method,
-- the API's evidence endpoint and `export` all read, so the rule is written once.
--
-- For each generation: every USDC Transfer visible to the generation's run (see usdc_transfers)
-- that pays a seller of the generation's catalog (rule 1), is not a self-payment and has value > 0
-- (rule 2), shares its transaction with an AuthorizationUsed whose authorizer is the payer
-- (rule 3), and lies at or before the as-of block (rule 4). Rows start at market_from_ts (the UTC
-- day holding the window start) because the market's first day needs them; `in_window` marks the
-- 30-day window as_of_ts - window_seconds < block_timestamp <= as_of_ts.
create view generation_payments as
select g.generation,
       t.tx_hash,
       t.log_index,
       t.block_number,
       t.block_hash,
       t.block_timestamp,
       t.from_address as payer,
       t.to_address   as seller_address,
       t.value,
       t.block_timestamp > g.window_start_ts as in_window
  from generations g
  join (select distinct snapshot_id, seller_address
          from catalog_listings
         where verifiability = 'base_usdc') s
    on s.snapshot_id = g.catalog_snapshot_id
  join usdc_transfers t
    on t.to_address = s.seller_address
   and t.block_number <= g.as_of_block
   and t.block_timestamp >= g.market_from_ts
   and t.block_timestamp <= g.as_of_ts
   and t.added_seq <= g.run_seq
   and (t.removed_seq is null or t.removed_seq > g.run_seq)
 where t.from_address <> t.to_address
   and t.value > 0
   and exists (select 1
                 from usdc_authorizations a
                where a.tx_hash = t.tx_hash
                  and a.block_hash = t.block_hash
                  and a.authorizer = t.from_address
                  and a.added_seq <= g.run_seq
                  and (a.removed_seq is null or a.removed_seq > g.run_seq));

-- Stores one staged chunk (sql/store/stage.sql), part 1 of 2: what of it is new, as rows to load
-- (then sql/store/load_facts.sql), and the sellers' advanced coverage. One statement.
-- Parameters: $1 the run's seq, $2 the sellers whose coverage the chunk extends, $3 and $4 the
-- coverage start (block, timestamp) for sellers without one, $5 the chunk's last block.
--
-- A transfer already stored in a live version of its block (same number and hash) is left as is;
-- a new one goes into this run's version of its block (added_seq = $1), which load_facts.sql
-- reuses when an earlier chunk of this run made it, else adds. A staged block without a live
-- version gets one (the reorg walk, src/sync/reorg.ts, reads the stored blocks); a block already
-- live is not stored again.
--
-- Rule 3 of a verified payment (docs/METHOD.md 2.3), decided here once per transfer and stored as
-- transfers.class (1: paired, 0: not), which every method step reads through the view
-- verified_transfers: the transfer's transaction (same tx_hash and block_hash) holds an
-- AuthorizationUsed of the contract whose authorizer is the transfer's `from`. Read against the
-- chunk's own authorizations: fetchPaymentLogs returns, with every transfer, the AuthorizationUsed
-- logs of its transaction, so they are always in the same chunk. The pairing log is the first such
-- AuthorizationUsed (lowest log index); its nonce is kept. AuthorizationUsed logs that pair no
-- transfer decide nothing and are not kept.
-- A transfer that no AuthorizationUsed pairs but a Permit2 proxy log does is class 2 (exact) or 3
-- (upto), pair_log_index the proxy log's index (method 3.0.0; methods 1.x and 2.x read class 1).
with b as (
  insert into x402_load_blocks (n, h, ts, added, removed)
  select s.n, s.h, s.ts, $1::int8, null
    from x402_stage_blocks s
   -- One probe per staged block (OFFSET 0 keeps the subquery from becoming a join; see
   -- load_facts.sql): as a hash anti join it read every block the other seller batches had
   -- stored in the chunk's block range, for every chunk.
   where not exists (select 1 from blocks v
                      where v.block_id between s.n * 1048576 and s.n * 1048576 + 1048575
                        and v.block_hash = decode(substr(s.h, 3), 'hex')
                        and v.removed_seq is null
                     offset 0)
), paired as materialized (
  -- Rule 3: the first AuthorizationUsed (lowest log index) of each transaction and authorizer,
  -- joined by equality so that Postgres can hash it: a lateral subquery per transfer scanned every
  -- staged authorization of the chunk for each transfer (the staging tables have no index),
  -- ~0.9 s of server CPU per chunk of ~700 transfers. Materialized apart from the probe below:
  -- planned together, the probe (a subplan per transfer, costed high on the unanalyzed staging
  -- table) made Postgres pick a nested loop for this join, comparing every staged transfer with
  -- every staged authorization (~530,000 comparisons, ~75 ms a chunk of ~1,000 transfers).
  select u.tx, u.li, u.h, u.n, u.ts, u.f, u.t, u.v, auth.li as pair_li, auth.no as nonce,
         proxy.li as proxy_li, proxy.class as proxy_class
    from x402_stage_transfers u
    left join (select distinct on (a.tx, a.h, a.au) a.tx, a.h, a.au, a.li, a.no
                 from x402_stage_authorizations a
                order by a.tx, a.h, a.au, a.li) auth
      on auth.tx = u.tx and auth.h = u.h and auth.au = u.f   -- rule 3
    -- Method 3.0.0's classes 2 and 3 (docs/METHOD.md): a Permit2 proxy log of the same transaction
    -- and block pairs this transfer (x402_proxy_pairings, stored by the proxies' stream from the
    -- transaction's receipt); the first such proxy log when several pair it. EIP-3009 wins (SPEC
    -- "Details"): the pairing counts only where no AuthorizationUsed does. One index probe per
    -- staged transfer, by its block number (the primary key's prefix: a block holds few proxy
    -- settlements); the table holds one row per proxy settlement. (By transaction hash until
    -- migration 0041, through an index of ~50 bytes a pairing.)
    left join lateral (select p.log_index as li, p.class
                         from x402_proxy_pairings p
                        where p.block_number = u.n
                          and p.transfer_log_index = u.li
                          and p.tx_hash = decode(substr(u.tx, 3), 'hex')
                          and p.block_hash = decode(substr(u.h, 3), 'hex')
                          and p.removed_seq is null
                        order by p.log_index
                        limit 1) proxy on true
), t as (
  insert into x402_load_transfers (tx, li, h, n, ts, f, t, v, added, removed, class, pair_li, nonce)
  select u.tx, u.li, u.h, u.n, u.ts, u.f, u.t, u.v, $1::int8, null,
         case when u.pair_li is not null then 1 else coalesce(u.proxy_class, 0) end,
         coalesce(u.pair_li, u.proxy_li), u.nonce
    from paired u
   where not exists (select 1
                       from blocks v
                       join transfers x on x.block_id = v.block_id and x.log_index = u.li
                      where v.block_id between u.n * 1048576 and u.n * 1048576 + 1048575
                        and v.block_hash = decode(substr(u.h, 3), 'hex')
                        and v.removed_seq is null
                     offset 0)
), c as (
  insert into seller_coverage (seller_address, from_block, from_ts, to_block)
  select s, $3::int8, $4::int8, $5::int8 from unnest($2::text[]) as u(s)
  on conflict (seller_address) do update
    set to_block = excluded.to_block
  -- (a row that does not move is not written again: no new row version; migration 0041)
  where seller_coverage.to_block < excluded.to_block
)
select 1

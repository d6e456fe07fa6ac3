-- Stores one staged chunk (sql/store/stage.sql) in ONE statement: its blocks, transfers and
-- authorizations (an already stored row is left as is) and the sellers' advanced coverage.
-- Parameters: $1 the run's seq, $2 the sellers whose coverage the chunk extends, $3 and $4 the
-- coverage start (block, timestamp) for sellers without one, $5 the chunk's last block.
-- Rows are inserted in key order so that concurrent chunks take index locks in one order.
--
-- Rule 3 of a verified payment (docs/METHOD.md 2.3), decided here once per transfer and stored as
-- usdc_transfers.authorized (migration 0003), which every method step reads through the view
-- verified_transfers: the transfer's transaction (same tx_hash and block_hash) holds an
-- AuthorizationUsed of the contract whose authorizer is the transfer's `from`. Read against the
-- chunk's own authorizations: fetchPaymentLogs returns, with every transfer, the AuthorizationUsed
-- logs of its transaction, so they are always in the same chunk.
-- A join, not `in (select ..)`: Postgres hashes an `in` only while it expects the set to fit in
-- work_mem, and beyond that scans the set once per transfer. Not on a distinct set either (that
-- costs an aggregate per chunk): when one payer authorized twice in one transaction, the transfer
-- comes out twice and `on conflict do nothing` keeps the first, with the same flag.
with b as (
  insert into chain_blocks (block_number, block_hash, block_timestamp, added_seq)
  select n, h, ts, $1::int8 from x402_stage_blocks order by n, h
  on conflict do nothing
), t as (
  insert into usdc_transfers (tx_hash, log_index, block_hash, block_number, block_timestamp,
                              from_address, to_address, value, added_seq, authorized)
  select u.tx, u.li, u.h, u.n, u.ts, u.f, u.t, u.v, $1::int8, auth.tx is not null
    from x402_stage_transfers u
    left join x402_stage_authorizations auth
      on auth.tx = u.tx and auth.h = u.h and auth.au = u.f   -- rule 3
   order by u.tx, u.li, u.h
  on conflict do nothing
  returning 1
), a as (
  insert into usdc_authorizations (tx_hash, log_index, block_hash, block_number, authorizer, nonce, added_seq)
  select tx, li, h, n, au, no, $1::int8 from x402_stage_authorizations order by tx, li, h
  on conflict do nothing
  returning 1
), c as (
  insert into seller_coverage (seller_address, from_block, from_ts, to_block)
  select s, $3::int8, $4::int8, $5::int8 from unnest($2::text[]) as u(s)
  on conflict (seller_address) do update
    set to_block = greatest(seller_coverage.to_block, excluded.to_block)
)
select (select count(*) from t)::int4 as transfers, (select count(*) from a)::int4 as authorizations

-- Rule 3 of a verified payment (docs/METHOD.md), decided once per transfer when it is stored
-- instead of at every generation.
--
-- `authorized` is true when the transfer's transaction (same tx_hash, same block_hash) holds an
-- AuthorizationUsed of the contract whose authorizer is the transfer's `from`. The indexer stores
-- a transfer together with the AuthorizationUsed logs of its own transaction (fetchPaymentLogs
-- reads both over the same blocks, and storeChunk writes both in one statement), and a reorg
-- marks both removed by block, so the pair is always visible together: the flag says exactly what
-- the join by transaction said in migration 0002. Computing it per chunk costs a join over a
-- chunk's few thousand rows; the join at every generation cost a hash join of every transfer in
-- the window against every authorization (about 1.5 s of the method's 1M-payment benchmark).
alter table usdc_transfers add column authorized boolean;

update usdc_transfers t
   set authorized = exists (select 1
                              from usdc_authorizations a
                             where a.tx_hash = t.tx_hash
                               and a.block_hash = t.block_hash
                               and a.authorizer = t.from_address);

alter table usdc_transfers alter column authorized set not null;

-- Only the join above read authorizations by (tx_hash, authorizer); the primary key, which starts
-- with tx_hash, serves any lookup by transaction. One index less to maintain per stored log.
drop index usdc_authorizations_tx;

-- The view of migration 0002, with rule 3 read from the flag (same columns, same rows).
create or replace view generation_payments as
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
 where t.from_address <> t.to_address   -- rule 2
   and t.value > 0                      -- rule 2
   and t.authorized;                    -- rule 3

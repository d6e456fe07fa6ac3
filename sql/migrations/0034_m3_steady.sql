-- Method 3.0.0's steady run and the sync's last pass follow what changed (issue 22; figures in
-- docs/benchmarks.md, "Method 3.0.0's steady run"). Nothing here changes a number: the view
-- returns the same rows, the rest is derived or bookkeeping.

-- verified_payments (migration 0031) with rule 3's `class > 0` applied outside the union, not
-- inside its first branch. Postgres flattens a UNION ALL into one appended relation only when no
-- branch has a WHERE clause of its own; with it, the transfers' branch stayed a subquery that no
-- join or ORDER BY could reach by index: every steady run hashed all transfers to find the changed
-- blocks' payments (m_delta), and sorted a leaving seller's whole window to find its first and last
-- payment (0.2 s and 0.6 s at 200k payments). A claim's class is 4, so the filter keeps every claim
-- as before.
create or replace view verified_payments as
select '0x' || encode(p.tx_hash, 'hex')    as tx_hash,     -- a claim: the Claimed log's transaction
       p.log_index,                                           -- and index
       '0x' || encode(b.block_hash, 'hex') as block_hash,
       b.block_number,
       b.block_timestamp,
       '0x' || encode(f.address, 'hex')    as payer,         -- a claim: the channel's payer (never Claimed.sender)
       '0x' || encode(s.address, 'hex')    as seller_address, -- a claim: the channel's receiver
       p.value::numeric(78,0)              as value,         -- a claim: claimAmount (> 0, a check of batch_claims)
       b.added_seq,
       b.removed_seq,
       p.block_id,
       p.to_id                             as seller_id,
       p.from_id                           as payer_id,
       p.class
  from (select value, block_id, log_index, from_id, to_id, tx_hash, class::int4 as class
          from transfers
        union all
        select value, block_id, log_index, from_id, to_id, tx_hash, 4
          from batch_claims) p
  join blocks b on b.block_id = p.block_id
  join addresses f on f.address_id = p.from_id
  join addresses s on s.address_id = p.to_id
 where p.class > 0            -- rule 3: paired by AuthorizationUsed or a proxy's Settled log, or a claim
   and p.from_id <> p.to_id   -- rule 2
   and p.value > 0;           -- rule 2

-- The same_operator pairs of a catalog snapshot, kept with its sellers (migration 0022): per seller
-- S, the numbers (catalog_snapshot_sellers.seller_id of the same snapshot) of the sellers P such
-- that (S, P) is a pair of catalog_operator_pairs, in increasing order; empty when none. Derived
-- data: null until the first 3.0.0 generation over the snapshot computes it (step
-- sql/method/3.0.0/01_payments.sql), read by the later ones (a snapshot never changes) instead of
-- comparing the hosts of every listing with every other again each run (url_host over 10,000
-- listings twice: 0.3 s of a 200k steady run). Dropped with the sellers (forgetDerivedState).
alter table catalog_snapshot_sellers add column same_operator_payers int4[];

-- The sync's last pass (src/sync/index.ts, reclassNewPairings) reads only the pairings added since
-- the last run that completed it, not every pairing of the window each run. paired_seq, on the
-- 'x402_proxies' row: every live pairing with added_seq <= paired_seq has classed the transfers
-- it names (null: none yet, or another stream). A run killed before its pass leaves it as it was,
-- so the next run's pass reads the killed run's pairings too. The index finds those pairings.
alter table stream_coverage add column paired_seq int8;
create index x402_proxy_pairings_added on x402_proxy_pairings (added_seq) where removed_seq is null;

-- Method 3.0.0 (SPEC section 2, "Method 3.0.0"; issue 22; docs/METHOD.md section 2.11): the payments
-- of every class, the internal-payment test, the work state of its per-class and per-reason
-- numbers, and the evidence view's class and internal_reason for 3.0.0 generations. Methods 1.0.0
-- and 2.0.0 read none of it: their payments stay `verified_transfers` (class 1), their evidence
-- rows are unchanged.
--
-- Columns in alignment order (8-byte, 4-byte, then variable length): no padding.

-- Rules 2 and 3 of 3.0.0 over the stored facts: a paired transfer of any class (1 eip3009,
-- 2 permit2_exact, 3 permit2_upto: `transfers.class`, migration 0029) and a batch-settlement
-- claim (class 4: `batch_claims`, stored only for USDC channels with claimAmount > 0; its payer and
-- receiver are its channel's config), not from the seller to itself and of a positive value.
-- The columns of verified_transfers (migration 0028) and the class. Rules 1 and 4 (a seller of
-- the generation's catalog, at or before the as-of block) are the method's, as for
-- verified_transfers.
create view verified_payments as
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
  -- (the union of the two fact tables alone, joined to blocks and addresses after it: Postgres
  -- plans such a union as one appended relation, so a join on block_id or a seller's to_id reaches
  -- each table by its index. A union of two joins is planned as two subqueries, read whole: on
  -- the 200k benchmark a steady run took 15 s instead of 1.5 s.)
  from (select value, block_id, log_index, from_id, to_id, tx_hash, class::int4 as class
          from transfers
         where class > 0                -- rule 3: paired by AuthorizationUsed or a proxy's Settled log
        union all
        select value, block_id, log_index, from_id, to_id, tx_hash, 4
          from batch_claims) p
  join blocks b on b.block_id = p.block_id
  join addresses f on f.address_id = p.from_id
  join addresses s on s.address_id = p.to_id
 where p.from_id <> p.to_id   -- rule 2
   and p.value > 0;           -- rule 2

-- The `seller_funded` test (SPEC "External revenue"): the indexed chain holds a USDC Transfer from
-- the seller to the payer, of a positive value, before the payment (block, then log index) and
-- less than `lookback` seconds before it, visible at `seq`. One probe of the index
-- seller_outgoing_pair (from_id, to_id, block_number, log_index).
create function seller_funded(seller int4, payer int4, block int8, log int4, ts int8, seq int8, lookback int8)
returns boolean
language sql stable parallel safe
as $$
  select exists (select 1
                   from seller_outgoing o
                  where o.from_id = seller
                    and o.to_id = payer
                    and (o.block_number, o.log_index) < (block, log)
                    and o.block_timestamp > ts - lookback
                    and o.value > 0
                    and visible_at(o.added_seq, o.removed_seq, seq))
$$;

-- The host of a resource URL for the `same_operator` test: the URL's hostname, lowercase, without
-- port or user info (SPEC "Details"). The catalog keeps URLs as the Bazaar lists them (absolute
-- http(s) URLs); a text that is no such URL has no host (null), so it matches nothing.
create function url_host(url text) returns text
language sql immutable parallel safe
as $$
  select nullif(lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#]*@)?(\[[^]/?#]*\]|[^/?#:]*)')), '')
$$;

-- The `same_operator` pairs of a catalog snapshot: (S, P) where P is the payTo of a base_usdc
-- listing whose resource host equals the host of a base_usdc listing of S, P <> S. By address text
-- (the catalog's own keys); the method resolves them to ids per run.
create view catalog_operator_pairs as
select distinct s.snapshot_id, s.seller_address, p.seller_address as payer_address
  from catalog_listings s
  join catalog_listings p
    on p.snapshot_id = s.snapshot_id
   and url_host(p.resource_url) = url_host(s.resource_url)
   and p.seller_address <> s.seller_address
 where s.verifiability = 'base_usdc'
   and p.verifiability = 'base_usdc';

-- The window's numbers per class and internal reason (method 3.0.0; step sql/method/3.0.0/01c_reasons.sql),
-- exact for the window of acc_state like the other accumulators. class 1-4 as verified_payments;
-- reason 0 external, 1 seller_funded, 2 same_operator (a payment with both is 1).
create table acc_seller_classes (
  n          int8          not null,
  seller_id  int4          not null,           -- addresses
  class      int2          not null,
  reason     int2          not null,
  total      numeric(78,0) not null,
  primary key (seller_id, class, reason)
);
-- Payers per (seller, reason): the distinct payers of each reason.
create table acc_reason_payers (
  n          int8 not null,
  seller_id  int4 not null,                    -- addresses
  payer_id   int4 not null,                    -- addresses
  reason     int2 not null,
  primary key (seller_id, reason, payer_id)
);
-- Their count per (seller, reason), moved by the payers gained and lost as acc_sellers.payers is.
create table acc_reason_sellers (
  payers     int8 not null,
  seller_id  int4 not null,                    -- addresses
  reason     int2 not null,
  primary key (seller_id, reason)
);
-- The same_operator pairs (by address ids) the reasons in the accumulators were decided with: a
-- seller whose pairs differ in the next run has its reasons counted again from the window.
create table acc_operator_pairs (
  seller_id  int4 not null,                    -- addresses
  payer_id   int4 not null,                    -- addresses
  primary key (seller_id, payer_id)
);

-- The market's external volume per cached day (null under 1.x and 2.x).
alter table acc_market_days add column external_volume numeric(78,0);

-- The set of payments the derived state holds: `eip3009` (methods 1.0.0 and 2.0.0: class 1
-- transfers) or `all_classes` (3.0.0). A run of the other set finds it not exact and starts cold.
alter table acc_state add column payment_set text not null default 'eip3009';
alter table acc_market_state add column payment_set text not null default 'eip3009';
alter table part_state add column payment_set text not null default 'eip3009';

-- The evidence rows (SPEC "Digests"): for 1.x and 2.x generations exactly the rows and columns of
-- migration 0029 (class and internal_reason null); for 3.0.0 generations the payments of every
-- class, with the class's name and the internal reason as the generation decided it (seller
-- funding visible at its run_seq within funding_lookback_seconds; same_operator by its catalog
-- snapshot).
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

-- Method 3.0.0, step 1 (after the common inputs): the payments of every class (SPEC section 2,
-- "Method 3.0.0"; docs/METHOD.md section 2.11) and the internal reason of each, in place of 2.0.0's
-- EIP-3009 transfers. The common steps read them through the session views m_payment_facts and
-- m_fact_rows, so their statements and their 2.0.0 plans are one. This file replaces the common
-- sql/method/01_payments.sql (the same name): each view is created once a run.

-- (an evidence line starts with its class: `class:tx_hash:log_index:from:to:value`)
update m_gen
   set payment_set = 'all_classes',
       evidence_prefixes = array['eip3009:', 'permit2_exact:', 'permit2_upto:', 'batch_settlement:'];

-- x402 infrastructure is never a seller (SPEC "Method 3.0.0"; the addresses: migration 0035):
-- a catalog seller whose address is Permit2, a proxy, the batch contract or a deposit collector
-- is none under 3.x, so it has no row, rank or payment, and counts in no market total. (The
-- snapshot's sellers, catalog_snapshot_sellers, are shared with 2.x, which keeps them; the seller
-- set key of step 1 still names them, and the addresses are fixed, so equal keys mean equal sets.)
delete from m_catalog_sellers where seller_address in (select address collate "C" from x402_infrastructure);

-- The same_operator pairs of the generation's catalog (catalog_snapshot_sellers.same_operator_payers)
-- are filled by the common step sql/method/01_operator_pairs.sql, which the operator groups of
-- every version read too.

-- The pairs by address ids: both are sellers of the catalog, so their ids are
-- m_catalog_sellers'. A seller without an id has no payment (and pays none), so its pairs are
-- dropped.
create temp table m_operator_pairs on commit drop as
select s.seller_id, p.seller_id as payer_id
  from catalog_snapshot_sellers c
 cross join unnest(c.same_operator_payers) as o(payer_ord)
  join m_catalog_sellers s on s.seller_ord = c.seller_id
  join m_catalog_sellers p on p.seller_ord = o.payer_ord
 where c.snapshot_id = (select catalog_snapshot_id from m_gen)
   and cardinality(c.same_operator_payers) > 0
   and s.seller_id is not null
   and p.seller_id is not null;
alter table m_operator_pairs add primary key (seller_id, payer_id);
analyze m_operator_pairs;

-- The derived data that depends on the pairs is reused only under the same pairs: the market's
-- days (step 4) by this key, the per-seller reasons (step 1c) seller by seller.
update m_sellers_key
   set sellers_key = encode(sha256(convert_to(sellers_key || ';' || coalesce(
         (select string_agg(seller_id || ':' || payer_id, ',' order by seller_id, payer_id) from m_operator_pairs), ''),
         'UTF8')), 'hex');

-- Every verified payment (rules 2 and 3 of 3.0.0: verified_payments, migration 0031) with its
-- class, its internal reason and the class at the head of its evidence line
-- (`class:tx_hash:log_index:from:to:value`). The reason is decided with the seller's transfers
-- visible at a seq at which the payment itself is visible: this run's, or, for a payment removed
-- since, the seq just before its removal (the accumulators subtract it with the reason they
-- added it with: docs/METHOD.md 2.11.7 says why a payment's reason never changes while it is
-- visible, the catalog's pairs aside).
create or replace temp view m_payment_facts as
select v.tx_hash, v.log_index, v.block_hash, v.block_number, v.block_timestamp, v.payer, v.seller_address,
       v.value, v.added_seq, v.removed_seq, v.block_id, v.seller_id, v.payer_id,
       v.class,
       case
         -- (seller_funded, a SQL function Postgres cannot inline (its body is a subquery), runs
         -- its plan over the partitions of seller_outgoing once per payment: most of m_delta's
         -- 1.3 s at 50M for 17,361 payments. It is called only where the pair has a transfer at
         -- or before the payment's block, which it needs to answer true; that test is a subplan
         -- of the reading statement, started once and probed by index. The answer is seller_funded's.)
         when case when exists (select 1 from seller_outgoing o
                                 where o.from_id = v.seller_id and o.to_id = v.payer_id
                                   and o.block_number <= v.block_number)
                   then seller_funded(v.seller_id, v.payer_id, v.block_number, v.log_index, v.block_timestamp,
                                      least((select run_seq from m_gen), coalesce(v.removed_seq - 1, (select run_seq from m_gen))),
                                      (select funding_lookback_seconds from m_gen))
                   else false
              end
           then 1
         when exists (select 1 from m_operator_pairs o where o.seller_id = v.seller_id and o.payer_id = v.payer_id)
           then 2
         else 0
       end as reason,
       (select evidence_prefixes from m_gen)[v.class] as evidence_prefix
  -- (m_gen's values as scalar subqueries, not a join: the view stays verified_payments alone,
  -- which the steps join as they join verified_transfers; with m_gen joined in, the planner read
  -- every payment for an empty m_delta_blocks: 6.7 s of a cold run at 20k payments)
  from verified_payments v;

-- The same payments for a cold run's bulk reads (sql/method/01_payments.sql says which): those
-- visible at this run's seq (so each one's reason is decided at it, as above), at or before its
-- as-of block, by ids only. verified_payments' rules 2 and 3 on the fact tables themselves (the
-- view joins `addresses` twice per payment for texts no aggregate reads), and the reason decided
-- by sets (issue 21; docs/benchmarks.md, "Method 3.0.0's cold run, set-based" and "The cold
-- read's internal reason by sets"): a payment can have a reason only if its (seller, payer) pair
-- is in m_cold_pairs (the pairs of a visible funding or of the catalog's operator pairs: few,
-- sellers funding their own payers), found by one hash join; every other payment is external
-- without any probe. For a funded pair, seller_funded's own test (its latest visible funding
-- before the payment, within the lookback) is asked of m_cold_fundings, the fundings visible at
-- this run's seq, by one index probe: the function's call, which starts its plan over the
-- partitions of seller_outgoing once per payment, cost about 20 us each (1.0 of the 1.3 s the
-- reason took at 1M payments). Both sets are filled by step 1a, in a cold run only, from the
-- views below.
create or replace temp view m_cold_funding_rows as
select o.from_id as seller_id, o.to_id as payer_id, o.block_number, o.log_index, o.block_timestamp
  from seller_outgoing o
 cross join m_gen g
 where o.value > 0
   and o.block_number <= g.as_of_block   -- (a payment is at or before it)
   and visible_at(o.added_seq, o.removed_seq, g.run_seq)
   and o.from_id in (select seller_id from m_catalog_sellers);

create or replace temp view m_cold_operator_pairs as
select seller_id, payer_id from m_operator_pairs;

create or replace temp view m_cold_facts as
select p.to_id                  as seller_id,
       p.from_id                as payer_id,
       p.value                  as value,   -- (bigint, as in sql/method/01_payments.sql)
       b.block_timestamp,
       b.block_id >> 20         as block_number,
       p.class,
       case
         when r.seller_id is null then 0
         when r.funded
          and coalesce((select f.block_timestamp > b.block_timestamp - g.funding_lookback_seconds
                          from m_cold_fundings f
                         where f.seller_id = p.to_id
                           and f.payer_id = p.from_id
                           and (f.block_number, f.log_index) < (b.block_id >> 20, p.log_index)
                         order by f.block_number desc, f.log_index desc
                         limit 1), false)
           then 1
         when r.operator then 2
         else 0
       end                      as reason,
       p.log_index,
       p.tx_hash                -- (for the digests' evidence lines, as in sql/method/01_payments.sql)
  from (select value, block_id, log_index, from_id, to_id, tx_hash, class::int4 as class
          from transfers
        union all
        select value, block_id, log_index, from_id, to_id, tx_hash, 4
          from batch_claims) p
  join blocks b on b.block_id = p.block_id
 cross join m_gen g   -- (run_seq as a column: visible_at is inlined)
  left join m_cold_pairs r on r.seller_id = p.to_id and r.payer_id = p.from_id
 where p.class > 0              -- rule 3: paired by AuthorizationUsed or a proxy's Settled log, or a claim
   and p.from_id <> p.to_id     -- rule 2
   and p.value > 0              -- rule 2
   and (b.block_id >> 20) <= g.as_of_block
   and visible_at(b.added_seq, b.removed_seq, g.run_seq);

create or replace temp view m_fact_rows as
select block_id, to_id from transfers
union all
select block_id, to_id from batch_claims;

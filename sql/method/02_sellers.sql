-- Method step 2: per-seller metrics over the verified payments in the window, evidence
-- state, tier, farm flags and reasons, and the ranking. The seller's evidence digest comes from
-- m_seller_digests, built by the version's own digest step (sql/method/<version>/01b_digests.sql).

insert into gen_sellers (
  generation, seller_address, listing_count, payments_30d, payers_30d,
  verified_revenue_30d_micro, median_payment_30d_micro, evidence_state, tier, farm_flag,
  farm_reasons, rank, categories, evidence_sha256, first_payment_ts, last_payment_ts,
  first_block, last_block)
-- (m_payments is read twice below rather than through a shared CTE: a CTE used twice would be
-- copied once more in full)
with per_seller as (
  select seller_id,
         count(*)::int                                          as payments,
         sum(value)                                             as revenue,
         -- lower median: the smallest value whose cumulative share reaches one half
         percentile_disc(0.5) within group (order by value)     as median,
         min(block_timestamp)                                   as first_ts,
         max(block_timestamp)                                   as last_ts,
         min(block_number)                                      as first_block,
         max(block_number)                                      as last_block
    from m_payments
   where in_window
   group by seller_id
),
-- one row per (seller, payer): gives both the distinct payer count and the top payer's sum
per_payer as (
  select seller_id, count(*)::int as payers, max(payer_sum) as top_sum
    from (select seller_id, payer, sum(value) as payer_sum
            from m_payments
           where in_window
           group by seller_id, payer) by_payer
   group by seller_id
),
metrics as (
  select c.seller_id,
         c.seller_address,
         c.listing_count,
         c.categories,
         coalesce(p.payments, 0)                                as payments,
         coalesce(t.payers, 0)                                  as payers,
         coalesce(p.revenue, 0)                                 as revenue,
         p.median,
         p.first_ts, p.last_ts, p.first_block, p.last_block,
         coalesce(d.digest, encode(sha256(''::bytea), 'hex'))   as digest,
         coalesce(t.top_sum, 0)                                 as top_sum
    from m_catalog_sellers c
    left join per_seller p using (seller_id)
    left join per_payer t using (seller_id)
    left join m_seller_digests d using (seller_id)
),
judged as (
  select m.*,
         case
           when m.payments = 0 then 'not_observed'
           when m.payments >= g.evidence_min_payments and m.payers >= g.evidence_min_payers then 'verified'
           else 'insufficient'
         end as evidence_state,
         -- reasons in the published order; the share compare is exact (numeric, no float)
         array_remove(array[
           case when m.listing_count > g.farm_listing_threshold
                then 'listing_count>' || g.farm_listing_threshold end,
           case when m.payments >= g.farm_top_payer_min_payments
                 and m.top_sum > m.revenue * g.farm_top_payer_share
                then 'top_payer_share>' || g.farm_top_payer_share end
         ], null) as reasons
    from metrics m cross join m_gen g
)
select (select generation from m_gen),
       seller_address,
       listing_count,
       payments,
       payers,
       revenue,
       median,
       evidence_state,
       case when evidence_state = 'verified' then 'verified' else 'listed_only' end,
       case when cardinality(reasons) > 0 then 1 else 0 end,
       case when cardinality(reasons) > 0 then array_to_json(reasons)::text end,
       case when evidence_state = 'verified'
            then row_number() over (order by (evidence_state = 'verified') desc,
                                             revenue desc,
                                             seller_id)  -- = seller_address in byte order
       end,
       categories,
       digest,
       first_ts, last_ts, first_block, last_block
  from judged;

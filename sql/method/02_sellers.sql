-- Method step 2: per-seller metrics over the verified payments in the window (kept by step 1a in
-- acc_sellers: count, sum, distinct payers, lower median, top payer's sum), evidence state, tier,
-- farm flags and reasons, and the ranking. The seller's evidence digest comes from
-- m_seller_digests, built by the version's own digest step (sql/method/<version>/01b_digests.sql).

insert into gen_sellers (
  generation, seller_address, listing_count, payments_30d, payers_30d,
  verified_revenue_30d_micro, median_payment_30d_micro, evidence_state, tier, farm_flag,
  farm_reasons, rank, categories, evidence_sha256, first_payment_ts, last_payment_ts,
  first_block, last_block)
with metrics as (
  select c.seller_id,
         c.seller_address,
         c.listing_count,
         c.categories,
         c.seller_ord,
         coalesce(a.payments, 0)::int                           as payments,
         coalesce(a.payers, 0)::int                             as payers,
         coalesce(a.revenue, 0)                                 as revenue,
         a.median,
         a.first_ts, a.last_ts, a.first_block, a.last_block,
         coalesce(d.digest, encode(sha256(''::bytea), 'hex'))   as digest,
         coalesce(a.top_sum, 0)                                 as top_sum
    from m_catalog_sellers c
    -- (a seller without an address id has no row: no transfer names it, so it is unpaid)
    left join acc_sellers a on a.seller_id = c.seller_id
    left join m_seller_digests d on d.seller_id = c.seller_id
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
                                             seller_ord)  -- = seller_address in byte order
       end,
       categories,
       digest,
       first_ts, last_ts, first_block, last_block
  from judged;

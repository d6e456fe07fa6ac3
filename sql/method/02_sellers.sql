-- Method step 2: per-seller metrics over the verified payments in the window (kept by step 1a in
-- acc_sellers: count, sum, distinct payers, lower median, top payer's sum), evidence state, tier,
-- farm flags and reasons, and the ranking. The seller's evidence digest comes from
-- m_seller_digests, built by the digest step (sql/method/01b_digests.sql, or the version's own).
-- Under 3.0.0 each seller also gets its per-class and external/internal numbers (kept in
-- acc_sellers by sql/method/3.0.0/01c_reasons.sql, migration 0042; zeros for a seller without an
-- address id, which has no row) and the farm reason internal_share; under 1.x and 2.x (payments
-- of one class, no step 1c) those columns are null. seller_no is the snapshot's seller number
-- (the address in byte order), by which the directory's indexes break ties (migration 0043).
--
-- The rows go into a table of their own, without indexes, in the published order (the address in
-- byte order), which gen_sellers_close then indexes in bulk and attaches as the generation's
-- partition of gen_sellers (migration 0047). (Building the indexes once measured 0.55-0.6x of
-- maintaining them row by row on synthetic generations; in the method at 1M about the same as
-- main's insert: docs/benchmarks.md, "gen_sellers as one partition per generation".)

select gen_sellers_open(generation) from m_gen;

insert into gen_sellers_filling (
  generation, seller_address, listing_count, payments_30d, payers_30d,
  verified_revenue_30d_micro, median_payment_30d_micro, evidence_state, tier, farm_flag,
  farm_reasons, rank, categories, evidence_sha256, first_payment_ts, last_payment_ts,
  first_block, last_block, class_payments_30d, class_revenue_30d_micro, external_payments_30d,
  external_revenue_30d_micro, external_payers_30d, internal_seller_funded_payments_30d,
  internal_seller_funded_revenue_30d_micro, internal_seller_funded_payers_30d,
  internal_same_operator_payments_30d, internal_same_operator_revenue_30d_micro,
  internal_same_operator_payers_30d, seller_no)
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
         coalesce(a.top_sum, 0)                                 as top_sum,
         case when v.classes then coalesce(a.class_payments, '{0,0,0,0}') end            as class_payments,
         case when v.classes then coalesce(a.class_revenue, '{0,0,0,0}') end             as class_revenue,
         case when v.classes then coalesce(a.external_payments, 0) end                   as external_payments,
         case when v.classes then coalesce(a.external_revenue, 0) end                    as external_revenue,
         case when v.classes then coalesce(a.external_payers, 0) end                     as external_payers,
         case when v.classes then coalesce(a.seller_funded_payments, 0) end              as seller_funded_payments,
         case when v.classes then coalesce(a.seller_funded_revenue, 0) end               as seller_funded_revenue,
         case when v.classes then coalesce(a.seller_funded_payers, 0) end                as seller_funded_payers,
         case when v.classes then coalesce(a.same_operator_payments, 0) end              as same_operator_payments,
         case when v.classes then coalesce(a.same_operator_revenue, 0) end               as same_operator_revenue,
         case when v.classes then coalesce(a.same_operator_payers, 0) end                as same_operator_payers
    from m_catalog_sellers c
    -- (a seller without an address id has no row: no transfer names it, so it is unpaid)
    left join acc_sellers a on a.seller_id = c.seller_id
    left join m_seller_digests d on d.seller_id = c.seller_id
    -- (3.0.0's numbers by class: the payments of every class, sql/method/3.0.0/01_payments.sql)
    cross join (select payment_set = 'all_classes' as classes from m_gen) v
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
                then 'top_payer_share>' || g.farm_top_payer_share end,
           -- 3.0.0: internal revenue (both reasons) above farm_internal_share of the revenue
           case when g.farm_internal_share is not null
                 and m.payments >= g.farm_top_payer_min_payments
                 and m.seller_funded_revenue + m.same_operator_revenue > m.revenue * g.farm_internal_share
                then 'internal_share>' || g.farm_internal_share end
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
       first_ts, last_ts, first_block, last_block,
       class_payments, class_revenue, external_payments, external_revenue, external_payers,
       seller_funded_payments, seller_funded_revenue, seller_funded_payers,
       same_operator_payments, same_operator_revenue, same_operator_payers,
       seller_ord  -- the directory's tie-break (migration 0043): the address in byte order
  from judged
 order by seller_ord;

select gen_sellers_close(generation) from m_gen;

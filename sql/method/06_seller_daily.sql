-- Step 6: the daily series of each seller (SPEC section 2, "Daily series"): one row per UTC day
-- on which the seller has at least one verified payment in the window, with that day's payments,
-- revenue and distinct payers. The window's two edge days are partial: only in-window payments.

insert into gen_seller_daily (generation, seller_address, day, payments, revenue_micro, payers)
select (select generation from m_gen),
       c.seller_address,
       (to_timestamp(d.day_start) at time zone 'UTC')::date,
       d.payments,
       d.revenue,
       d.payers
  from (select seller_id,
               block_timestamp - block_timestamp % 86400 as day_start,
               count(*)::int                              as payments,
               sum(value)                                 as revenue,
               count(distinct payer)::int                 as payers
          from m_payments
         where in_window
         group by 1, 2) d
  join m_catalog_sellers c using (seller_id);

-- Method 1.0.0, step 4: the daily market aggregate, one row per publishable UTC day.
-- A day D is publishable when it ended at or before the as-of time (D_start + 86400 <= as_of_ts),
-- starts no earlier than the UTC day holding the window start (market_from_ts), and every seller
-- of the catalog is indexed from D_start (seller_coverage.from_ts <= D_start) up to the as-of
-- block. Days with no payment are rows of zeros.

insert into gen_market_daily (
  generation, day, payments, volume_micro, payers, sellers_paid, median_payment_micro,
  tracked_sellers, tracked_listings)
with coverage as (
  -- the latest start among the sellers' coverage; null when some seller is not covered up to
  -- the as-of block (then no day is publishable)
  select case
           when exists (select 1
                          from m_catalog_sellers c
                          left join seller_coverage sc using (seller_address)
                         where sc.seller_address is null
                            or sc.to_block < (select as_of_block from m_gen))
           then null
           else coalesce((select max(sc.from_ts)
                            from seller_coverage sc
                            join m_catalog_sellers c using (seller_address)), 0)
         end as covered_from_ts
),
days as (
  select d.day_start
    from m_gen g
   cross join coverage
   cross join lateral generate_series(g.market_from_ts, g.as_of_ts - 86400, 86400::bigint) as d(day_start)
   where coverage.covered_from_ts is not null
     and d.day_start >= coverage.covered_from_ts
),
per_day as (
  select block_timestamp - block_timestamp % 86400                      as day_start,
         count(*)::int                                                  as payments,
         sum(value)                                                     as volume,
         count(distinct payer)::int                                     as payers,
         count(distinct seller_id)::int                                as sellers_paid,
         percentile_disc(0.5) within group (order by value)             as median
    from m_payments
   group by 1
),
tracked as (
  select count(*)::int as sellers, coalesce(sum(listing_count), 0)::int as listings
    from m_catalog_sellers
)
select (select generation from m_gen),
       (to_timestamp(d.day_start) at time zone 'UTC')::date,
       coalesce(p.payments, 0),
       coalesce(p.volume, 0),
       coalesce(p.payers, 0),
       coalesce(p.sellers_paid, 0),
       p.median,
       t.sellers,
       t.listings
  from days d
  left join per_day p using (day_start)
 cross join tracked t;

-- Method step 4b (every version): the market summary (docs/METHOD.md 2.12.2). Over the
-- generation's publishable days (step 4's m_market_days, the days of gen_market_daily), three
-- periods: last_7d (the 7 latest days), prev_7d (the 7 before them) and last_30d (the 30 latest,
-- or as many as there are). Each has its days' sums (payments, volume, external volume under
-- 3.x) and the distinct payers and sellers paid over the whole period, counted as distinct (not
-- a sum of the days' counts); last_7d also has the change of each against prev_7d.
--
-- Incremental: the periods' days change at most once a day. Each cached market day
-- (acc_market_days) keeps its distinct payers and sellers (the arrays payer_ids and seller_ids,
-- migration 0045), built by step 4 in the run that computed the day and numbered by set_id; a
-- period's numbers (acc_market_summary) are reused while its first day, its number of days and the
-- highest set_id of its days are the same. A day step 4 rebuilt (its facts changed, or the sellers
-- or the payment set did) has a new set_id, so the periods holding it are computed again, from the
-- day sets, not from the payments.

-- (the cached days before the first publishable day are no longer read: they go, so the cache
-- stays the publishable days plus at most those after them)
delete from acc_market_days where day_start < (select min(day_start) from m_market_days);

-- The periods: the publishable days numbered from the latest (1).
create temp table m_sum_days on commit drop as
select day_start, (row_number() over (order by day_start desc))::int as n
  from m_market_days;

create temp table m_sum_periods on commit drop as
select p.period, p.lo, p.hi,
       min(d.day_start)        as first_day_start,
       count(d.day_start)::int as days,
       max(a.set_id)           as set_max
  from (values ('last_7d', 1, 7), ('prev_7d', 8, 14), ('last_30d', 1, 30)) as p(period, lo, hi)
  left join m_sum_days d on d.n between p.lo and p.hi
  left join acc_market_days a on a.day_start = d.day_start
 group by p.period, p.lo, p.hi;

-- A cached period is reused only over the same days, none of them rebuilt since.
delete from acc_market_summary s
 where not exists (select 1
                     from m_sum_periods p
                    where p.period = s.period
                      and p.first_day_start is not distinct from s.first_day_start
                      and p.days = s.days
                      and p.set_max is not distinct from s.set_max);

-- (each period's distinct ids hashed: up to 30 days' arrays, ~3M ids at 10M payments, where a
-- count(distinct) sorts them)
insert into acc_market_summary (
  period, first_day_start, days, set_max, payments, volume_micro, external_volume_micro, payers, sellers_paid)
select p.period, p.first_day_start, p.days, p.set_max,
       t.payments, t.volume_micro, t.external_volume_micro,
       case when p.days > 0
            then (select count(*)::int
                    from (select distinct x.id
                            from m_sum_days d
                            join acc_market_days a on a.day_start = d.day_start
                           cross join lateral unnest(a.payer_ids) x(id)
                           where d.n between p.lo and p.hi) u) end,
       case when p.days > 0
            then (select count(*)::int
                    from (select distinct x.id
                            from m_sum_days d
                            join acc_market_days a on a.day_start = d.day_start
                           cross join lateral unnest(a.seller_ids) x(id)
                           where d.n between p.lo and p.hi) u) end
  from m_sum_periods p
 cross join lateral (select sum(a.payments)::int8 as payments,
                            sum(a.volume_micro)   as volume_micro,
                            sum(a.external_volume) as external_volume_micro
                       from m_sum_days d
                       join acc_market_days a on a.day_start = d.day_start
                      where d.n between p.lo and p.hi) t
 where p.period not in (select period from acc_market_summary);

-- The change of last_7d against prev_7d: (last - prev) / prev, rounded to 6 decimals (half away
-- from zero); null unless both periods have their 7 days and prev's number is above 0.
insert into gen_market_summary (
  generation, period, first_day, last_day, days, payments, volume_micro, external_volume_micro,
  payers, sellers_paid, change_payments, change_volume, change_external_volume, change_payers,
  change_sellers_paid)
select (select generation from m_gen),
       s.period,
       (to_timestamp(s.first_day_start) at time zone 'UTC')::date,
       (to_timestamp(s.first_day_start + 86400 * (s.days - 1)) at time zone 'UTC')::date,
       s.days,
       s.payments, s.volume_micro, s.external_volume_micro, s.payers, s.sellers_paid,
       case when s.period = 'last_7d' and comparable then round((s.payments - q.payments)::numeric / nullif(q.payments, 0), 6) end,
       case when s.period = 'last_7d' and comparable then round((s.volume_micro - q.volume_micro) / nullif(q.volume_micro, 0), 6) end,
       case when s.period = 'last_7d' and comparable
            then round((s.external_volume_micro - q.external_volume_micro) / nullif(q.external_volume_micro, 0), 6) end,
       case when s.period = 'last_7d' and comparable then round((s.payers - q.payers)::numeric / nullif(q.payers, 0), 6) end,
       case when s.period = 'last_7d' and comparable
            then round((s.sellers_paid - q.sellers_paid)::numeric / nullif(q.sellers_paid, 0), 6) end
  from acc_market_summary s
  left join acc_market_summary q on q.period = 'prev_7d'
 cross join lateral (select s.days = 7 and q.days = 7 as comparable) c;

insert into gen_outputs (generation, output) select generation, 'market_summary' from m_gen;

-- Step 6: the daily series of each seller (SPEC section 2, "Daily series"): one row per UTC day
-- on which the seller has at least one verified payment in the window, with that day's payments,
-- revenue and distinct payers. The window's two edge days are partial: only in-window payments.
--
-- The rows are shared between generations (seller_daily_rows, migration 0016): a row serves the
-- generations gen_from <= g < gen_to. This run closes the rows of the (seller, day) pairs whose
-- payments changed in step 1a and of the sellers that left the catalog, and adds the new rows of
-- those pairs from acc_seller_days. A cold run (step 1a's reset) closes every live row and adds
-- one per row of acc_seller_days, which it has just built whole.
-- The rows keep the seller's text (the view gen_seller_daily serves them as they are); the work
-- state names sellers by address id (migration 0028), so the text comes from m_catalog_sellers,
-- once per row written or closed.

update seller_daily_rows
   set gen_to = (select generation from m_gen)
 where gen_to is null
   and (select reset from m_acc);

-- The changed (seller, day) pairs with the seller's text (a hash join: before the settings below).
create temp table m_changed_day_rows on commit drop as
select c.seller_id, s.seller_address collate "default" as seller_address, c.day_start
  from m_changed_days c
  join m_catalog_sellers s on s.seller_id = c.seller_id;
analyze m_changed_day_rows;

-- (a few thousand changed pairs: each is looked up by the live index. Without the two settings
-- below the planner, whose statistics of the live rows lag, sorted all ~900,000 live rows of a
-- 10M-payment window to merge-join them: 1.8 s of a 15-minute run)
set local enable_nestloop = on;
set local enable_hashjoin = off;
set local enable_mergejoin = off;
update seller_daily_rows r
   set gen_to = (select generation from m_gen)
  from m_changed_day_rows c
 where not (select reset from m_acc)
   and r.gen_to is null
   and r.seller_address = c.seller_address
   and r.day = (to_timestamp(c.day_start) at time zone 'UTC')::date;
update seller_daily_rows r
   set gen_to = (select generation from m_gen)
  from m_removed_sellers s
 where r.gen_to is null
   and r.seller_address = s.seller_address collate "default";
set local enable_hashjoin = on;
set local enable_mergejoin = on;

insert into seller_daily_rows (seller_address, day, payments, revenue_micro, payers, gen_from)
select c.seller_address,
       (to_timestamp(a.day_start) at time zone 'UTC')::date,
       a.payments::int,
       a.revenue,
       a.payers::int,
       (select generation from m_gen)
  from m_changed_day_rows c
  join acc_seller_days a on a.seller_id = c.seller_id and a.day_start = c.day_start;
set local enable_nestloop = off;

-- Cold: every (seller, day) of the window, in the primary key's order.
insert into seller_daily_rows (seller_address, day, payments, revenue_micro, payers, gen_from)
select s.seller_address,
       (to_timestamp(a.day_start) at time zone 'UTC')::date,
       a.payments::int,
       a.revenue,
       a.payers::int,
       (select generation from m_gen)
  from acc_seller_days a
  join m_catalog_sellers s on s.seller_id = a.seller_id
 where (select reset from m_acc)
 order by s.seller_address collate "default", a.day_start;

-- The last step: the session views of step 1 go (the temporary tables go at commit).
drop view m_payment_facts, m_fact_rows;

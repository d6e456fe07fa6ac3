-- Step 6: the daily series of each seller (SPEC section 2, "Daily series"): one row per UTC day
-- on which the seller has at least one verified payment in the window, with that day's payments,
-- revenue and distinct payers. The window's two edge days are partial: only in-window payments.
--
-- The rows are shared between generations (seller_daily_rows, migration 0016): a row serves the
-- generations gen_from <= g < gen_to. This run closes the rows of the (seller, day) pairs whose
-- payments changed in step 1a and of the sellers that left the catalog, and adds the new rows of
-- those pairs from acc_seller_days. A cold run (step 1a's reset) closes every live row and adds
-- one per row of acc_seller_days, which it has just built whole.
-- The rows name the seller by its address id, as the work state does (migration 0033); the view
-- gen_seller_daily gives its text back from addresses.

update seller_daily_rows
   set gen_to = (select generation from m_gen)
 where gen_to is null
   and (select reset from m_acc);

-- (a few thousand changed pairs: each is looked up by the live index. Without the two settings
-- below the planner, whose statistics of the live rows lag, sorted all ~900,000 live rows of a
-- 10M-payment window to merge-join them: 1.8 s of a 15-minute run)
analyze m_changed_days;
set local enable_nestloop = on;
set local enable_hashjoin = off;
set local enable_mergejoin = off;
update seller_daily_rows r
   set gen_to = (select generation from m_gen)
  from m_changed_days c
 where not (select reset from m_acc)
   and r.gen_to is null
   and r.seller_id = c.seller_id
   and r.day = (to_timestamp(c.day_start) at time zone 'UTC')::date;
update seller_daily_rows r
   set gen_to = (select generation from m_gen)
  from m_removed_sellers s
 where r.gen_to is null
   and r.seller_id = s.seller_id;
set local enable_hashjoin = on;
set local enable_mergejoin = on;

-- (step 1a's changed pairs are of catalog sellers only, and acc_seller_days holds no other seller)
insert into seller_daily_rows (seller_id, day, payments, payers, gen_from, revenue_micro)
select a.seller_id,
       (to_timestamp(a.day_start) at time zone 'UTC')::date,
       a.payments::int,
       a.payers::int,
       (select generation from m_gen),
       a.revenue
  from m_changed_days c
  join acc_seller_days a on a.seller_id = c.seller_id and a.day_start = c.day_start;
set local enable_nestloop = off;

-- Cold: every (seller, day) of the window, in the primary key's order.
insert into seller_daily_rows (seller_id, day, payments, payers, gen_from, revenue_micro)
select a.seller_id,
       (to_timestamp(a.day_start) at time zone 'UTC')::date,
       a.payments::int,
       a.payers::int,
       (select generation from m_gen),
       a.revenue
  from acc_seller_days a
 where (select reset from m_acc)
 order by a.seller_id, a.day_start;

-- The last step: the session views of step 1 go (the temporary tables go at commit).
drop view m_payment_facts, m_fact_rows, m_cold_facts, m_cold_funding_rows, m_cold_operator_pairs;

-- The market days' distinct payers and sellers paid (migration 0038's day sets) kept in the day's
-- own row, as two sorted arrays of address ids, instead of one row per (day, payer) and per
-- (day, seller) in tables of their own. Nothing published changes: step 4b counts a period's
-- distinct payers and sellers from the arrays as it did from the rows (docs/METHOD.md 2.12.2).
-- Why (issue 21): at 10M payments acc_market_day_payers held ~3M rows (23 bytes a payment, with
-- its key), and a cold run spent ~40 s building the two tables (docs/benchmarks.md, "The market's
-- day sets as arrays"); 30 days of arrays are a few hundred kilobytes each, stored compressed out
-- of line, and a day's payer and seller counts are their lengths.
--
-- The sets of the days already cached move into the new columns (a day whose sets were never
-- built, set_id null, keeps null arrays: step 4 computes such a day again), so a database upgraded
-- in its steady state needs no cold run. One transaction, like every migration: a failure leaves
-- the old layout whole.
alter table acc_market_days
  add column payer_ids  int4[],   -- the day's distinct payers (address ids, ascending)
  add column seller_ids int4[];   -- the day's distinct sellers paid (address ids, ascending)

update acc_market_days d
   set payer_ids  = coalesce((select array_agg(p.payer_id order by p.payer_id)
                                from acc_market_day_payers p
                               where p.day_start = d.day_start), '{}'),
       seller_ids = coalesce((select array_agg(s.seller_id order by s.seller_id)
                                from acc_market_day_sellers s
                               where s.day_start = d.day_start), '{}')
 where d.set_id is not null;

drop table acc_market_day_payers;
drop table acc_market_day_sellers;

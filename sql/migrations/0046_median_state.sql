-- The lower median's running state, kept in each seller's acc_sellers row so that a steady run
-- moves the median from the old one through acc_values by the run's change instead of summing the
-- seller's whole histogram again (sql/method/01a_window.sql; 1.7-5.7 s of a 50M-payment steady run
-- for the seller with 192,807 distinct values, docs/benchmarks.md "Steady runs: the median moved").
--   request_payments: the histogram's count (the per-request payments; under 3.0.0 without claims)
--   below_median:     the histogram's count of values below the median (0 when it is null)
-- Null when unknown: in every row this migration finds, in every row after a cold run (it inserts
-- the rows without them), and in a row for a seller new to the catalog; the next steady run that
-- touches such a seller computes its median from its whole histogram and fills both. Nothing
-- published changes. (Nullable columns without a default: adding them rewrites no row.)
alter table acc_sellers
  add column if not exists request_payments bigint,
  add column if not exists below_median     bigint;

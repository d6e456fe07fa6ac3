-- Method 3.0.0's per-seller numbers by class and internal reason, kept in each seller's
-- acc_sellers row (work state) instead of summed again for every seller of the catalog every run.
-- Nothing published changes: step 2 (sql/method/02_sellers.sql) reads the same numbers from here
-- that it read from the temporary m_seller_classes, which step 1c
-- (sql/method/3.0.0/01c_reasons.sql) built each run by grouping every seller's rows of
-- acc_seller_classes and acc_reason_sellers: 0.9 s of a 10M-payment steady run (50,000 sellers,
-- load 3-6), for the few thousand sellers whose rows a run moves. Step 1c now sums those sellers
-- only and writes their numbers here (docs/benchmarks.md, "Steady runs: the sellers' class numbers
-- kept").
--
-- Null until step 1c fills them: in every row after a cold run (step 1a inserts the rows without
-- them), in a row step 1a adds for a seller new to the catalog, and in every row this migration
-- finds, so a database upgraded in its steady state needs no cold run: its next 3.0.0 run sums
-- the rows still null. Under 1.x and 2.x (no step 1c) they stay null and step 2 publishes nulls,
-- as before. (Nullable columns without a default: adding them rewrites no row.)
alter table acc_sellers
  add column class_payments          int4[],           -- per class 1-4 (eip3009, permit2_exact, permit2_upto, batch_settlement)
  add column class_revenue           numeric(78,0)[],  -- the same order
  add column external_payments       int4,             -- reason 0
  add column external_revenue        numeric(78,0),
  add column external_payers         int4,
  add column seller_funded_payments  int4,             -- reason 1
  add column seller_funded_revenue   numeric(78,0),
  add column seller_funded_payers    int4,
  add column same_operator_payments  int4,             -- reason 2
  add column same_operator_revenue   numeric(78,0),
  add column same_operator_payers    int4;

-- Fewer bytes per payment (issue 21; docs/data-model.md, "Work state"): acc_day_payers, the
-- distinct payers of each seller's UTC day (step 1a), becomes one row per (seller, day) holding
-- the day's payers as one sorted int4 array in which a payer appears once per payment of that day
-- (a multiset: what the rows' counts `n` said), instead of one row per (seller, day, payer) with
-- its count. Nothing published changes: step 1a reads a changed day's old counts from the array
-- (how often each payer appears) where it read them from the rows, and writes the day's array
-- back (sql/method/01a_window.sql).
-- Why: at 10M payments the table held ~7.8M rows of 76 bytes with their key (59 bytes a payment,
-- the largest accumulator); a day's array costs 4 bytes a payment plus one row of ~90 bytes with
-- its key per (seller, day).
--
-- Converted in place, so a database upgraded in its steady state needs no cold run: the rows
-- become the arrays (each payer repeated n times, ascending), acc_state stays. One transaction,
-- like every migration: killed, it rolls back and leaves the old table whole; run again, it starts
-- over. Same SQL on Postgres 15 and PGlite.
alter table acc_day_payers rename to acc_day_payers_rows;
alter table acc_day_payers_rows rename constraint acc_day_payers_pkey to acc_day_payers_rows_pkey;
create table acc_day_payers (
  seller_id  int4   not null,
  day        int4   not null,   -- day_start / 86,400
  payer_ids  int4[] not null,   -- the day's payers, ascending, each once per payment (address ids)
  primary key (seller_id, day)
);
insert into acc_day_payers (seller_id, day, payer_ids)
select d.seller_id, d.day, array_agg(d.payer_id order by d.payer_id)
  from acc_day_payers_rows d
 cross join lateral generate_series(1, d.n) r
 group by 1, 2
 order by 1, 2;
drop table acc_day_payers_rows;

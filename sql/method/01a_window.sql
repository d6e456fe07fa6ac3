-- Method step 1a (every version): the window's accumulators (migration 0016), moved from the
-- window of the previous run to this generation's. Steps 2 and 6 read the numbers from them.
-- They name sellers and payers by address id (seller_id, payer_id: migration 0028), never by text.
-- The payments are the version's (m_payment_facts, step 1): under 3.0.0 every class, each row
-- with its class and internal reason, which m_window and m_delta carry for step 1c
-- (sql/method/3.0.0/01c_reasons.sql). The median is over per-request payments only (classes
-- 1-3: a batch claim sums many requests): acc_values holds no claim.
--
-- Incremental (docs/METHOD.md 2.10). The accumulators hold exactly the verified payments of one
-- window: visible at seq s0, block_timestamp in (ws0, ts0], block_number <= b0, paid to a seller
-- of the catalog then (a row in acc_sellers). This generation's window is (ws1, ts1], b1, seq s1,
-- catalog K1. Each payment p that can be in one and not the other is read once, with
--   sign = [p in the new window] - [p in the old one]   (1 entered, -1 left, 0 neither)
-- and the signs are added to the accumulators. A payment can differ only if its fact was added or
-- removed after s0, or its time lies in (ws0, ws1] (left by the start) or [ts0, ts1] (entered at
-- the end; >= ts0 because post-Denim blocks after b0 can share ts0), so those are all that is
-- read: the indexes on added_seq, removed_seq and block_timestamp find them. Sellers new to the
-- catalog are read whole (sign 1); sellers gone from it are dropped.
-- When the window or the facts go back (s1 < s0, an earlier start or as-of), or there are no
-- accumulators, the run is cold: they are emptied and built in bulk from the window's payments
-- (below, "Cold"), and the steady statements after that find nothing to move.
--
-- A fact is visible at seq s when visible_at(added_seq, removed_seq, s) (migration 0023). The
-- statements pass s as a column of m_acc, joined (a one-row table, analyzed so the planner knows),
-- never as `(select s1 from m_acc)`: Postgres inlines the call only for a column or a constant.

-- One run at a time moves the accumulators (a concurrent compute waits here).
lock table acc_state in exclusive mode;

create temp table m_acc on commit drop as
select g.run_seq                                   as s1,
       g.window_start_ts                           as ws1,
       g.as_of_ts                                  as ts1,
       g.as_of_block                               as b1,
       coalesce(s.checked_seq, 0)                  as s0,
       coalesce(s.window_start_ts, 0)              as ws0,
       coalesce(s.as_of_ts, 0)                     as ts0,
       coalesce(s.as_of_block, 0)                  as b0,
       s.checked_seq is null
         or s.payment_set <> g.payment_set
         or s.checked_seq > g.run_seq
         or s.window_start_ts > g.window_start_ts
         or s.as_of_ts > g.as_of_ts
         or s.as_of_block > g.as_of_block          as reset
  from m_gen g
  left join acc_state s on true;

analyze m_acc;

-- Cold (m_acc.reset): the accumulators are emptied and filled from one read of the window's
-- verified payments, each table by one GROUP BY. The result is what moving empty accumulators by
-- every payment of the window (sign 1) gives, which is what a cold run did before; the statements
-- below it then see accumulators exact for this window: no seller added or removed, nothing to
-- move. Every statement of the block is gated on `reset`, so a steady run passes it at no cost.
-- (truncate, not delete: the rows of a 10M-payment window are gigabytes, and no reader but the
-- method, which holds acc_state's lock, reads these tables.)
-- The four large tables are filled without their primary key, which is built after the insert
-- (a bottom-up build instead of one B-tree insert per row: the inserts of acc_day_payers and
-- acc_payers were 250 s of a 1,212 s cold run at 10M payments, issue 21), with the same name and
-- columns, before the steady statements below, which need it for their upserts. A failed run
-- rolls the drop back with everything else. acc_payers and acc_values are still inserted in the
-- key's order, so that their heap is clustered by seller as before: the steady runs read one
-- seller's rows of them by the key's prefix (the operator groups' payers, step 2b; a lost top
-- payer; the median). acc_day_payers and acc_seller_days come in their key's order too, from the
-- sorted grouping below, which costs no sort of its own (a sort added before their insert cost
-- more than the bulk build saved: docs/benchmarks.md, "The cold path's accumulators in bulk").
set local maintenance_work_mem = '1GB';
do $$
begin
  if (select reset from m_acc) then
    truncate acc_sellers, acc_values, acc_payers, acc_day_payers, acc_seller_days;
    alter table acc_values drop constraint acc_values_pkey;
    alter table acc_payers drop constraint acc_payers_pkey;
    alter table acc_day_payers drop constraint acc_day_payers_pkey;
    alter table acc_seller_days drop constraint acc_seller_days_pkey;
  end if;
end $$;

-- The verified payments to sellers of the catalog, read once for the whole cold run, by address
-- ids (grouping and sorting by an integer is cheaper than by the address; values stay `bigint`,
-- whose sums Postgres adds in 128-bit integers, not `numeric`): the window's, and those of the
-- market's first day before the window starts (market_from_ts, the UTC day holding the window's
-- start), which step 4 reads to build the market's days instead of reading the facts again. From
-- m_cold_facts (step 1): the same rows as m_payment_facts visible at s1 = run_seq up to b1 =
-- as_of_block, by sets rather than one probe per payment. The market's first day is then moved to
-- m_cold_head (at most a day, against the window's 30: a delete of a few pages, where a copy of
-- the window into a table of its own wrote every row twice). Each row keeps its transaction hash
-- and log index: the digests (01b_digests.sql) build a cold run's evidence lines from this read
-- instead of reading the facts a second time.
-- Under 3.0.0 the read decides each payment's internal reason from two small sets, filled here
-- for a cold run only (empty views before 3.0.0; sql/method/01_payments.sql and
-- sql/method/3.0.0/01_payments.sql): the fundings visible at s1, in the order of their index (a
-- bottom-up build), and the (seller, payer) pairs that can have a reason. The pairs are joined to
-- the payments by hash (a merge join, which the planner picked, sorted the window's payments by
-- pair first: a second slower than the hash at 1M).
-- (a steady run does not even plan this insert, nor m_window's below: the statements are built over
-- the fact partitions, and planning them cost 9.6 and 33.6 ms of every steady run at 2M for no
-- row, EXPLAIN under load 10-16, docs/benchmarks.md, "The steady run's fixed part"; a statement
-- of PL/pgSQL is planned when first run, and a CREATE TABLE AS ... WITH NO DATA is not planned)
do $$
begin
  if (select reset from m_acc) then
    insert into m_cold_fundings
    select *
      from m_cold_funding_rows
     order by 1, 2, 3, 4;
  end if;
end $$;
create index on m_cold_fundings (seller_id, payer_id, block_number, log_index);
insert into m_cold_pairs (seller_id, payer_id, funded, operator)
select seller_id, payer_id, bool_or(funded), bool_or(not funded)
  from (select distinct seller_id, payer_id, true as funded from m_cold_fundings
        union all
        select seller_id, payer_id, false from m_cold_operator_pairs
         where (select reset from m_acc)) x
 group by 1, 2;
analyze m_cold_fundings;
analyze m_cold_pairs;

-- (in a steady run the same table, empty and unplanned: WITH NO DATA)
set local enable_mergejoin = off;
do $$
begin
  execute $q$
    create temp table m_window on commit drop as
    select t.seller_id, t.payer_id, t.value, t.block_timestamp, t.block_number, t.class, t.reason,
           t.log_index, t.tx_hash   -- (last: read only by the digests' cold grouping, 01b_digests.sql)
      from m_cold_facts t
      join m_catalog_sellers c on c.seller_id = t.seller_id
     cross join m_acc a
     where (select reset from m_acc)
       and t.block_timestamp >= least(a.ws1 + 1, (select market_from_ts from m_gen))
       and t.block_timestamp <= a.ts1
  $q$ || case when (select reset from m_acc) then '' else ' with no data' end;
end $$;
set local enable_mergejoin = on;

create temp table m_cold_head (like m_window) on commit drop;
with moved as (
  delete from m_window
   where block_timestamp <= (select ws1 from m_acc)
  returning *)
insert into m_cold_head
select * from moved;

analyze m_window;

-- Payers per seller and UTC day, and their roll-ups: per seller and payer, per seller and day.
-- (acc_day_payers keeps the day's number, day_start / 86,400, in 4 bytes: migration 0033)
-- Grouped by sorting, not hashing: a hash table of millions of groups, each with its sums' states,
-- cost more than a sort of the rows (at 10M payments the hashed groupings of this block took
-- 24 s and 34 s; at 1M their tables held 205 MB and 344 MB; issue 21, docs/benchmarks.md, "The
-- cold path's groupings sorted"), and the sort
-- leaves m_window_day_payers in the order of acc_day_payers' key, so that its insert, the key
-- built after it and acc_seller_days' grouping (in that key's prefix order) each find their rows
-- in order (a sort of sorted rows is one pass). Only the order of work changes, not the rows.
set local enable_hashagg = off;
create temp table m_window_day_payers on commit drop as
select seller_id, (block_timestamp / 86400)::int4 as day, payer_id, count(*) as n, sum(value) as total
  from m_window
 group by 1, 2, 3;

analyze m_window_day_payers;

-- (one row per (seller, day): the day's payers ascending, each once per payment; migration 0050)
insert into acc_day_payers (seller_id, day, payer_ids)
select d.seller_id, d.day, array_agg(d.payer_id order by d.payer_id)
  from m_window_day_payers d
 cross join lateral generate_series(1, d.n::int4) r
 group by 1, 2;

insert into acc_seller_days (seller_id, day_start, payments, revenue, payers)
select seller_id, day::int8 * 86400, sum(n)::bigint, sum(total), count(*)
  from m_window_day_payers
 group by seller_id, day;

insert into acc_payers (seller_id, payer_id, n, total)
select seller_id, payer_id, sum(n)::bigint, sum(total)
  from m_window_day_payers
 group by 1, 2
 order by 1, 2;
set local enable_hashagg = on;

-- The histogram of per-request values (for the lower median).
insert into acc_values (seller_id, value, n)
select seller_id, value, count(*)
  from m_window
 where class <> 4
 group by 1, 2
 order by 1, 2;

do $$
begin
  if (select reset from m_acc) then
    alter table acc_values add constraint acc_values_pkey primary key (seller_id, value);
    alter table acc_payers add constraint acc_payers_pkey primary key (seller_id, payer_id);
    alter table acc_day_payers add constraint acc_day_payers_pkey primary key (seller_id, day);
    alter table acc_seller_days add constraint acc_seller_days_pkey primary key (seller_id, day_start);
  end if;
end $$;

-- Every seller of the catalog with an address id, paid or not: counts and sums, payers (one row
-- of acc_payers each) and the top payer's sum, the lower median (the smallest value whose running
-- count reaches half the payments, as below), the first and last payment (one chain: time grows
-- with the block). (A seller without an id has no payment: step 2 reads it as unpaid.) The payers
-- and the histogram are read back from the tables just filled, not from copies of their rows.
-- The median's running state (migration 0046: the histogram's count and its count below the
-- median) is filled here from the same sums, so that the first steady run after a cold one moves
-- each median from it instead of summing every seller's whole histogram again.
insert into acc_sellers (seller_id, payments, revenue, payers, top_sum, median,
                         first_ts, last_ts, first_block, last_block, request_payments, below_median)
select c.seller_id,
       coalesce(w.payments, 0),
       coalesce(w.revenue, 0),
       coalesce(p.payers, 0),
       coalesce(p.top_sum, 0),
       m.median,
       w.first_ts, w.last_ts, w.first_block, w.last_block,
       coalesce(m.requests, 0),
       coalesce(m.below, 0)
  from m_catalog_sellers c
  left join (select seller_id, count(*) as payments, sum(value) as revenue,
                    min(block_timestamp) as first_ts, max(block_timestamp) as last_ts,
                    min(block_number) as first_block, max(block_number) as last_block
               from m_window
              group by 1) w using (seller_id)
  left join (select seller_id, count(*) as payers, max(total) as top_sum
               from acc_payers
              where (select reset from m_acc)
              group by 1) p using (seller_id)
  left join (select distinct on (seller_id) seller_id, value as median, cum - n as below, payments as requests
               from (select seller_id, value, n,
                            sum(n) over (partition by seller_id order by value) as cum,
                            sum(n) over (partition by seller_id)                as payments
                       from acc_values
                      where (select reset from m_acc)) h
              where 2 * cum >= payments
              order by seller_id, value) m using (seller_id)
 where (select reset from m_acc)
   and c.seller_id is not null
 order by c.seller_id;

-- Steady: move the accumulators by the payments that entered or left the window.

create temp table m_removed_sellers on commit drop as
select a.seller_id
  from acc_sellers a
 where not exists (select 1 from m_catalog_sellers c where c.seller_id = a.seller_id);

create temp table m_added_sellers on commit drop as
select c.seller_id
  from m_catalog_sellers c
 where c.seller_id is not null
   and not exists (select 1 from acc_sellers a where a.seller_id = c.seller_id);

analyze m_added_sellers;

-- (few rows each: look them up by index rather than hash whole tables)
set local enable_nestloop = on;

-- The lowest block of a payment visible in the new window (the facts visible at one seq are one
-- chain, whose timestamps never go down): a seller's index range starts there, not at its
-- first payment ever.
create temp table m_bounds on commit drop as
-- (on the block versions that hold a transfer: the time index gives them in order, and the scan
-- stops at the first; through the view's joins the planner read every block of the window)
select coalesce((select b.block_id >> 20
                   from blocks b
                  where b.block_timestamp > a.ws1
                    and visible_at(b.added_seq, b.removed_seq, a.s1)
                    and exists (select 1 from m_fact_rows t where t.block_id = b.block_id)
                  order by b.block_timestamp, b.block_id
                  limit 1),
                a.b1 + 1) as lo_block
  from m_acc a;

create temp table m_delta (
  seller_id        int4,
  payer_id         int4,
  value            numeric,
  block_timestamp  bigint,
  block_number     bigint,
  sign             integer,
  class            integer,
  reason           integer
) on commit drop;


-- Sellers in both catalogs: the payments that can differ (see above). Added or removed facts, and
-- times at the window's edges, are properties of block versions (migration 0023): the versions are
-- found first by the indexes on blocks, counted, and their transfers reached by primary key. (In
-- one statement the planner expected thousands of versions behind the `or` and hashed every
-- transfer of the table instead: 0.3-1 s of a steady run at 1M payments.)
create temp table m_delta_blocks on commit drop as
select b.block_id
  from blocks b
 where not (select reset from m_acc)
   and ((b.added_seq > (select s0 from m_acc) and b.added_seq <= (select s1 from m_acc))
        or (b.removed_seq > (select s0 from m_acc) and b.removed_seq <= (select s1 from m_acc))
        or (b.block_timestamp > (select ws0 from m_acc) and b.block_timestamp <= (select ws1 from m_acc))
        or (b.block_timestamp >= (select ts0 from m_acc) and b.block_timestamp <= (select ts1 from m_acc)));

analyze m_delta_blocks;

-- (by index probes only: the planner expected ~350 payments a changed block version and hashed
-- every row of `addresses` twice for the view's texts, which this statement never reads, and every
-- catalog seller for the filter: 1.3 of 1.6 s of a steady run at 1M payments for 690 rows. The
-- sellers in both catalogs are those of acc_sellers, by its primary key, but the removed ones.)
set local enable_hashjoin = off;
set local enable_mergejoin = off;
insert into m_delta
select *
  from (select t.seller_id,
               t.payer_id,
               t.value,
               t.block_timestamp,
               t.block_number,
               (visible_at(t.added_seq, t.removed_seq, a.s1)
                  and t.block_timestamp > a.ws1 and t.block_timestamp <= a.ts1 and t.block_number <= a.b1)::int
             - (visible_at(t.added_seq, t.removed_seq, a.s0)
                  and t.block_timestamp > a.ws0 and t.block_timestamp <= a.ts0 and t.block_number <= a.b0)::int
                 as sign,
               t.class,
               t.reason
          from m_delta_blocks d
          join m_payment_facts t on t.block_id = d.block_id
         cross join m_acc a
         where exists (select 1 from acc_sellers s where s.seller_id = t.seller_id)
           and t.seller_id not in (select seller_id from m_removed_sellers)) d
 where sign <> 0;

-- Sellers new to the catalog (a few in a steady run: newly listed, or paid for the first time):
-- every payment in the new window. Their payments are found by seller (transfers_to) and their
-- block versions by primary key first, and the window's bounds applied after: as conditions of
-- that join, bounds known only at run time made the planner guess a few dozen blocks in the
-- window and hash all of them (issue 21: 0.4 s of a steady run at 1M payments; since the facts
-- are partitioned (0027) a probe by primary key is costed once per partition).
-- (hash and merge joins stay off from the insert above: the planner, expecting a seller's share of
-- the payments by the average of transfers_to's sellers (~1,700 each at 1M for the 49 sellers new
-- in a run, which held 49 payments), hashed every block of the window and every address for
-- them: 1.1 of 1.3 s at 1M payments, a cost that grows with the window (35M blocks at 50M)
-- wherever one seller is new, not with its payments. By nested loops each payment is one probe
-- of blocks' primary key, pruned to its partition, and one of addresses'. A seller that joins
-- with millions of payments pays a probe for each: worked out at ~10 us a probe, hashing the
-- window's blocks would be cheaper only beyond ~2M payments at 50M, a catalog change that rare.)
insert into m_delta
with paid as materialized (
  select t.seller_id, t.payer_id, t.value, t.block_timestamp, t.block_number, t.added_seq, t.removed_seq,
         t.class, t.reason
    from m_added_sellers s
    join m_payment_facts t on t.seller_id = s.seller_id)
select t.seller_id, t.payer_id, t.value, t.block_timestamp, t.block_number, 1, t.class, t.reason
  from paid t
 cross join m_acc a
 where t.block_number >= (select lo_block from m_bounds)
   and t.block_number <= (select b1 from m_acc)
   and t.block_timestamp > (select ws1 from m_acc)
   and t.block_timestamp <= (select ts1 from m_acc)
   and visible_at(t.added_seq, t.removed_seq, a.s1);
set local enable_hashjoin = on;
set local enable_mergejoin = on;

analyze m_delta;

-- The histogram of per-request values (for the lower median).
-- (rows in key order, here and below: B-tree inserts in order cost about 0.7x inserts in random
-- order, and the sort is of a few thousand rows)
insert into acc_values as a (seller_id, value, n)
select seller_id, value, sum(sign)
  from m_delta
 where class <> 4
 group by 1, 2
having sum(sign) <> 0
 order by seller_id, value
    on conflict (seller_id, value) do update set n = a.n + excluded.n;
delete from acc_values a
 using (select distinct seller_id, value from m_delta) d
 where not (select reset from m_acc)
   and a.seller_id = d.seller_id and a.value = d.value and a.n = 0;

-- Payers: the change of each (seller, payer), added to acc_payers; the count before (to count
-- payers gained and lost) is the count after, which the upsert returns, less the change. (One
-- index probe per pair: looking the counts up first cost a second one, 0.2-2 s a run at 10M.)
create temp table m_payer_delta (
  seller_id       int4,
  payer_id        int4,
  dn              bigint,
  dtotal          numeric,
  old_n           bigint,
  total           numeric
) on commit drop;
with d as (
  select seller_id, payer_id, sum(sign) as dn, sum(sign * value) as dtotal
    from m_delta
   group by 1, 2
  having sum(sign) <> 0 or sum(sign * value) <> 0),
upserted as (
  insert into acc_payers as a (seller_id, payer_id, n, total)
  select seller_id, payer_id, dn, dtotal from d
   order by seller_id, payer_id
      on conflict (seller_id, payer_id) do update set n = a.n + excluded.n, total = a.total + excluded.total
  returning a.seller_id, a.payer_id, a.n, a.total)
insert into m_payer_delta
select d.seller_id, d.payer_id, d.dn, d.dtotal, u.n - d.dn, u.total
  from d
  join upserted u on u.seller_id = d.seller_id and u.payer_id = d.payer_id;
-- (only the pairs whose count went to zero: a few rows, looked up by key)
delete from acc_payers a
 using (select seller_id, payer_id from m_payer_delta where old_n > 0 and old_n + dn = 0) d
 where not (select reset from m_acc)
   and a.seller_id = d.seller_id and a.payer_id = d.payer_id and a.n = 0;

-- Payers per UTC day (the daily series), and the (seller, day) pairs whose row changes.
-- (acc_day_payers by day number, day_start / 86,400; it keeps no sum: a day's revenue moves by
-- dtotal here)
create temp table m_changed_days on commit drop as
select distinct seller_id, block_timestamp - block_timestamp % 86400 as day_start
  from m_delta;

create temp table m_day_delta (
  seller_id       int4,
  day_start       bigint,
  payer_id        int4,
  dn              bigint,
  dtotal          numeric,
  old_n           bigint
) on commit drop;
-- (acc_day_payers holds a (seller, day)'s payers as one ascending array, each payer once per
-- payment, migration 0050: a changed payer's old count is how often it appears in its day's array;
-- the day's array is written back as its unchanged payers' elements and each changed payer
-- repeated by its new count, and a day left with no payer goes.)
-- The changed days' arrays are read by primary key, one probe a day (nested loops: hashed, every
-- row of the table is read whatever the run changed), and unnested as a stream in the select
-- list (in `from` each is first stored in a tuplestore), twice: once joined by hash to the
-- changes for the changed payers' old counts, once for the unchanged payers' elements. Neither
-- stores a day's elements in a table of their own: the top seller's day holds ~133k payments at
-- 10M, and it changes every run (the day that is open, and the day leaving the window).
create temp table m_day_d on commit drop as
select seller_id, (block_timestamp / 86400)::int4 as day, payer_id,
       sum(sign) as dn, sum(sign * value) as dtotal
  from m_delta
 group by 1, 2, 3
having sum(sign) <> 0 or sum(sign * value) <> 0;
analyze m_day_d;
-- (the lateral subquery, kept from being flattened by `offset 0`, is the one probe a day; the
-- joins with the changes are hashed: no nested loop may scan the changes once per element)
create or replace temp view m_day_elems as
select k.seller_id, k.day, unnest(a.payer_ids) as payer_id
  from (select distinct seller_id, day from m_day_d) k
 cross join lateral (select a.payer_ids from acc_day_payers a
                      where a.seller_id = k.seller_id and a.day = k.day offset 0) a;
set local enable_nestloop = off;
set local enable_mergejoin = off;
create temp table m_day_old on commit drop as
select e.seller_id, e.day, e.payer_id, count(*) as n
  from m_day_elems e
  join m_day_d d on d.seller_id = e.seller_id and d.day = e.day and d.payer_id = e.payer_id
 group by 1, 2, 3;
insert into m_day_delta
select d.seller_id, d.day::int8 * 86400, d.payer_id, d.dn, d.dtotal, coalesce(o.n, 0)
  from m_day_d d
  left join m_day_old o on o.seller_id = d.seller_id and o.day = d.day and o.payer_id = d.payer_id;
-- (the elements sorted once, by day and payer: each day's aggregate then finds its input sorted,
-- and its own sort of sorted input is one pass)
create temp table m_day_new on commit drop as
select x.seller_id, x.day, array_agg(x.payer_id order by x.payer_id) as payer_ids
  from (select e.seller_id, e.day, e.payer_id
          from m_day_elems e
         where not exists (select 1 from m_day_d d
                            where d.seller_id = e.seller_id and d.day = e.day and d.payer_id = e.payer_id)
        union all
        select d.seller_id, (d.day_start / 86400)::int4, d.payer_id
          from m_day_delta d
         cross join lateral generate_series(1, (d.old_n + d.dn)::int4) r
         order by 1, 2, 3) x
 group by 1, 2;
drop view m_day_elems;
set local enable_nestloop = on;
set local enable_mergejoin = on;
insert into acc_day_payers as a (seller_id, day, payer_ids)
select seller_id, day, payer_ids
  from m_day_new
 order by 1, 2
    on conflict (seller_id, day) do update set payer_ids = excluded.payer_ids;
delete from acc_day_payers a
 using (select distinct seller_id, day from m_day_d) c
 where a.seller_id = c.seller_id and a.day = c.day
   and not exists (select 1 from m_day_new n where n.seller_id = c.seller_id and n.day = c.day);

-- The (seller, day) numbers by difference: payers gained and lost as for acc_payers.
insert into acc_seller_days as a (seller_id, day_start, payments, revenue, payers)
select seller_id, day_start, sum(dn), sum(dtotal),
       sum(case when old_n = 0 and old_n + dn > 0 then 1
                when old_n > 0 and old_n + dn = 0 then -1
                else 0 end)
  from m_day_delta
 group by 1, 2
    on conflict (seller_id, day_start)
    do update set payments = a.payments + excluded.payments, revenue = a.revenue + excluded.revenue,
                  payers = a.payers + excluded.payers;
delete from acc_seller_days a
 using m_changed_days d
 where not (select reset from m_acc)
   and a.seller_id = d.seller_id and a.day_start = d.day_start and a.payments = 0;

-- The sellers whose numbers change: counts and sums by difference, the payers by the payers
-- gained and lost. Its top payer's sum is the larger of the old one and its changed payers' new
-- sums unless a payer whose sum fell had the old top sum (`top_lost`): only then is it looked up
-- below, over all of the seller's payers (acc_payers has no index by sum since migration 0033:
-- 36 bytes a row, for a lookup that a steady run needs only when the top payer's payments leave).
-- A seller none of whose payments left (`leaving`: no sign -1, nothing removed or past the
-- window's start) only gained payments: its first and last payment are the earlier and the later
-- of the old ones and those that entered (one chain: time grows with the block). The others'
-- first payment is looked up below. Their last payment too only when a payment left from inside
-- the new window (`lost_inside`: a -1 after ws1, which only a removal gives, since ts0 <= ts1 and
-- b0 <= b1): a payment that left past the start is older than every payment the new window
-- holds, so the old last payment stays when it is inside the new window, and when it is not,
-- every old payment left and the entered ones' last is the last (15 minutes of the window leave
-- every run: half the lookups of the 1,000-2,000 sellers leaving a 10M-payment window each run).
create temp table m_touched on commit drop as
select k.seller_id,
       coalesce(a.payments, 0) + coalesce(d.dp, 0)                       as payments,
       coalesce(a.revenue, 0) + coalesce(d.dr, 0)                        as revenue,
       coalesce(a.payers, 0) + coalesce(p.dpayers, 0)                    as payers,
       coalesce(d.leaving, false)                                        as leaving,
       coalesce(d.lost_inside, false)                                    as lost_inside,
       greatest(coalesce(a.top_sum, 0), coalesce(p.top_in, 0))           as top_sum,
       coalesce(p.fell_from >= a.top_sum, false)                         as top_lost,
       least(a.first_ts, d.in_first_ts)                                  as first_ts,
       greatest(a.last_ts, d.in_last_ts)                                 as last_ts,
       least(a.first_block, d.in_first_block)                            as first_block,
       greatest(a.last_block, d.in_last_block)                           as last_block
  from (select seller_id from m_delta union select seller_id from m_added_sellers) k
  left join acc_sellers a using (seller_id)
  left join (select seller_id, sum(sign) as dp, sum(sign * value) as dr,
                    bool_or(sign < 0)                              as leaving,
                    bool_or(sign < 0 and block_timestamp > (select ws1 from m_acc)) as lost_inside,
                    min(block_timestamp) filter (where sign > 0)   as in_first_ts,
                    max(block_timestamp) filter (where sign > 0)   as in_last_ts,
                    min(block_number) filter (where sign > 0)      as in_first_block,
                    max(block_number) filter (where sign > 0)      as in_last_block
               from m_delta
              group by 1) d using (seller_id)
  left join (select seller_id,
                    sum(case when old_n = 0 and old_n + dn > 0 then 1
                             when old_n > 0 and old_n + dn = 0 then -1
                             else 0 end) as dpayers,
                    max(total)           as top_in,
                    max(total - dtotal) filter (where dtotal < 0) as fell_from
               from m_payer_delta
              group by 1) p using (seller_id);

analyze m_touched;

-- The lower median (the smallest value whose cumulative count reaches half the per-request
-- payments: all of them but 3.0.0's claims, the histogram's own count) moves from the old one by the
-- run's change (migration 0046): with the histogram's new count R and the new count of values below
-- the old median m0 (the stored ones plus this run's signs), it is at or above m0 when
-- 2 x below < R (the first value from m0 up whose cumulative count reaches R / 2), else below m0
-- (the first value from m0 down with 2 x its own below-count < R). Either walk reads acc_values in
-- key order from m0 and stops there: a few rows, as many as the run moves ranks at most, not the
-- seller's distinct values (192,807 for the 40% seller at 50M payments). Where the state is null
-- (after migration 0046, a seller new to the catalog; a cold run fills it) the whole histogram is summed.
-- (bitmap scans off: with one the walk read and sorted every acc_values row of the seller from m0
-- up, as the whole histogram before it; an index scan gives them in order and stops at the median)
-- A leaving seller's first payment (and, when lost_inside, its last) is looked up in its first
-- (last) UTC day that still holds a payment: acc_seller_days, moved above, holds a row for each
-- (seller, day) of the new window with payments and none for a day without, so that day is known
-- before any fact is read. The day bounds the probe's block ids: from the first block version
-- visible at s1 stamped at or after the day's start, up to (not including) the first one stamped
-- at or after the next day's start (b1 + 1 when there is none). Exact, because the block versions
-- visible at s1 are one chain whose timestamps never go down: every visible block of the day lies
-- in that range, and the scan in block order still stops at the first visible payment, which is
-- the same one. The bounds of one day are looked up once a run however many sellers have it
-- (`days`: two probes of blocks_ts a day, at most the window's 31 days). Without them the probe
-- started an index scan of transfers_to in every partition of transfers and batch_claims the
-- window spans (12-13 at 50M) for each of the 1,000-2,000 sellers leaving a run, ~1 s of a 50M
-- steady run (docs/benchmarks.md, "The steady run's fixed cost at 200k, statement by
-- statement"); with them each probe's bounds are parameters of the lateral scan, and the
-- partitions outside them are pruned at each rescan.
set local enable_bitmapscan = off;
with ends as materialized (
  select t.seller_id,
         case when t.leaving
              then (select d.day_start from acc_seller_days d
                     where d.seller_id = t.seller_id order by d.day_start limit 1) end as first_day,
         case when t.lost_inside
              then (select d.day_start from acc_seller_days d
                     where d.seller_id = t.seller_id order by d.day_start desc limit 1) end as last_day
    from m_touched t
   where t.payments > 0 and (t.leaving or t.lost_inside)),
days as materialized (
  select x.day_start,
         (select b.block_id
            from blocks b
           where b.block_timestamp >= x.day_start
             and visible_at(b.added_seq, b.removed_seq, a.s1)
           order by b.block_timestamp, b.block_id
           limit 1) as lo,
         (select b.block_id
            from blocks b
           where b.block_timestamp >= x.day_start + 86400
             and visible_at(b.added_seq, b.removed_seq, a.s1)
           order by b.block_timestamp, b.block_id
           limit 1) as hi
    from (select first_day from ends union select last_day from ends) x(day_start)
   cross join m_acc a
   where x.day_start is not null)
insert into acc_sellers as a (seller_id, payments, revenue, payers, top_sum, median,
                              first_ts, last_ts, first_block, last_block, request_payments, below_median)
select t.seller_id,
       t.payments,
       t.revenue,
       t.payers,
       case when t.top_lost
            then coalesce((select max(p.total) from acc_payers p where p.seller_id = t.seller_id), 0)
            else t.top_sum end,
       m.value,
       case when t.payments = 0 then null when t.leaving then f.block_timestamp else t.first_ts end,
       case when t.payments = 0 then null when t.lost_inside then l.block_timestamp else t.last_ts end,
       case when t.payments = 0 then null when t.leaving then f.block_number else t.first_block end,
       case when t.payments = 0 then null when t.lost_inside then l.block_number else t.last_block end,
       coalesce(o.requests, m.requests, 0),
       coalesce(m.below, 0)
  from m_touched t
 cross join m_acc w
  -- (the stored state moved by the run's signs; no row, so nulls, for a seller new to acc_sellers)
  left join (select s.seller_id, s.median as m0,
                    s.request_payments + coalesce(sum(x.sign) filter (where x.class <> 4), 0) as requests,
                    s.below_median
                      + coalesce(sum(x.sign) filter (where x.class <> 4 and x.value < s.median), 0) as below
               from acc_sellers s
               join m_delta x on x.seller_id = s.seller_id
              group by s.seller_id) o on o.seller_id = t.seller_id
  -- (three exclusive cases, each gated on the stored state: whole, up from m0, down from m0)
  left join lateral ((select h.value, h.cum - h.n as below, h.requests
                        from (select v.value, v.n, sum(v.n) over (order by v.value rows unbounded preceding) as cum,
                                     sum(v.n) over () as requests
                                from acc_values v
                               where o.requests is null and v.seller_id = t.seller_id) h
                       where 2 * h.cum >= h.requests
                       order by h.value
                       limit 1)
                     union all
                     (select h.value, h.cum - h.n, o.requests
                        from (select v.value, v.n,
                                     o.below + sum(v.n) over (order by v.value rows unbounded preceding) as cum
                                from acc_values v
                               where o.requests > 0 and 2 * o.below < o.requests
                                 and v.seller_id = t.seller_id and v.value >= coalesce(o.m0, -1)) h
                       where 2 * h.cum >= o.requests
                       order by h.value
                       limit 1)
                     union all
                     (select h.value, h.below, o.requests
                        from (select v.value,
                                     o.below - sum(v.n) over (order by v.value desc rows unbounded preceding) as below
                                from acc_values v
                               where o.requests > 0 and 2 * o.below >= o.requests
                                 and v.seller_id = t.seller_id and v.value < o.m0) h
                       where 2 * h.below < o.requests
                       order by h.value desc
                       limit 1)) m on true
  -- (a leaving seller's first and last payment: by its id and a block-id range, so the
  -- index transfers_to (to_id, block_id) gives them in chain order and the scan stops at the
  -- first visible one; block_id = block_number * 2^20 + version, migration 0023. The range is the
  -- window's cut to the day's (`days` above; greatest and least pass over a null). The conditions
  -- on t inside, not in `on`: a gate, so the other sellers probe no partition: in `on` the
  -- lookups ran for every touched seller, then were filtered, 0.3 of 1.4 s at 1M payments)
  left join ends e on e.seller_id = t.seller_id
  left join days fd on fd.day_start = e.first_day
  left join days ld on ld.day_start = e.last_day
  left join lateral (select x.block_timestamp, x.block_number
                       from m_payment_facts x
                      where x.seller_id = t.seller_id
                        and x.block_id >= greatest((select lo_block from m_bounds) * 1048576, fd.lo)
                        and x.block_id < least((select b1 + 1 from m_acc) * 1048576, fd.hi)
                        and x.block_timestamp > (select ws1 from m_acc)
                        and visible_at(x.added_seq, x.removed_seq, w.s1)
                        and t.payments > 0 and t.leaving
                      order by x.block_id
                      limit 1) f on true
  left join lateral (select x.block_timestamp, x.block_number
                       from m_payment_facts x
                      where x.seller_id = t.seller_id
                        and x.block_id >= greatest((select lo_block from m_bounds) * 1048576, ld.lo)
                        and x.block_id < least((select b1 + 1 from m_acc) * 1048576, ld.hi)
                        and x.block_timestamp > (select ws1 from m_acc)
                        and visible_at(x.added_seq, x.removed_seq, w.s1)
                        and t.payments > 0 and t.lost_inside
                      order by x.block_id desc
                      limit 1) l on true
    on conflict (seller_id) do update
   set payments = excluded.payments, revenue = excluded.revenue, payers = excluded.payers,
       top_sum = excluded.top_sum, median = excluded.median, first_ts = excluded.first_ts,
       last_ts = excluded.last_ts, first_block = excluded.first_block, last_block = excluded.last_block,
       request_payments = excluded.request_payments, below_median = excluded.below_median;
set local enable_bitmapscan = on;

delete from acc_values where seller_id in (select seller_id from m_removed_sellers);
delete from acc_payers where seller_id in (select seller_id from m_removed_sellers);
delete from acc_day_payers where seller_id in (select seller_id from m_removed_sellers);
delete from acc_seller_days where seller_id in (select seller_id from m_removed_sellers);
delete from acc_sellers where seller_id in (select seller_id from m_removed_sellers);

set local enable_nestloop = off;

delete from acc_state;
insert into acc_state (checked_seq, window_start_ts, as_of_ts, as_of_block, payment_set)
select s1, ws1, ts1, b1, (select payment_set from m_gen) from m_acc;

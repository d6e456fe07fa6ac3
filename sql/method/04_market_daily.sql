-- Method step 4 (every version): the daily market aggregate, one row per publishable UTC day.
-- A day D is publishable when it ended at or before the as-of time (D_start + 86400 <= as_of_ts),
-- starts no earlier than the UTC day holding the window start (market_from_ts), and every seller
-- of the catalog is indexed from D_start (seller_coverage.from_ts <= D_start) up to the as-of
-- block. Days with no payment are rows of zeros.
--
-- A publishable day has ended, so its numbers change only when its facts change or the catalog's
-- sellers do: each is computed once into acc_market_days (migration 0016) and read from there by
-- later runs. The cache is emptied when the sellers change or the facts go back (a run at an
-- older seq) or the payments are another version's, and a day is dropped from it when a fact of
-- that day was added or removed since.
-- Under 3.0.0 the day's payments are of every class; its median is over the per-request ones
-- (classes 1-3, null when none), and external_volume_micro sums the external ones (reason 0);
-- the sellers_key then also holds the catalog's same_operator pairs (sql/method/3.0.0/01_payments.sql).
--
-- The days not yet published are built as the window moves (acc_market_open, migration 0048), so
-- that the first run after UTC midnight reads the day that just ended from there, not from the
-- facts (issue 21: 5-6 s of the 11-12 s after-midnight run at 10M payments); see "The open days"
-- below.

create temp table m_mkt on commit drop as
select x.*,
       s.checked_seq is null
         or s.checked_seq > (select run_seq from m_gen)
         or s.sellers_key <> x.sellers_key
         or s.payment_set <> (select payment_set from m_gen)         as reset,
       coalesce(s.checked_seq, 0)                                    as checked_seq
  from m_sellers_key x
  left join acc_market_state s on true;

delete from acc_market_days where (select reset from m_mkt);

-- The block versions added or removed since (the seqs are the versions'), found by the seq
-- indexes on blocks and counted first (none when the cache was just emptied). In one statement the
-- planner expected thousands of them behind the `or` and, with nested loops off, hashed every
-- transfer of the window to test which of them hold one (issue 21: 0.9 s of a steady run at 1M
-- payments, 8 s at 10M, once the facts were partitioned); the window step finds its changed
-- versions the same way (m_delta_blocks, 01a_window.sql).
create temp table m_mkt_changed_blocks on commit drop as
select b.block_id, b.block_timestamp - b.block_timestamp % 86400 as day_start
  from blocks b
 where not (select reset from m_mkt)
   and ((b.added_seq > (select checked_seq from m_mkt) and b.added_seq <= (select run_seq from m_gen))
        or (b.removed_seq > (select checked_seq from m_mkt) and b.removed_seq <= (select run_seq from m_gen)));

analyze m_mkt_changed_blocks;

-- A cached day is dropped when one of those versions lies in it and holds a fact (a transfer, or under 3.0.0 a claim: m_fact_rows): a version
-- of a cached day (few, usually none: a steady run's new blocks are in today, not yet a publishable
-- day) is probed by primary key, in its one partition.
set local enable_nestloop = on;
delete from acc_market_days a
 where exists (select 1
                 from m_mkt_changed_blocks b
                where b.day_start = a.day_start
                  and exists (select 1 from m_fact_rows t where t.block_id = b.block_id));
set local enable_nestloop = off;

-- The open days (migration 0048): acc_market_open holds, for every day from open_from_ts on, the
-- histogram of the window's payments in it (per value and per request or not, with its external
-- ones), exact for the window step 1a's accumulators were exact for before this run. It moves
-- with them: by m_delta, step 1a's signed changes (payments that entered or left the window, facts
-- added or removed, under 3.0.0 each with the class and reason it was counted with, which stay
-- while the payment is visible: docs/METHOD.md 2.11.7). Only days wholly inside the window are
-- kept (from the first day starting after the window's start), so a payment leaving the window
-- never moves one. The table is exact from `from_ts` on after this run when:
--   - step 1a's run is cold (m_acc.reset): filled from m_window, from the as-of's day on;
--   - the market cache is kept (no reset above), the table was moved by the last run (its seq is
--     step 1a's s0) and it has a first day: moved by m_delta, from the later of that day and the
--     window's first whole day;
--   - else (the sellers or their same_operator pairs changed, the state is missing or another's,
--     `fill`): emptied and filled with the as-of's day from the facts (that day's payments only,
--     as step 1a's accumulators hold them after this run: visible at run_seq, up to the as-of
--     block and time, paid to a seller of this catalog, each with its class and reason as
--     m_payment_facts gives them now), exact from that day on. So no day that ends later is read
--     from the facts: only the ended days before it, which a reset recomputes anyway (the cache
--     above was emptied). (Before, the table restarted at the day after the as-of's, and the first
--     midnight after a reset read the whole ended day from the facts: 8.2 s of a run at 10M.)
--     The as-of's day must lie wholly inside the window (it always does: the window is 30 days);
--     if not, the table starts a day later, as when it is kept.
create temp table m_mkt_open on commit drop as
select case
         when a.reset then a.ts1 - a.ts1 % 86400
         when k.kept then greatest(s.open_from_ts, a.ws1 - a.ws1 % 86400 + 86400)
         else greatest(a.ts1 - a.ts1 % 86400, a.ws1 - a.ws1 % 86400 + 86400)
       end as from_ts,
       k.kept,
       not a.reset and not k.kept as fill
  from m_acc a
 cross join m_mkt x
  left join acc_market_state s on true
 cross join lateral (select not a.reset and not x.reset and s.open_from_ts is not null
                            and s.checked_seq = a.s0 as kept) k;

-- A fill's bounds (none in most runs: `fill` is false, and the read below reads no fact): the
-- as-of's day from from_ts, and the block-id range of the block versions in it (by the time index,
-- as m_mkt_bounds below), so that the facts are read by an index range of each fact table.
-- (no row when the day holds no block version, or from_ts is after the as-of)
create temp table m_mkt_fill_bounds on commit drop as
select o.from_ts, a.ts1 as to_ts, b.min_block_id, b.max_block_id
  from m_mkt_open o
 cross join m_acc a
 cross join lateral (select min(x.block_id + 0) as min_block_id, max(x.block_id + 0) as max_block_id
                       from blocks x
                      where x.block_timestamp >= o.from_ts and x.block_timestamp <= a.ts1) b
 where o.fill
   and b.min_block_id is not null;

delete from acc_market_open
 where not (select kept from m_mkt_open)
    or day_start < (select from_ts from m_mkt_open);

insert into acc_market_open as o (day_start, value, per_request, n, n_external)
select day_start, value, per_request, sum(n), sum(n_external)
  from (select d.block_timestamp - d.block_timestamp % 86400 as day_start, d.value, d.class <> 4 as per_request,
               d.sign as n, case when d.reason = 0 then d.sign else 0 end as n_external
          from m_delta d
         where (select kept from m_mkt_open)
           and d.block_timestamp >= (select from_ts from m_mkt_open)
        union all
        select w.block_timestamp - w.block_timestamp % 86400, w.value::numeric, w.class <> 4,
               1, case when w.reason = 0 then 1 else 0 end
          from m_window w
         where (select reset from m_acc)
           and w.block_timestamp >= (select from_ts from m_mkt_open)
        union all
        -- (a fill: the as-of's day from the facts; no row of m_mkt_fill_bounds, no fact read)
        select t.block_timestamp - t.block_timestamp % 86400, t.value, t.class <> 4,
               1, case when t.reason = 0 then 1 else 0 end
          from m_payment_facts t
          join m_catalog_sellers c on c.seller_id = t.seller_id
         cross join m_gen g   -- (run_seq as a column: visible_at is inlined)
         where exists (select 1 from m_mkt_fill_bounds)
           and t.block_timestamp >= (select from_ts from m_mkt_fill_bounds)
           and t.block_timestamp <= (select to_ts from m_mkt_fill_bounds)
           and t.block_id >= (select min_block_id from m_mkt_fill_bounds)
           and t.block_id <= (select max_block_id from m_mkt_fill_bounds)
           and t.block_number <= g.as_of_block
           and visible_at(t.added_seq, t.removed_seq, g.run_seq)) x
 group by 1, 2, 3
having sum(n) <> 0 or sum(n_external) <> 0
 order by 1, 2, 3
    on conflict (day_start, value, per_request)
    do update set n = o.n + excluded.n, n_external = o.n_external + excluded.n_external;
-- (a few thousand rows a day, one or two days)
delete from acc_market_open where n = 0;

create temp table m_market_days on commit drop as
with coverage as materialized (
  -- the latest start among the sellers' coverage; null when some seller is not covered up to
  -- the as-of block (then no day is publishable). (Materialized: inlined, it was computed twice,
  -- once per use below, each a join of the catalog's sellers to their coverage.)
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
)
select d.day_start
  from m_gen g
 cross join coverage
 cross join lateral generate_series(g.market_from_ts, g.as_of_ts - 86400, 86400::bigint) as d(day_start)
 where coverage.covered_from_ts is not null
   and d.day_start >= coverage.covered_from_ts;

-- The publishable days not in the cache, from the facts (the whole day: it has ended): their
-- payments, as a view this step reads.
-- (a day cached without its payer and seller sets, set_id null, by a run before the summary step
-- existed, is computed again with them)
delete from acc_market_days where set_id is null or payer_ids is null or seller_ids is null;
-- (`open`: the day is read from acc_market_open, its sets from acc_day_payers, not from the facts)
create temp table m_mkt_todo on commit drop as
select day_start, day_start >= (select from_ts from m_mkt_open) as open
  from m_market_days
 where day_start not in (select day_start from acc_market_days);

-- In a steady run they come from the facts (m_mkt_payments, below). In a cold run (step 1a's
-- reset) from what step 1a read and grouped for the whole run (m_window and m_cold_head, the
-- market's first day before the window: every payment of the catalog's sellers visible at run_seq
-- up to the as-of block, from market_from_ts on, which holds every publishable day): reading the
-- facts again cost as much as the window's read (at 3M payments, 186.5 s of a 457.6 s cold run
-- under 3.0.0: one seller_funded probe per payment). (Each branch below is gated by a one-time
-- filter on `reset`, so only the cold ones or the steady ones are read; both give the same rows
-- for the same days: test/method/cold.test.ts.)
-- The days' bounds, read once: their time range and the block-id range of the block versions in
-- it (by the time index; `block_id + 0`: min(block_id) walked the primary key from the window's
-- first block, 3.3 s at 4M). Null when no day is to be computed (most steady runs), and then the
-- view below reads no fact. (Two subqueries of the view read the days' blocks once each before.)
create temp table m_mkt_bounds on commit drop as
select r.from_ts, r.to_ts, b.min_block_id, b.max_block_id
  from (select min(day_start) as from_ts, max(day_start) + 86400 as to_ts from m_mkt_todo where not open) r
 cross join lateral (select min(x.block_id + 0) as min_block_id, max(x.block_id + 0) as max_block_id
                       from blocks x
                      where x.block_timestamp >= r.from_ts and x.block_timestamp < r.to_ts) b;

create or replace temp view m_mkt_payments as
select t.block_timestamp - t.block_timestamp % 86400 as day_start, t.payer_id,
       t.seller_id, t.value, t.class, t.reason
  from m_payment_facts t
  join m_catalog_sellers c on c.seller_id = t.seller_id  -- (address ids: migration 0028)
 cross join m_gen g   -- (run_seq as a column: visible_at is inlined, see 01_payments.sql)
 where not (select reset from m_acc)
   -- (no day to compute, as in most steady runs: a one-time filter, so no statement reading this
   -- view reads a fact; without it a plan grouping the view scanned them, ~2 s a run at 1M)
   and (select count(*) from m_mkt_todo where not open) > 0
   and t.block_timestamp >= (select from_ts from m_mkt_bounds)
   and t.block_timestamp < (select to_ts from m_mkt_bounds)
   -- (the days' payments lie in the block-id range of the block versions in them: an index
   -- range of each fact table. Without it the planner hashed every payment of the window to
   -- join the days' blocks: 1.1M rows read for 33k at 1M payments)
   and t.block_id >= (select min_block_id from m_mkt_bounds)
   and t.block_id <= (select max_block_id from m_mkt_bounds)
   and t.block_number <= (select as_of_block from m_gen)
   and visible_at(t.added_seq, t.removed_seq, g.run_seq);

-- Each day's distinct payers and sellers paid, as ascending arrays of address ids kept in the
-- day's row (migration 0045): the day's counts are their lengths, and step 4b counts a period's
-- distinct payers and sellers from them (docs/METHOD.md 2.12.2). In a steady run from the day's
-- payments (none, usually: no day is computed). In a cold run from what step 1a has already
-- grouped: the payers from its (seller, day, payer) groups (m_window_day_payers), the sellers from
-- acc_seller_days; the market's first day also has the payments before the window (m_cold_head).
-- The (day, id) pairs are made distinct by hashing (at 10M payments ~3M pairs out of ~9M groups),
-- and only they are sorted, by the arrays' aggregates.
-- An open day's (in a steady run: the day that just ended) are its sellers' arrays of
-- acc_day_payers (migration 0050: a (seller, day)'s payers, each once per payment), which step 1a
-- keeps exact for the window (the day lies wholly in it), probed by that key for each seller whose
-- window payments span the day (acc_sellers' first and last: 6,870 of 43,788 sellers at 1M
-- payments) and unnested: a seller with a row was paid that day (its array is never empty), and
-- the day's payers are made distinct below. (Nested loops only: with hash joins the planner read
-- every row of acc_day_payers, 918k at 1M payments before migration 0050, for the day's 30k: 0.36 s
-- against 0.05-0.10 s.)
set local enable_nestloop = on;
set local enable_hashjoin = off;
set local enable_mergejoin = off;
create temp table m_mkt_open_pairs on commit drop as
select d.day_start, unnest(p.payer_ids) as payer_id, p.seller_id
  from m_mkt_todo d
  join acc_sellers s on s.first_ts < d.day_start + 86400 and s.last_ts >= d.day_start
  join acc_day_payers p on p.seller_id = s.seller_id and p.day = (d.day_start / 86400)::int4
 where d.open
   and exists (select 1 from m_mkt_todo where open);   -- (a one-time filter: most runs have no day)
set local enable_nestloop = off;
set local enable_hashjoin = on;
set local enable_mergejoin = on;

create temp table m_mkt_sets on commit drop as
with payers as (
  select day_start, payer_id as id
    from m_mkt_payments
  union all
  select day_start, payer_id
    from m_mkt_open_pairs
  union all
  select d.day::int8 * 86400, d.payer_id
    from m_window_day_payers d
   where (select reset from m_acc)
  union all
  select h.block_timestamp - h.block_timestamp % 86400, h.payer_id
    from m_cold_head h
   where (select reset from m_acc)),
sellers as (
  select day_start, seller_id as id
    from m_mkt_payments
  union all
  select day_start, seller_id
    from m_mkt_open_pairs
  union all
  select a.day_start, a.seller_id
    from acc_seller_days a
   where (select reset from m_acc)
  union all
  select h.block_timestamp - h.block_timestamp % 86400, h.seller_id
    from m_cold_head h
   where (select reset from m_acc))
select d.day_start,
       coalesce(p.ids, '{}') as payer_ids,
       coalesce(s.ids, '{}') as seller_ids
  from m_mkt_todo d
  left join (select day_start, array_agg(id order by id) as ids
               from (select distinct day_start, id from payers
                      where day_start in (select day_start from m_mkt_todo)) x
              group by day_start) p using (day_start)
  left join (select day_start, array_agg(id order by id) as ids
               from (select distinct day_start, id from sellers
                      where day_start in (select day_start from m_mkt_todo)) x
              group by day_start) s using (day_start);

-- The days' histograms: payments per (day, value, per request or not), and how many of them are
-- external (reason 0); a few thousand rows a day. A steady run's from the facts; a cold run's from
-- step 1a's read, grouped by its `bigint` value (by `numeric`, as the facts' view gives it, took
-- about twice as long) and by hashing (the planner, not knowing how few groups there are, sorted
-- every payment by its value: sort off for that statement). The days between the first and the
-- last to compute that are cached are grouped too, and left unread.
create temp table m_mkt_hist on commit drop as
select day_start, value::numeric as value, class <> 4 as per_request, count(*) as n,
       count(*) filter (where reason = 0) as n_external
  from m_mkt_payments
 group by 1, 2, 3;
set local enable_sort = off;
insert into m_mkt_hist (day_start, value, per_request, n, n_external)
select c.day_start, c.value::numeric, c.per_request, c.n, c.n_external
  from (select t.block_timestamp - t.block_timestamp % 86400 as day_start, t.value, t.class <> 4 as per_request,
               count(*) as n, count(*) filter (where t.reason = 0) as n_external
          from (select block_timestamp, value, class, reason from m_window
                union all  -- the market's first day before the window, moved out of m_window (01a)
                select block_timestamp, value, class, reason from m_cold_head) t
         where (select reset from m_acc)
           and t.block_timestamp >= (select min(day_start) from m_mkt_todo where not open)
           and t.block_timestamp < (select max(day_start) + 86400 from m_mkt_todo where not open)
         group by 1, 2, 3) c;
set local enable_sort = on;
-- The open days' histograms, kept (above).
insert into m_mkt_hist (day_start, value, per_request, n, n_external)
select o.day_start, o.value, o.per_request, o.n, o.n_external
  from acc_market_open o
 where o.day_start in (select day_start from m_mkt_todo where open);
drop view m_mkt_payments;

-- The day's numbers: payments, volume and (3.x) external volume summed, and the median over the
-- per-request payments (every class but 4, a batch claim; null when none): the smallest value
-- whose running count reaches half of them, as percentile_disc(0.5) gives it. The set number
-- (set_id) tells step 4b which periods hold a day built since its last run.
insert into acc_market_days (day_start, payments, volume_micro, payers, sellers_paid, median_micro, external_volume,
                             payer_ids, seller_ids, set_id)
select d.day_start,
       coalesce(n.payments, 0)::int,
       coalesce(n.volume, 0),
       cardinality(d.payer_ids),
       cardinality(d.seller_ids),
       n.median,
       case when (select payment_set from m_gen) = 'all_classes' then coalesce(n.external, 0) end,
       d.payer_ids,
       d.seller_ids,
       nextval('acc_market_set_ids')
  from m_mkt_sets d
  left join (select day_start,
                    sum(n)                                                         as payments,
                    sum(value * n)                                                 as volume,
                    sum(value * n_external)                                        as external,
                    min(value) filter (where per_request and 2 * cum >= requests)  as median
               from (select h.*,
                            sum(n) filter (where per_request) over (partition by day_start order by value) as cum,
                            sum(n) filter (where per_request) over (partition by day_start)                as requests
                       from m_mkt_hist h) c
              group by day_start) n using (day_start)
 order by d.day_start;

-- The open days are those after the last publishable one: a published day is cached above (and
-- computed from the facts again if its facts change), so the open table drops it.
delete from acc_market_state;
insert into acc_market_state (checked_seq, sellers_key, payment_set, open_from_ts)
select (select run_seq from m_gen), sellers_key, (select payment_set from m_gen),
       greatest((select from_ts from m_mkt_open), (select max(day_start) + 86400 from m_market_days))
  from m_mkt;
delete from acc_market_open where day_start < (select open_from_ts from acc_market_state);

insert into gen_market_daily (
  generation, day, payments, volume_micro, payers, sellers_paid, median_payment_micro,
  tracked_sellers, tracked_listings, external_volume_micro)
select (select generation from m_gen),
       (to_timestamp(d.day_start) at time zone 'UTC')::date,
       m.payments,
       m.volume_micro,
       m.payers,
       m.sellers_paid,
       m.median_micro,
       t.sellers,
       t.listings,
       m.external_volume
  from m_market_days d
  join acc_market_days m using (day_start)
 cross join (select count(*)::int as sellers, coalesce(sum(listing_count), 0)::int as listings
               from m_catalog_sellers) t;

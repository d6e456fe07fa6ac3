-- Methods 2.0.0 and 3.0.0, digests: composed of per-period digests (docs/METHOD.md, section 2.9).
-- (1.0.0 replaces this step by its flat digests, sql/method/1.0.0/01b_digests.sql.)
-- A period is digest_period_seconds long and starts at a multiple of it (unix seconds, UTC):
-- period_start = block_timestamp - block_timestamp % digest_period_seconds. The window's first
-- and last periods are partial: only the window's own payments count in them.
-- Period digest = sha256 of the period's evidence lines `tx_hash:log_index:from:to:value\n`
-- (3.0.0: `class:tx_hash:log_index:from:to:value\n`, the prefix m_payment_facts gives), in byte order. Evidence digest (per seller, and of the generation over all sellers) = sha256
-- of one line `period_start:payments:period_digest\n` per period with >= 1 payment, in period
-- order; the sha256 of the empty text when there are none. No value ever holds more than one
-- period's lines (string_agg runs per period), so no window is too large to publish.
--
-- Incremental (docs/METHOD.md 2.10): the digests of closed periods [w1, w2) (wholly inside the
-- window, ended by the as-of time) come from the derived tables part_* (migration 0007) when
-- their facts did not change since part_state.checked_seq; the rest (new periods, periods whose
-- facts changed, new sellers, the two edge periods) is computed from m_payments, i.e. the facts.
-- Partial rows are versioned by generation (gen_from, gen_to): a row is never changed, only
-- closed (gen_to = this generation) and replaced, so earlier generations keep their periods.
-- A cold run (a reset, below) closes every live partial and builds all of them, and every
-- seller's kept lines, in bulk from one grouping of the window's payments ("Cold" below); the
-- statements that move the partials of a steady run then find nothing to do.
-- The work state (part_sellers, part_seller_lines, part_seller_digests) names a seller by its
-- address id (seller_id, migration 0028), and so do the versioned part_seller_hours (migration
-- 0033), whose sha256 is its 32 bytes (part_hours' too): the views gen_seller_periods and
-- gen_periods give the text back.

-- One run at a time maintains the partials (a concurrent compute waits here).
lock table part_state in exclusive mode;

create temp table m_part on commit drop as
select x.*, greatest(x.w1, x.as_of_ts - x.as_of_ts % x.p) as w2
  from (select g.generation,
               g.run_seq,
               g.as_of_ts,
               g.digest_period_seconds                                          as p,
               -- the first period starting after the (excluded) window start
               g.window_start_ts - g.window_start_ts % g.digest_period_seconds
                 + g.digest_period_seconds                                      as w1,
               (select sellers_key from m_sellers_key)                          as sellers_key
          from m_gen g) x;

-- (one row, joined below to pass run_seq to visible_at as a column, migration 0023: analyzed so
-- the planner knows it is one)
analyze m_part;

-- The partials are reusable unless there are none, they were built for another period length,
-- or they reflect facts newer than this run's (a compute at an older seq), or another version's
-- payments (their lines differ): then start empty.
-- When step 1a is cold too (its reset), the window's payments are already read, by ids, into
-- m_window (01a_window.sql: the same rows, visible at run_seq up to the as-of block, of the
-- catalog's sellers): the digests are then grouped from them (`from_window`, "Cold" below) rather
-- than read from the facts a second time with their texts.
create temp table m_part_old on commit drop as
select x.*, x.reset and (select reset from m_acc) as from_window
  from (select coalesce(max(s.checked_seq), (select run_seq from m_part))     as checked_seq,
               coalesce(max(s.lo), 0)                                          as lo,
               coalesce(max(s.hi), 0)                                          as hi,
               max(s.sellers_key)                                              as sellers_key,
               -- what part_edge_lines holds (migration 0044; null: nothing)
               max(s.edge_window_start_ts)                                     as edge_ws,
               max(s.edge_as_of_block)                                         as edge_ab,
               max(s.edge_as_of_ts)                                            as edge_ats,
               count(*) = 0
                 or max(s.period_seconds) <> (select p from m_part)
                 or max(s.checked_seq) > (select run_seq from m_part)
                 or max(s.payment_set) <> (select payment_set from m_gen)      as reset
          from part_state s) x;

update part_seller_hours set gen_to = (select generation from m_part)
 where gen_to is null and (select reset from m_part_old);
update part_hours set gen_to = (select generation from m_part)
 where gen_to is null and (select reset from m_part_old);
-- (the work state, not versioned rows: emptied by truncate, which at 10M payments is a gigabyte
-- less to delete row by row; only this step, which holds part_state's lock, reads them. One line
-- for bench/method.ts SPLIT_STEPS, as in 01a_window.sql.)
do $$ begin if (select reset from m_part_old) then truncate part_sellers, part_seller_digests, part_seller_lines, part_edge_lines; end if; end $$;
update m_part_old set checked_seq = (select run_seq from m_part), lo = 0, hi = 0, sellers_key = null where reset;

-- (seller, period) whose facts changed since the partials were checked: added or removed by a
-- later run (new blocks, backfill of a seller's coverage, reorg): the facts of m_fact_rows.
-- (block versions by their seq indexes, counted first, then their facts by primary key: in
-- one statement the planner expected thousands of versions and, nested loops being off, hashed
-- every transfer of the table; issue 21: 0.3 s of a steady run at 1M payments, seconds at 10M)
create temp table m_changed_blocks on commit drop as
select b.block_id, b.block_timestamp, b.block_id >> 20 as block_number
  from blocks b
 where b.added_seq > (select checked_seq from m_part_old)
   and b.added_seq <= (select run_seq from m_part)
union
select b.block_id, b.block_timestamp, b.block_id >> 20 as block_number
  from blocks b
 where b.removed_seq > (select checked_seq from m_part_old)
   and b.removed_seq <= (select run_seq from m_part);

analyze m_changed_blocks;

set local enable_nestloop = on;
-- (`kept`: a changed block at or below the as-of block of part_edge_lines, whose payments it
-- may hold; the blocks after it are new to it, read below by their ids)
create temp table m_changed on commit drop as
select t.to_id                                                         as seller_id,
       b.block_timestamp - b.block_timestamp % (select p from m_part)  as period_start,
       coalesce(bool_or(b.block_number <= (select edge_ab from m_part_old)), false) as kept
  from m_changed_blocks b
  join m_fact_rows t on t.block_id = b.block_id
 group by 1, 2;
set local enable_nestloop = off;

analyze m_changed;

-- The sellers new to the partials (all of them after a reset) and those gone from the catalog.
-- A catalog seller without an address id has no payment and no partials: it is in neither.
create temp table m_build_sellers on commit drop as
select c.seller_id
  from m_catalog_sellers c
 where c.seller_id is not null
   and not exists (select 1 from part_sellers p where p.seller_id = c.seller_id);

create temp table m_gone_sellers on commit drop as
select p.seller_id
  from part_sellers p
 where not exists (select 1 from m_catalog_sellers c where c.seller_id = p.seller_id);

-- (none, or a few, in a steady run: the planner must know, or it hashes every transfer of the
-- window to join the new sellers' payments below instead of looking them up by seller_id)
analyze m_build_sellers;
analyze m_gone_sellers;

-- The changed (seller, period) pairs of catalog sellers.
create temp table m_changed_ids on commit drop as
select c.seller_id, m.period_start
  from m_changed m
  join m_catalog_sellers c using (seller_id);

-- The closed hours whose global digest changes: those with changed facts, and those where a
-- seller new to the catalog or gone from it has payments (a global hour covers every seller of
-- the catalog). After a reset every hour is rebuilt anyway.
-- (the new sellers' payments by seller and their block versions by primary key first, the
-- window's bounds after: as conditions of that join, bounds known only at run time made the
-- planner guess a few dozen blocks in the window and hash all of them, 0.35 s of a steady run
-- at 1M payments; issue 21, as for m_delta in 01a_window.sql)
set local enable_nestloop = on;
create temp table m_changed_hours on commit drop as
with built as materialized (
  select t.block_timestamp, t.block_number, t.added_seq, t.removed_seq
    from m_build_sellers b
    join m_payment_facts t on t.seller_id = b.seller_id
   where not (select reset from m_part_old))
select period_start from m_changed
union
select h.hour_start
  from part_seller_hours h
 where h.gen_to is null
   and h.seller_id in (select seller_id from m_gone_sellers)
union
select t.block_timestamp - t.block_timestamp % (select p from m_part)
  from built t
 cross join m_part mp
 where t.block_timestamp >= (select w1 from m_part)
   and t.block_timestamp < (select w2 from m_part)
   and t.block_number <= (select as_of_block from m_gen)
   and visible_at(t.added_seq, t.removed_seq, mp.run_seq);

analyze m_changed_hours;

-- Close what changed, what left the closed range, and the sellers gone from the catalog: their
-- facts are no longer indexed, so their partials could not be kept exact.
-- (few changed periods: look each up by the primary key rather than hash all the partials)
-- (m_period_changes collects the live partials closed and built by this run: their sellers'
-- lines (part_seller_lines) change and their evidence digests are composed again below; every
-- other seller's digest is the one part_seller_digests kept)
-- (the live hours of the sellers gone from the catalog are closed first and not collected: every
-- other live hour is of a seller of part_sellers, so of the catalog)
create temp table m_period_changes (
  seller_id       int4,
  hour_start      bigint,
  payments        integer,
  sha256          bytea,
  built           boolean
) on commit drop;
update part_seller_hours h
   set gen_to = (select generation from m_part)
  from m_gone_sellers s
 where h.gen_to is null and h.seller_id = s.seller_id;
with closed as (
  update part_seller_hours h
     set gen_to = (select generation from m_part)
    from m_changed_ids c
   where h.gen_to is null and h.seller_id = c.seller_id and h.hour_start = c.period_start
     -- live partials exist only in [lo, hi): new payments of the open hour need no lookup
     and c.period_start >= (select lo from m_part_old) and c.period_start < (select hi from m_part_old)
  returning h.seller_id, h.hour_start, h.payments, h.sha256)
insert into m_period_changes
select seller_id, hour_start, payments, sha256, false
  from closed;
-- (live partials lie in the old range [lo, hi), so those that left the new one lie in [lo, w1)
-- or [w2, hi): two narrow index ranges. An `or` of the two open ranges made Postgres scan every
-- partial of the window: 0.4-0.6 s a run at 10M payments.)
with closed as (
  update part_seller_hours
     set gen_to = (select generation from m_part)
   where gen_to is null
     and hour_start >= (select lo from m_part_old) and hour_start < (select w1 from m_part)
  returning seller_id, hour_start, payments, sha256)
insert into m_period_changes
select seller_id, hour_start, payments, sha256, false
  from closed;
with closed as (
  update part_seller_hours
     set gen_to = (select generation from m_part)
   where gen_to is null
     and hour_start >= (select w2 from m_part) and hour_start < (select hi from m_part_old)
  returning seller_id, hour_start, payments, sha256)
insert into m_period_changes
select seller_id, hour_start, payments, sha256, false
  from closed;
delete from part_sellers
 where seller_id in (select seller_id from m_gone_sellers);
update part_hours
   set gen_to = (select generation from m_part)
 where gen_to is null
   and (hour_start < (select w1 from m_part)
        or hour_start >= (select w2 from m_part)
        or hour_start in (select period_start from m_changed_hours));

-- The time ranges the reads below are cut at: a payment of a closed hour in [a, b) is read only if
-- its hour changed.
create temp table m_read on commit drop as
select greatest(w1, lo) as a, least(w2, hi) as b
  from m_part cross join m_part_old;

-- The edge lines kept (part_edge_lines, migration 0044): the line of every payment in the window
-- with a time in its *reach*, (window start, window start + period] (the first edge period lies
-- in it, whichever hour that is) or at or after `bk`, as of this run's as-of point and seq. `bk`
-- is the old range's end (hi) when the kept lines can be moved to this run: then the rows of the
-- hours that closed since, [hi, w2), are kept lines too, read once more below and then dropped,
-- and the reach's new parts are all that is read from the facts (`front_lo`: the front's minutes
-- past the old reach's; the end's blocks after the old as-of block). They cannot be moved after
-- a reset, when nothing is kept (null), or when the window or the as-of point went back, or
-- jumped so far that the new front reaches the old end: then they are dropped, and the whole
-- reach (`bk` = w2) read again.
create temp table m_edge on commit drop as
select x.*,
       least(x.ws + x.p, x.bk - 1)                                               as front_hi,
       case when x.valid then greatest(x.edge_ws + x.p, x.ws) else x.ws end      as front_lo
  from (select v.*, case when v.valid then v.hi else v.w2 end as bk
          from (select g.window_start_ts as ws, mp.p, mp.w2, g.as_of_ts as ats, g.as_of_block as ab,
                       o.hi, o.edge_ws, o.edge_ab, o.edge_ats,
                       coalesce(not o.reset and g.window_start_ts >= o.edge_ws and g.as_of_block >= o.edge_ab
                                and g.as_of_ts >= o.edge_ats and g.window_start_ts + mp.p < o.hi, false) as valid
                  from m_gen g cross join m_part mp cross join m_part_old o) v) x;
analyze m_edge;

-- The (seller, period) of the reach whose facts changed at or below the old as-of block, and the
-- range of block versions of each period: their kept lines are dropped and read again.
create temp table m_edge_stale on commit drop as
select c.seller_id, c.period_start,
       (select min(b.block_id + 0) from blocks b
         where b.block_timestamp >= c.period_start and b.block_timestamp < c.period_start + e.p) as lo_id,
       (select max(b.block_id + 0) from blocks b
         where b.block_timestamp >= c.period_start and b.block_timestamp < c.period_start + e.p) as hi_id
  from m_changed c
 cross join m_edge e
 where e.valid and c.kept
   and ((c.period_start <= e.front_hi and c.period_start + e.p > e.ws) or c.period_start + e.p > e.bk)
   and c.seller_id in (select seller_id from m_catalog_sellers)
   and c.seller_id not in (select seller_id from m_build_sellers);
analyze m_edge_stale;

delete from part_edge_lines l
 using m_edge e
 where not e.valid
    or l.block_timestamp <= e.ws
    or l.seller_id in (select seller_id from m_gone_sellers)
    or (l.seller_id, l.block_timestamp - l.block_timestamp % e.p) in (select seller_id, period_start from m_edge_stale);

-- The range of block versions (block_id) holding each time range read below, from the time index
-- (`block_id + 0`: the smallest id of the range, not the first in id order, which would walk the
-- primary key from the chain's start). The payments of a time range lie in the block range of
-- the versions in it, whichever are visible. Read by that range, the facts are an index range of
-- each fact table whatever the planner expects of the join: under 3.0.0 the payments are a union
-- of two fact tables, whose block_id has no statistics, and the planner took the join with the
-- edge's few hundred blocks for the whole union and hashed every payment of the window (0.4-0.8 s
-- of a 3.0.0 steady run at 200k payments; issue 22). Steady runs: (1) the front of (window start,
-- a) past the reach (none but after the window went back), (2) [max(a, b), bk) (the hours that
-- closed, when the kept lines were dropped); for the reach: (f) its front's new part, (ff) all
-- of its front, (k) the end's new blocks (block_id = block_number * 2^20 + version: the ids past
-- the old as-of block's) or all of it, (kf) all of it, (k2) blocks at or below the old as-of
-- block but later than its time (none when the as-of time is the as-of block's).
create temp table m_read_ids on commit drop as
select (select min(b.block_id + 0) from blocks b
         where b.block_timestamp > e.front_hi and b.block_timestamp < r.a)              as lo1,
       (select max(b.block_id + 0) from blocks b
         where b.block_timestamp > e.front_hi and b.block_timestamp < r.a)              as hi1,
       (select min(b.block_id + 0) from blocks b
         where b.block_timestamp >= greatest(r.a, r.b) and b.block_timestamp < e.bk
           and b.block_timestamp <= e.ats and b.block_timestamp > e.front_hi)                 as lo2,
       (select max(b.block_id + 0) from blocks b
         where b.block_timestamp >= greatest(r.a, r.b) and b.block_timestamp < e.bk
           and b.block_timestamp <= e.ats and b.block_timestamp > e.front_hi)                 as hi2,
       (select min(b.block_id + 0) from blocks b
         where b.block_timestamp > e.front_lo and b.block_timestamp <= e.front_hi)      as f_lo,
       (select max(b.block_id + 0) from blocks b
         where b.block_timestamp > e.front_lo and b.block_timestamp <= e.front_hi)      as f_hi,
       (select min(b.block_id + 0) from blocks b
         where b.block_timestamp > e.ws and b.block_timestamp <= e.front_hi)            as ff_lo,
       (select max(b.block_id + 0) from blocks b
         where b.block_timestamp > e.ws and b.block_timestamp <= e.front_hi)            as ff_hi,
       (select min(b.block_id + 0) from blocks b
         where b.block_timestamp >= e.bk and b.block_timestamp <= e.ats)                as kf_lo,
       (select max(b.block_id + 0) from blocks b
         where b.block_timestamp >= e.bk and b.block_timestamp <= e.ats)                as kf_hi,
       (select min(b.block_id + 0) from blocks b
         where e.valid and b.block_timestamp > e.edge_ats and b.block_timestamp >= e.bk
           and b.block_timestamp <= e.ats and b.block_id < (e.edge_ab + 1) * 1048576)   as k2_lo,
       (select max(b.block_id + 0) from blocks b
         where e.valid and b.block_timestamp > e.edge_ats and b.block_timestamp >= e.bk
           and b.block_timestamp <= e.ats and b.block_id < (e.edge_ab + 1) * 1048576)   as k2_hi,
       e.valid, e.edge_ab
  from m_read r
 cross join m_edge e
 cross join m_part_old o
 where not o.reset;
alter table m_read_ids add column k_lo int8;
update m_read_ids set k_lo = case when valid then (edge_ab + 1) * 1048576 else kf_lo end;
-- (after a reset: the reach's ranges alone)
insert into m_read_ids (f_lo, f_hi, k_lo, kf_hi)
select (select min(b.block_id + 0) from blocks b where b.block_timestamp > e.ws and b.block_timestamp <= e.front_hi),
       (select max(b.block_id + 0) from blocks b where b.block_timestamp > e.ws and b.block_timestamp <= e.front_hi),
       (select min(b.block_id + 0) from blocks b where b.block_timestamp >= e.bk and b.block_timestamp <= e.ats),
       (select max(b.block_id + 0) from blocks b where b.block_timestamp >= e.bk and b.block_timestamp <= e.ats)
  from m_edge e
 where not exists (select 1 from m_read_ids);

-- What this run reads from the facts (rules 1-4 as in the view generation_payments), in disjoint
-- time ranges, each its own index range (one test with an `or` of ranges the planner cannot turn
-- into index ranges: at 10M payments it read the whole window). Outside the reach (`kept` false,
-- all of them m_payments'): after a reset (not from step 1a's read), the window but the reach;
-- in a steady run, (1) and (2) above and the changed hours inside [a, b). In the reach (`kept`,
-- new edge lines): its new parts (f, k, k2; all of it when the kept lines were dropped), save the
-- sellers new to the catalog and the changed (seller, period), which are read whole (ff, kf; the
-- changed periods by seller and block range). m_line_facts: a catalog seller's payment as of this
-- run with its evidence line (dropped below: m_payment_facts is dropped by the last step).
create or replace temp view m_line_facts as
select c.seller_id,
       v.block_id,
       v.block_timestamp,
       (v.evidence_prefix || v.tx_hash || ':' || v.log_index || ':' || v.payer || ':' || v.seller_address || ':'
          || v.value || E'\n') collate "C" as evidence_line,
       -- (a new part of the reach read for every seller: not the sellers and periods read whole)
       not (e.valid and (v.seller_id in (select seller_id from m_build_sellers)
                         or (v.seller_id, v.block_timestamp - v.block_timestamp % e.p)
                              in (select seller_id, period_start from m_edge_stale))) as new_part
  from m_payment_facts v
  join m_catalog_sellers c on c.seller_id = v.seller_id
 cross join m_part mp
 cross join m_edge e
 where v.block_number <= e.ab
   and v.block_timestamp > e.ws
   and visible_at(v.added_seq, v.removed_seq, mp.run_seq);

-- Every run: the reach's front minutes and its end's new blocks (two index ranges: planning the
-- view over every partition of the fact tables is a good part of this statement's cost, so the
-- reads a steady run seldom needs are a statement of their own, below, planned only when needed).
create temp table m_read_lines on commit drop as
select seller_id, block_timestamp, true as kept, evidence_line
  from m_line_facts
 where block_id >= (select f_lo from m_read_ids)
   and block_id <= (select f_hi from m_read_ids)
   and block_timestamp > (select front_lo from m_edge)
   and block_timestamp <= (select front_hi from m_edge)
   and new_part
union all
select seller_id, block_timestamp, true, evidence_line
  from m_line_facts
 where block_id >= (select k_lo from m_read_ids)
   and block_id <= (select kf_hi from m_read_ids)
   and block_timestamp >= (select bk from m_edge)
   and block_timestamp <= (select ats from m_edge)
   and new_part;

-- The rest, when there is any: after a reset, a window that went back, changed hours, changed
-- (seller, period) of the reach, an as-of time past its block's.
-- (one line for bench/method.ts SPLIT_STEPS: no statement inside ends a line)
do $$ begin if (select o.reset or not e.valid or i.lo1 is not null or i.lo2 is not null or i.k2_lo is not null
                       or exists (select 1 from m_edge_stale)
                       or exists (select 1 from m_changed_hours h where h.period_start + e.p > r.a and h.period_start < r.b)
                  from m_part_old o cross join m_edge e cross join m_read_ids i cross join m_read r) then
insert into m_read_lines
select seller_id, block_timestamp, false, evidence_line
  from m_line_facts
 where (select reset and not from_window from m_part_old)
   and block_timestamp > (select front_hi from m_edge)
   and block_timestamp < (select a from m_read)
union all
select seller_id, block_timestamp, false, evidence_line
  from m_line_facts
 where (select reset and not from_window from m_part_old)
   and block_timestamp >= (select greatest(a, b) from m_read)
   and block_timestamp < (select bk from m_edge)
   and block_timestamp <= (select ats from m_edge)
   and block_timestamp > (select front_hi from m_edge)
union all
select seller_id, block_timestamp, false, evidence_line
  from m_line_facts
 where block_id >= (select lo1 from m_read_ids)
   and block_id <= (select hi1 from m_read_ids)
   and block_timestamp > (select front_hi from m_edge)
   and block_timestamp < (select a from m_read)
union all
select seller_id, block_timestamp, false, evidence_line
  from m_line_facts
 where block_id >= (select lo2 from m_read_ids)
   and block_id <= (select hi2 from m_read_ids)
   and block_timestamp >= (select greatest(a, b) from m_read)
   and block_timestamp < (select bk from m_edge)
   and block_timestamp <= (select ats from m_edge)
   and block_timestamp > (select front_hi from m_edge)
union all
select v.seller_id, v.block_timestamp, false, v.evidence_line
  from m_changed_hours h
  join m_line_facts v
    on v.block_timestamp >= h.period_start
   and v.block_timestamp < h.period_start + (select p from m_part)
 where v.block_timestamp >= (select a from m_read)
   and v.block_timestamp < (select b from m_read)
   and v.block_timestamp > (select front_hi from m_edge)
   and v.block_timestamp < (select bk from m_edge)
union all
select seller_id, block_timestamp, true, evidence_line
  from m_line_facts
 where block_id >= (select k2_lo from m_read_ids)
   and block_id <= (select k2_hi from m_read_ids)
   and block_timestamp > (select edge_ats from m_edge)
   and block_timestamp >= (select bk from m_edge)
   and block_timestamp <= (select ats from m_edge)
   and new_part
union all
select v.seller_id, v.block_timestamp, true, v.evidence_line
  from m_edge_stale s
  join m_line_facts v
    on v.seller_id = s.seller_id
   and v.block_id >= s.lo_id
   and v.block_id <= s.hi_id
 where v.block_timestamp >= s.period_start
   and v.block_timestamp < s.period_start + (select p from m_part)
   and (v.block_timestamp <= (select front_hi from m_edge) or v.block_timestamp >= (select bk from m_edge)); end if; end $$;

-- The sellers new to the catalog (or paid for the first time: a few a run), read whole in the
-- reach, by seller and the block range from the reach's front to its end.
do $$ begin if (select valid from m_edge) and exists (select 1 from m_build_sellers) then
insert into m_read_lines
select v.seller_id, v.block_timestamp, true, v.evidence_line
  from m_build_sellers s
  join m_line_facts v
    on v.seller_id = s.seller_id
   and v.block_id >= (select coalesce(ff_lo, kf_lo) from m_read_ids)
   and v.block_id <= (select coalesce(kf_hi, ff_hi) from m_read_ids)
 where v.block_timestamp <= (select front_hi from m_edge)
    or (v.block_timestamp >= (select bk from m_edge) and v.block_timestamp <= (select ats from m_edge)); end if; end $$;
drop view m_line_facts;

insert into part_edge_lines (seller_id, block_timestamp, evidence_line)
select seller_id, block_timestamp, evidence_line
  from m_read_lines
 where kept;

-- The payments of the periods this run builds and none other: the two edge periods, the closed
-- hours outside the range [lo, hi) the partials cover (after a reset: all), and the changed hours
-- in it; those outside the reach from the facts (above), those in it from the kept lines. A
-- payment of a reused hour is never read. Evidence lines compare in byte order. (None when the
-- digests are grouped from step 1a's read, from_window.)
create temp table m_payments on commit drop as
select seller_id, block_timestamp, evidence_line
  from m_read_lines
 where not kept
union all
select l.seller_id, l.block_timestamp, l.evidence_line
  from part_edge_lines l
 cross join m_read r
 where not (select from_window from m_part_old)
   and (l.block_timestamp < r.a
        or l.block_timestamp >= greatest(r.a, r.b)
        or l.block_timestamp - l.block_timestamp % (select p from m_part) in (select period_start from m_changed_hours));

-- (the hours that closed since the last run leave the reach)
delete from part_edge_lines
 where block_timestamp >= (select bk from m_edge)
   and block_timestamp < (select w2 from m_edge);
set local enable_nestloop = off;

analyze m_payments;

-- Cold from step 1a's read (`from_window`): every period of the window, closed hours and the two
-- edge periods, of each seller and of all sellers together (seller_id null), in one grouping of
-- m_window (a rollup: one sort by period and seller gives both levels). The evidence line is
-- m_payments' (the class's prefix, the hash and the addresses as text, the value as the
-- facts' integer prints it as `numeric` does), built here from the ids: the seller's text is
-- the catalog's (the same bytes: m_catalog_sellers matched it to the address), the payer's
-- from `addresses`. Where m_payments is read three more times below (the sellers' hours, the
-- global hours, the edges), this is one pass: the statements below take their rows from it.
create temp table m_cold_periods on commit drop as
select x.seller_id,   -- null: the period over every seller (the rollup's total)
       x.period_start,
       count(*)::int                                               as payments,
       sha256(convert_to(string_agg(x.evidence_line, '' order by x.evidence_line collate "C"), 'UTF8')) as sha256
  from (select w.seller_id,
               w.block_timestamp - w.block_timestamp % (select p from m_part) as period_start,
               ((select evidence_prefixes from m_gen)[w.class] || '0x' || encode(w.tx_hash, 'hex') || ':'
                  || w.log_index || ':' || '0x' || encode(f.address, 'hex') || ':' || c.seller_address || ':'
                  || w.value || E'\n') collate "C" as evidence_line
          from m_window w
          join m_catalog_sellers c on c.seller_id = w.seller_id
          join addresses f on f.address_id = w.payer_id
         where (select from_window from m_part_old)) x
 group by x.period_start, rollup (x.seller_id);

-- Cold: every closed hour of every seller of the catalog, in one grouping of the window's
-- payments (from_window: taken from m_cold_periods), inserted in the primary key's order; and
-- each seller's kept lines from the same rows (a seller with no closed hour has no lines row,
-- as a rebuild from no partials gives).
create temp table m_cold_hours on commit drop as
select seller_id,
       period_start,
       count(*)::int                                               as payments,
       sha256(convert_to(string_agg(evidence_line, '' order by evidence_line collate "C"), 'UTF8')) as sha256
  from (select seller_id, evidence_line,
               block_timestamp - block_timestamp % (select p from m_part) as period_start
          from m_payments
         where block_timestamp >= (select w1 from m_part)
           and block_timestamp < (select w2 from m_part)) x
 where (select reset and not from_window from m_part_old)
 group by 1, 2
union all
select seller_id, period_start, payments, sha256
  from m_cold_periods
 where seller_id is not null
   and period_start >= (select w1 from m_part)
   and period_start < (select w2 from m_part);

insert into part_seller_hours (seller_id, hour_start, payments, sha256, gen_from)
select seller_id, period_start, payments, sha256, (select generation from m_part)
  from m_cold_hours
 order by seller_id, period_start;

-- (by UTC day, migration 0044: a seller without closed hours has no row)
insert into part_seller_lines (seller_id, day_start, lines)
select seller_id,
       period_start - period_start % 86400,
       string_agg(period_start || ':' || payments || ':' || encode(sha256, 'hex') || E'\n', '' order by period_start)
  from m_cold_hours
 where (select reset from m_part_old)
 group by 1, 2
 order by 1, 2;

-- Steady: the hours to build beside the live partials.
-- Build the missing closed periods: all of them for a seller without partials, else those
-- outside the old range [lo, hi) and those whose facts changed. The test is on each payment,
-- before grouping, so that a period is sorted only when it is built.
with built as (
insert into part_seller_hours (seller_id, hour_start, payments, sha256, gen_from)
select b.seller_id, b.period_start, b.payments, b.sha256, (select generation from m_part)
  from (select seller_id,
               period_start,
               count(*)::int                                               as payments,
               sha256(convert_to(string_agg(evidence_line, '' order by evidence_line collate "C"), 'UTF8')) as sha256
          from (select seller_id, evidence_line,
                       block_timestamp - block_timestamp % (select p from m_part) as period_start
                  from m_payments
                 where block_timestamp >= (select w1 from m_part)
                   and block_timestamp < (select w2 from m_part)) x
         where not (select reset from m_part_old)
           and (seller_id in (select seller_id from m_build_sellers)
                or period_start < (select lo from m_part_old)
                or period_start >= (select hi from m_part_old)
                or (seller_id, period_start) in (select seller_id, period_start from m_changed_ids))
         group by 1, 2) b
returning seller_id, hour_start, payments, sha256)
insert into m_period_changes
select seller_id, hour_start, payments, sha256, true
  from built;

insert into part_sellers (seller_id)
select seller_id from m_build_sellers;

-- The global closed periods: those outside the old range and the changed hours (from_window:
-- all of them, from m_cold_periods).
insert into part_hours (hour_start, payments, sha256, gen_from)
select period_start,
       count(*)::int,
       sha256(convert_to(string_agg(evidence_line, '' order by evidence_line collate "C"), 'UTF8')),
       (select generation from m_part)
  from (select evidence_line,
               block_timestamp - block_timestamp % (select p from m_part) as period_start
          from m_payments
         where block_timestamp >= (select w1 from m_part)
           and block_timestamp < (select w2 from m_part)) x
 where period_start < (select lo from m_part_old)
    or period_start >= (select hi from m_part_old)
    or period_start in (select period_start from m_changed_hours)
 group by 1
union all
select period_start, payments, sha256, (select generation from m_part)
  from m_cold_periods
 where seller_id is null
   and period_start >= (select w1 from m_part)
   and period_start < (select w2 from m_part);

delete from part_state;
insert into part_state (checked_seq, period_seconds, lo, hi, sellers_key, payment_set,
                        edge_window_start_ts, edge_as_of_block, edge_as_of_ts)
select mp.run_seq, mp.p, mp.w1, mp.w2, mp.sellers_key, g.payment_set,
       g.window_start_ts, g.as_of_block, g.as_of_ts
  from m_part mp cross join m_gen g;

-- The edge periods of this generation, from the facts (its closed ones are the live partials:
-- the views gen_seller_periods and gen_periods join both). Kept by seller_id for the digests below.
create temp table m_edge_periods on commit drop as
select e.seller_id, c.seller_address, e.period_start, e.payments, e.sha256
  from (select seller_id,
               block_timestamp - block_timestamp % (select p from m_part) as period_start,
               count(*)::int                                               as payments,
               encode(sha256(convert_to(
                 string_agg(evidence_line, '' order by evidence_line collate "C"), 'UTF8')), 'hex') as sha256
          from m_payments
         where block_timestamp < (select w1 from m_part) or block_timestamp >= (select w2 from m_part)
         group by 1, 2
        union all
        select seller_id, period_start, payments, encode(sha256, 'hex')
          from m_cold_periods
         where seller_id is not null
           and (period_start < (select w1 from m_part) or period_start >= (select w2 from m_part))) e
  join m_catalog_sellers c using (seller_id);

insert into gen_edge_seller_periods (generation, seller_address, period_start, payments, sha256)
select (select generation from m_part), seller_address, period_start, payments, sha256
  from m_edge_periods;

insert into gen_edge_periods (generation, period_start, payments, sha256)
select (select generation from m_part),
       block_timestamp - block_timestamp % (select p from m_part),
       count(*)::int,
       encode(sha256(convert_to(
         string_agg(evidence_line, '' order by evidence_line collate "C"), 'UTF8')), 'hex')
  from m_payments
 where block_timestamp < (select w1 from m_part) or block_timestamp >= (select w2 from m_part)
 group by 2
union all
select (select generation from m_part), period_start, payments, encode(sha256, 'hex')
  from m_cold_periods
 where seller_id is null
   and (period_start < (select w1 from m_part) or period_start >= (select w2 from m_part));

-- The sellers whose digest is composed again: those whose closed hours changed (above), those
-- with edge periods now or in the previous run (the edges move every run), and the new ones.
create temp table m_digest_touched on commit drop as
select seller_id from m_period_changes
union
select seller_id from m_edge_periods
union
select seller_id from part_seller_digests where edge
union
select seller_id from m_build_sellers;
analyze m_digest_touched;

-- Each seller's lines (part_seller_lines, migration 0020) follow its live partials, one row per
-- UTC day with live hours (migration 0044). Where hours only left at the window's start (a prefix
-- of its lines, so of each day's: every live hour before w1 is closed) and closed at its end (after
-- every live hour: hi is the old range's end), the day rows they fall in are cut and appended to
-- (a day row that a cut empties goes, one for a new day is added); anything else (changed facts, a
-- seller new to the partials, a range that went back, a seller whose digest is composed but who
-- has no lines) rebuilds its rows from the live partials. A run that closes an hour so rewrites
-- the seller's first and last day (~2 KB each), not its whole window (~60 KB). (A cold run built
-- every seller's lines above: nothing is cut, appended or rebuilt.)
-- (from here to the digests' insert, the few sellers' rows by the primary key's prefix, seller_id,
-- never a hash of every seller's day rows: up to ~30 a seller)
set local enable_nestloop = on;
delete from part_seller_lines where seller_id in (select seller_id from m_gone_sellers);

create temp table m_lines_rebuild on commit drop as
select seller_id from m_build_sellers
union
select seller_id
  from m_period_changes
 where (not built and hour_start >= (select w1 from m_part))
    or (built and hour_start < (select hi from m_part_old))
union
select t.seller_id
  from m_digest_touched t
 where not exists (select 1 from part_seller_lines l where l.seller_id = t.seller_id)
   and not exists (select 1 from m_gone_sellers g where g.seller_id = t.seller_id);
analyze m_lines_rebuild;

-- (the line of a period: `period_start:payments:sha256\n`, ASCII, so characters are bytes)
create temp table m_line_days on commit drop as
select seller_id,
       hour_start - hour_start % 86400                                                  as day_start,
       coalesce(sum(length(line)) filter (where not built), 0)::int                   as cut,
       coalesce(string_agg(line, '' order by hour_start) filter (where built), '')   as appended
  from (select seller_id, built, hour_start,
               hour_start || ':' || payments || ':' || encode(sha256, 'hex') || E'\n' as line
          from m_period_changes) c
 where seller_id not in (select seller_id from m_lines_rebuild)
 group by 1, 2;
analyze m_line_days;

-- (a few thousand day rows by the primary key)
update part_seller_lines l
   set lines = substr(l.lines, 1 + x.cut) || x.appended
  from m_line_days x
 where l.seller_id = x.seller_id and l.day_start = x.day_start;

insert into part_seller_lines (seller_id, day_start, lines)
select x.seller_id, x.day_start, x.appended
  from m_line_days x
 where x.appended <> ''
   and not exists (select 1 from part_seller_lines l where l.seller_id = x.seller_id and l.day_start = x.day_start);

delete from part_seller_lines l
 using m_line_days x
 where l.seller_id = x.seller_id and l.day_start = x.day_start and x.cut > 0 and l.lines = '';

-- (the live hours by the primary key's prefix, seller_id)
delete from part_seller_lines
 where seller_id in (select seller_id from m_lines_rebuild)
   and not (select reset from m_part_old);
insert into part_seller_lines (seller_id, day_start, lines)
select h.seller_id,
       h.hour_start - h.hour_start % 86400,
       string_agg(h.hour_start || ':' || h.payments || ':' || encode(h.sha256, 'hex') || E'\n', '' order by h.hour_start)
  from m_lines_rebuild r
  join m_catalog_sellers c using (seller_id)
  join part_seller_hours h on h.seller_id = r.seller_id and h.gen_to is null
 where not (select reset from m_part_old)
 group by 1, 2;

-- A seller's evidence digest: its edge period before w1, its lines (its day rows in day order),
-- its edge period from w2 on.
create temp table m_digests_new on commit drop as
select t.seller_id,
       encode(sha256(convert_to(coalesce(e.before, '') || coalesce(l.lines, '') || coalesce(e.after, ''), 'UTF8')),
              'hex')                             as digest,
       e.seller_id is not null                  as edge
  from m_digest_touched t
  left join lateral (select string_agg(d.lines, '' order by d.day_start) as lines
                       from part_seller_lines d
                      where d.seller_id = t.seller_id) l on true
  left join (select seller_id,
                    string_agg(line, '' order by period_start) filter (where period_start < w1)  as before,
                    string_agg(line, '' order by period_start) filter (where period_start >= w2) as after
               from (select seller_id, period_start,
                            period_start || ':' || payments || ':' || sha256 || E'\n' as line
                       from m_edge_periods) p
              cross join m_part
              group by 1) e on e.seller_id = t.seller_id
 where l.lines is not null or e.seller_id is not null;

delete from part_seller_digests
 where seller_id in (select seller_id from m_digest_touched)
    or seller_id in (select seller_id from m_gone_sellers);
insert into part_seller_digests (seller_id, digest, edge)
select seller_id, digest, edge from m_digests_new;
set local enable_nestloop = off;

-- Every seller's evidence digest (a seller without periods has none: the sha256 of the empty text).
create temp table m_seller_digests on commit drop as
select c.seller_id, d.digest
  from m_catalog_sellers c
  join part_seller_digests d on d.seller_id = c.seller_id;

create temp table m_global_digest on commit drop as
select encode(sha256(convert_to(
         coalesce(string_agg(period_start || ':' || payments || ':' || sha256 || E'\n', '' order by period_start), ''),
         'UTF8')), 'hex') as digest
  from (select hour_start as period_start, payments, encode(sha256, 'hex') as sha256
          from part_hours
         where gen_to is null
           and hour_start >= (select w1 from m_part)
           and hour_start < (select w2 from m_part)
        union all
        select period_start, payments, sha256
          from gen_edge_periods
         where generation = (select generation from m_part)) p;

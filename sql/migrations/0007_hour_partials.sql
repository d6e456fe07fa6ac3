-- Incremental generations (method 2.0.0): the digests of closed hours, computed once and shared
-- by every generation whose window holds them (docs/METHOD.md 2.10). Derived data only: rebuilt
-- from the facts when missing, never trusted over them (sql/method/2.0.0/01b_digests.sql).
--
-- A closed hour lies wholly inside a generation's window and ended at or before its as-of time:
-- no payment can enter or leave it except by a change of the facts, and every change of a fact is
-- a new added_seq or removed_seq (facts are append-only; a reorg sets removed_seq). The live rows
-- below are exact for the facts visible at part_state.checked_seq; the next run looks only at the
-- facts whose added_seq or removed_seq is newer, and rebuilds the (seller, hour) they touch.
--
-- Rows are versioned by generation: a row serves generations gen_from <= g < gen_to (gen_to null:
-- still live). A run never updates a row's numbers: it closes it (gen_to = its generation) and
-- adds a new one, so the periods of a published generation never change. Prune deletes rows
-- closed at or before the oldest remaining generation.

-- The tables of 0006 now hold a generation's *edge* periods only: those not wholly inside its
-- window or not yet ended at its as-of time (the window's first and last, partial, periods). Its
-- closed periods are the partials below, shared between generations; the views gen_periods and
-- gen_seller_periods (end of this file) give all of a generation's periods under the old names.
-- Rows of generations computed before this migration stay as they are: all of their periods.
alter table gen_periods rename to gen_edge_periods;
alter index gen_periods_pkey rename to gen_edge_periods_pkey;
alter table gen_seller_periods rename to gen_edge_seller_periods;
alter index gen_seller_periods_pkey rename to gen_edge_seller_periods_pkey;

-- One row: the seq the live partials are exact at, their period, the hour range [lo, hi) they
-- cover for every seller of part_sellers, and the key (sha256 of the sorted addresses) of the
-- seller set the global hours were built over.
create table part_state (
  id              boolean primary key default true check (id),
  checked_seq     bigint  not null,
  period_seconds  bigint  not null,
  lo              bigint  not null,
  hi              bigint  not null,
  sellers_key     text    not null
);

-- The sellers whose hours [lo, hi) are all built (a hour without a live row had no payment).
create table part_sellers (
  seller_address  text primary key
);

-- One seller's closed hour with at least one verified payment: count and sha256 of its sorted lines.
create table part_seller_hours (
  seller_address  text    not null,
  hour_start      bigint  not null,
  payments        integer not null,
  sha256          text    not null,
  gen_from        integer not null,
  gen_to          integer,
  primary key (seller_address, hour_start, gen_from)
);
create index part_seller_hours_live on part_seller_hours (hour_start) where gen_to is null;
create index part_seller_hours_closed on part_seller_hours (gen_to) where gen_to is not null;

-- A closed hour over all sellers of part_state.sellers_key.
create table part_hours (
  hour_start  bigint  not null,
  payments    integer not null,
  sha256      text    not null,
  gen_from    integer not null,
  gen_to      integer,
  primary key (hour_start, gen_from)
);

-- The facts changed since a seq: read by each run (new blocks, reorgs), so it must not scan.
create index usdc_transfers_added_seq on usdc_transfers (added_seq);
create index usdc_transfers_removed_seq on usdc_transfers (removed_seq) where removed_seq is not null;

-- All periods of a generation: its edge periods, and the closed hours [w1, w2) it saw live, where
-- w1 = the first period start after the window start, w2 = the last period start at or before
-- as_of_ts (both multiples of digest_period_seconds).
create view gen_seller_periods as
select e.generation, e.seller_address, e.period_start, e.payments, e.sha256
  from gen_edge_seller_periods e
union all
select g.generation, h.seller_address, h.hour_start, h.payments, h.sha256
  from (select generation, w1, greatest(w1, as_of_ts - as_of_ts % p) as w2
          from (select generation, as_of_ts, p, window_start_ts - window_start_ts % p + p as w1
                  from (select generation, as_of_ts, window_start_ts,
                               (constants ->> 'digest_period_seconds')::bigint as p
                          from generations) x
                 where p is not null) y) g
  join part_seller_hours h
    on h.gen_from <= g.generation
   and (h.gen_to is null or h.gen_to > g.generation)
   and h.hour_start >= g.w1
   and h.hour_start < g.w2;

create view gen_periods as
select e.generation, e.period_start, e.payments, e.sha256
  from gen_edge_periods e
union all
select g.generation, h.hour_start, h.payments, h.sha256
  from (select generation, w1, greatest(w1, as_of_ts - as_of_ts % p) as w2
          from (select generation, as_of_ts, p, window_start_ts - window_start_ts % p + p as w1
                  from (select generation, as_of_ts, window_start_ts,
                               (constants ->> 'digest_period_seconds')::bigint as p
                          from generations) x
                 where p is not null) y) g
  join part_hours h
    on h.gen_from <= g.generation
   and (h.gen_to is null or h.gen_to > g.generation)
   and h.hour_start >= g.w1
   and h.hour_start < g.w2;

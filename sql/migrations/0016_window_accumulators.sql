-- Incremental numbers (docs/METHOD.md 2.10): the window's accumulators, kept by each run so that a
-- run reads only the payments that entered or left the window, or whose facts changed, since the
-- previous run (sql/method/01a_window.sql). Derived data only: they are exact for the window and
-- facts of acc_state; a run whose window or facts go back (an older as-of, an audit) empties them
-- and rebuilds them from the facts.

-- The verified payments (rules 2 and 3 of docs/METHOD.md; rule 1, the catalog, and rule 4, the
-- window, are the generation's) among the facts, with the seq interval each is visible in. Every
-- step reads payments through this view, so the rules are written once. (A simple view: the
-- planner inlines it, and indexes on usdc_transfers serve it.)
create view verified_transfers as
select t.tx_hash,
       t.log_index,
       t.block_hash,
       t.block_number,
       t.block_timestamp,
       t.from_address as payer,
       t.to_address   as seller_address,
       t.value,
       t.added_seq,
       t.removed_seq
  from usdc_transfers t
 where t.from_address <> t.to_address   -- rule 2
   and t.value > 0                      -- rule 2
   and t.authorized;                    -- rule 3

-- The payments that entered or left the window (its edges move every run) are found by time.
create index usdc_transfers_ts on usdc_transfers (block_timestamp);

-- Addresses compare in byte order ("C"): the accumulators' keys are only ever matched, never
-- shown in order, and a byte compare is several times cheaper than the database's collation.
-- (A lookup of usdc_transfers by one of them says `collate "default"`, the collation its indexes use.)

-- One row: the window (window_start_ts, as_of_ts], as_of_block and seq the accumulators are exact for.
create table acc_state (
  id               boolean primary key default true check (id),
  checked_seq      bigint  not null,
  window_start_ts  bigint  not null,
  as_of_ts         bigint  not null,
  as_of_block      bigint  not null
);

-- Per seller of the catalog (a row for each, paid or not): the window's numbers. `payers` counts
-- the rows of acc_payers; top_sum is the largest of their totals; median is the lower median of
-- acc_values; first_*/last_* are the window's first and last payment.
create table acc_sellers (
  seller_address  text collate "C" primary key,
  payments        bigint        not null,
  revenue         numeric(78,0) not null,
  payers          bigint        not null,
  top_sum         numeric(78,0) not null,
  median          numeric(78,0),
  first_ts        bigint,
  last_ts         bigint,
  first_block     bigint,
  last_block      bigint
);

-- Per seller and value: how many of the window's payments have that value (the median's histogram).
create table acc_values (
  seller_address  text collate "C"          not null,
  value           numeric(78,0) not null,
  n               bigint        not null,
  primary key (seller_address, value)
);

-- Per seller and payer: the payer's payments and their sum in the window.
create table acc_payers (
  seller_address  text collate "C"          not null,
  payer           text collate "C"          not null,
  n               bigint        not null,
  total           numeric(78,0) not null,
  primary key (seller_address, payer)
);
-- the top payer of a seller, without reading all of its payers
create index acc_payers_top on acc_payers (seller_address, total);

-- Per seller, UTC day and payer: the day's payments and sum (the daily series' distinct payers).
create table acc_day_payers (
  seller_address  text collate "C"          not null,
  day_start       bigint        not null,
  payer           text collate "C"          not null,
  n               bigint        not null,
  total           numeric(78,0) not null,
  primary key (seller_address, day_start, payer)
);

-- Per seller and UTC day: the day's payments, revenue and distinct payers (the rows of
-- acc_day_payers), kept by difference like acc_sellers.
create table acc_seller_days (
  seller_address  text collate "C" not null,
  day_start       bigint        not null,
  payments        bigint        not null,
  revenue         numeric(78,0) not null,
  payers          bigint        not null,
  primary key (seller_address, day_start)
);

-- The market's complete UTC days, computed once and kept while their facts and the catalog's
-- sellers stay the same (keyed by the sellers' sha256 and the seq they were checked at).
create table acc_market_days (
  day_start       bigint        primary key,
  payments        integer       not null,
  volume_micro    numeric(78,0) not null,
  payers          integer       not null,
  sellers_paid    integer       not null,
  median_micro    numeric(78,0)
);
create table acc_market_state (
  id           boolean primary key default true check (id),
  checked_seq  bigint not null,
  sellers_key  text   not null
);

-- The daily series is shared between generations like the hour partials: a row serves the
-- generations gen_from <= g < gen_to (gen_to null: still live); a run closes the rows of the
-- (seller, day) it changed and adds new ones, so a 15-minute run writes a few thousand rows, not
-- every seller's thirty days. Rows of generations computed before this migration stay in
-- gen_seller_daily_fixed; the view gen_seller_daily gives both under the old name.
alter table gen_seller_daily rename to gen_seller_daily_fixed;
alter index gen_seller_daily_pkey rename to gen_seller_daily_fixed_pkey;

create table seller_daily_rows (
  seller_address  text          not null,
  day             date          not null,
  payments        integer       not null,
  revenue_micro   numeric(78,0) not null,
  payers          integer       not null,
  gen_from        integer       not null,
  gen_to          integer,
  primary key (seller_address, day, gen_from)
);
create index seller_daily_rows_live on seller_daily_rows (seller_address, day) where gen_to is null;
create index seller_daily_rows_closed on seller_daily_rows (gen_to) where gen_to is not null;

create view gen_seller_daily as
select f.generation, f.seller_address, f.day, f.payments, f.revenue_micro, f.payers
  from gen_seller_daily_fixed f
union all
select g.generation, r.seller_address, r.day, r.payments, r.revenue_micro, r.payers
  from generations g
  join seller_daily_rows r
    on r.gen_from <= g.generation
   and (r.gen_to is null or r.gen_to > g.generation);

-- Method 2.0.0: each seller's composed evidence digest as of part_state (the live hour partials
-- plus the edge periods of the run that computed it; `edge`: it had edge periods then). A run
-- composes again only the digests of sellers whose periods changed (sql/method/2.0.0/01b_digests.sql).
create table part_seller_digests (
  seller_address  text collate "C" primary key,
  digest          text    not null,
  edge            boolean not null
);
create index part_seller_digests_edge on part_seller_digests (seller_address) where edge;

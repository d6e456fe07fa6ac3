-- Operator groups and the market summary (issue 23; docs/METHOD.md 2.12): new outputs of every
-- generation computed from now on, by every method version. No published number changes:
-- generations computed before this migration have none of these rows, and gen_outputs says so.

-- Which of the optional outputs a generation has: one row per (generation, output), written by
-- the step that computes it (`operator_groups`: sql/method/02b_operator_groups.sql,
-- `market_summary`: sql/method/04b_market_summary.sql). A generation computed before this
-- migration has no row: the API answers it "not computed" rather than "none".
create table gen_outputs (
  generation  integer not null references generations on delete cascade,
  output      text    not null,
  primary key (generation, output)
);

-- Operator groups: the generation's sellers linked transitively by the same_operator relation
-- (a shared resource host, migration 0031), two or more sellers each. group_id is 'op_' and the
-- lowest member address (byte order) without its 0x. The sums are of the members' gen_sellers
-- rows; payers_30d is the distinct payers of all members together (not a sum).
create table gen_operator_groups (
  generation                  integer       not null references generations on delete cascade,
  group_id                    text          not null,
  seller_count                integer       not null,
  seller_addresses            text[]        not null,   -- byte order
  hosts                       text[]        not null,   -- hosts of two or more members, byte order
  payments_30d                integer       not null,
  payers_30d                  integer       not null,
  verified_revenue_30d_micro  numeric(78,0) not null,
  external_revenue_30d_micro  numeric(78,0),            -- method 3.x; null before
  primary key (generation, group_id)
);

-- Each grouped seller's group (a seller in no group has no row).
create table gen_operator_members (
  generation      integer not null references generations on delete cascade,
  seller_address  text    not null,
  group_id        text    not null,
  primary key (generation, seller_address)
);
create index gen_operator_members_group on gen_operator_members (generation, group_id);

-- The market summary: per period (last_7d, prev_7d, last_30d) of the generation's publishable
-- days (gen_market_daily), the sums of the days and the distinct payers and sellers paid over the
-- whole period. A period without a day has days 0 and null numbers. The change columns are on the
-- last_7d row: (last_7d - prev_7d) / prev_7d rounded to 6 decimals, null unless both periods
-- have 7 days and prev_7d's number is above 0.
create table gen_market_summary (
  generation                   integer       not null references generations on delete cascade,
  period                       text          not null,
  first_day                    date,
  last_day                     date,
  days                         integer       not null,
  payments                     bigint,
  volume_micro                 numeric(78,0),
  external_volume_micro        numeric(78,0),            -- method 3.x; null before
  payers                       integer,
  sellers_paid                 integer,
  change_payments              numeric,
  change_volume                numeric,
  change_external_volume       numeric,
  change_payers                numeric,
  change_sellers_paid          numeric,
  primary key (generation, period)
);

-- The distinct payers and sellers of each cached market day (acc_market_days), built with the
-- day in step 4 and kept while it is; set_id numbers each build (a sequence: never reused, even
-- after a rollback or a cold run), so a cached summary knows whether a day of it was rebuilt.
alter table acc_market_days add column set_id bigint;
create sequence acc_market_set_ids;
create table acc_market_day_payers (
  day_start  bigint not null,
  payer_id   int4   not null,                  -- addresses
  primary key (day_start, payer_id)
);
create table acc_market_day_sellers (
  day_start  bigint not null,
  seller_id  int4   not null,                  -- addresses
  primary key (day_start, seller_id)
);
-- The summary of the last run per period, with the days it covered (first day, count) and the
-- highest set_id among them: reused while all three are the same.
create table acc_market_summary (
  period                 text          primary key,
  first_day_start        bigint,
  days                   integer       not null,
  set_max                bigint,
  payments               bigint,
  volume_micro           numeric(78,0),
  external_volume_micro  numeric(78,0),
  payers                 integer,
  sellers_paid           integer
);

-- The cached days have no sets yet: the next run rebuilds the market's days (a cold market
-- cache, as after a change of the catalog's sellers).
delete from acc_market_state;
delete from acc_market_days;

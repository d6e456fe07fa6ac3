-- The versioned rows keyed by address ids, and the day payers leaner (issue 21; docs/data-model.md,
-- "Shared versioned rows" and "Work state"). At 10M payments part_seller_hours (67 bytes a
-- payment) and seller_daily_rows (23) spent most of their bytes on the seller's 42-character text,
-- in the row and again in every index, and on the sha256 as 64 hex characters; acc_day_payers (83)
-- on a sum nothing reads and 8-byte numbers where 4 bytes hold them; acc_payers (59) on an index
-- by sum that a steady run rarely needs.
--
-- part_seller_hours, part_hours and seller_daily_rows: their closed rows serve retained
-- generations through the views gen_seller_periods, gen_periods and gen_seller_daily, so they are
-- CONVERTED, not emptied: each seller's text becomes its addresses.address_id (an address no fact
-- names any more, its facts dropped with their partition, is added to addresses again: ids are
-- never reused, so it gets a new one) and each sha256 its 32 bytes. The views give the text back
-- ('0x' || encode(address, 'hex'), encode(sha256, 'hex')), so every body and digest they serve
-- stays byte-identical; a row whose text would not come back the same (not lowercase hex) stops
-- the migration instead.
--
-- acc_day_payers is work state (docs/METHOD.md 2.10): dropped and created empty, and acc_state
-- deleted, so the next run is cold and builds it from the facts (as migration 0028 did).
--
-- Columns in alignment order (8-byte, 4-byte, then variable length): no padding.

do $$
begin
  if exists (select 1 from part_seller_hours where seller_address !~ '^0x[0-9a-f]{40}$' or sha256 !~ '^[0-9a-f]{64}$')
     or exists (select 1 from part_hours where sha256 !~ '^[0-9a-f]{64}$')
     or exists (select 1 from seller_daily_rows where seller_address !~ '^0x[0-9a-f]{40}$') then
    raise exception 'migration 0033: a versioned row holds a seller address or sha256 that is not lowercase hex; it would not be served byte for byte from bytes';
  end if;
end $$;

-- The sellers the versioned rows name, each with an addresses row (added in byte order when missing).
insert into addresses (address)
select x.address
  from (select distinct decode(substr(seller_address, 3), 'hex') as address
          from (select seller_address from part_seller_hours
                union
                select seller_address from seller_daily_rows) s) x
 where not exists (select 1 from addresses a where a.address = x.address)
 order by x.address;

drop view gen_seller_periods, gen_periods, gen_seller_daily;

-- One closed hour of one seller with a payment, per version (migration 0007).
create table part_seller_hours_ids (
  hour_start  int8  not null,
  seller_id   int4  not null,                  -- addresses
  payments    int4  not null,
  gen_from    int4  not null,
  gen_to      int4,
  sha256      bytea not null                   -- 32 bytes
);
insert into part_seller_hours_ids (hour_start, seller_id, payments, gen_from, gen_to, sha256)
select h.hour_start, a.address_id, h.payments, h.gen_from, h.gen_to, decode(h.sha256, 'hex')
  from part_seller_hours h
  join addresses a on a.address = decode(substr(h.seller_address, 3), 'hex')
 order by a.address_id, h.hour_start, h.gen_from;

-- One closed hour over all catalog sellers, per version.
create table part_hours_ids (
  hour_start  int8  not null,
  payments    int4  not null,
  gen_from    int4  not null,
  gen_to      int4,
  sha256      bytea not null                   -- 32 bytes
);
insert into part_hours_ids (hour_start, payments, gen_from, gen_to, sha256)
select hour_start, payments, gen_from, gen_to, decode(sha256, 'hex')
  from part_hours
 order by hour_start, gen_from;

-- One UTC day with a payment of one seller, per version (migration 0016).
create table seller_daily_rows_ids (
  seller_id      int4          not null,       -- addresses
  day            date          not null,
  payments       int4          not null,
  payers         int4          not null,
  gen_from       int4          not null,
  gen_to         int4,
  revenue_micro  numeric(78,0) not null
);
insert into seller_daily_rows_ids (seller_id, day, payments, payers, gen_from, gen_to, revenue_micro)
select a.address_id, r.day, r.payments, r.payers, r.gen_from, r.gen_to, r.revenue_micro
  from seller_daily_rows r
  join addresses a on a.address = decode(substr(r.seller_address, 3), 'hex')
 order by a.address_id, r.day, r.gen_from;

-- (every row has its copy: the join above cannot have lost one, as every address was added)
do $$
begin
  if (select count(*) from part_seller_hours) <> (select count(*) from part_seller_hours_ids)
     or (select count(*) from seller_daily_rows) <> (select count(*) from seller_daily_rows_ids) then
    raise exception 'migration 0033: a versioned row has no addresses row';
  end if;
end $$;

drop table part_seller_hours, part_hours, seller_daily_rows;
alter table part_seller_hours_ids rename to part_seller_hours;
alter table part_hours_ids rename to part_hours;
alter table seller_daily_rows_ids rename to seller_daily_rows;

-- The keys and indexes of migrations 0007 and 0016, by id (built after the sorted copy).
alter table part_seller_hours add constraint part_seller_hours_pkey primary key (seller_id, hour_start, gen_from);
create index part_seller_hours_live on part_seller_hours (hour_start) where gen_to is null;
create index part_seller_hours_closed on part_seller_hours (gen_to) where gen_to is not null;
alter table part_hours add constraint part_hours_pkey primary key (hour_start, gen_from);
alter table seller_daily_rows add constraint seller_daily_rows_pkey primary key (seller_id, day, gen_from);
create index seller_daily_rows_live on seller_daily_rows (seller_id, day) where gen_to is null;
create index seller_daily_rows_closed on seller_daily_rows (gen_to) where gen_to is not null;

-- The views of migrations 0007 and 0016, same columns and rows: the text comes back from
-- addresses (one probe of its primary key per row; a lookup of one seller by its text reaches
-- its id by the index addresses_text, then its rows by the primary key's prefix).
create view gen_seller_periods as
select e.generation, e.seller_address, e.period_start, e.payments, e.sha256
  from gen_edge_seller_periods e
union all
select g.generation, '0x' || encode(a.address, 'hex'), h.hour_start, h.payments, encode(h.sha256, 'hex')
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
   and h.hour_start < g.w2
  join addresses a on a.address_id = h.seller_id;

create view gen_periods as
select e.generation, e.period_start, e.payments, e.sha256
  from gen_edge_periods e
union all
select g.generation, h.hour_start, h.payments, encode(h.sha256, 'hex')
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

create view gen_seller_daily as
select f.generation, f.seller_address, f.day, f.payments, f.revenue_micro, f.payers
  from gen_seller_daily_fixed f
union all
select g.generation, '0x' || encode(a.address, 'hex'), r.day, r.payments, r.revenue_micro, r.payers
  from generations g
  join seller_daily_rows r
    on r.gen_from <= g.generation
   and (r.gen_to is null or r.gen_to > g.generation)
  join addresses a on a.address_id = r.seller_id;

-- Per seller, UTC day and payer: the day's payments (the daily series' distinct payers). Its sum
-- is gone: step 1a never read it (a day's revenue moves by the payments' own values).
delete from acc_state;
drop table acc_day_payers;
create table acc_day_payers (
  seller_id  int4 not null,                    -- addresses
  day        int4 not null,                    -- UTC day number: unix seconds / 86,400
  payer_id   int4 not null,                    -- addresses
  n          int4 not null,
  primary key (seller_id, day, payer_id)
);

-- acc_payers loses its index by sum (36 of its 111 bytes a row at 1M payments): step 1a looks a
-- seller's top payer up over its payers only when a payer whose sum fell had the top sum.
drop index acc_payers_top;

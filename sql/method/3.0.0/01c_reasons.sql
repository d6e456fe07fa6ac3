-- Method 3.0.0, step 1c: each seller's numbers per class and per internal reason (SPEC "Method
-- 3.0.0": by_class, external_*, internal), kept like step 1a's accumulators and exact for the same
-- window (acc_state): acc_seller_classes (payments and revenue per class and reason),
-- acc_reason_payers and acc_reason_sellers (the distinct payers of each reason). Reasons: 0
-- external, 1 seller_funded, 2 same_operator.
--
-- acc_reason_payers holds the internal reasons only (1 and 2, migration 0041): a (seller, payer)
-- has external payments exactly when its count in acc_payers (step 1a, every payment of the same
-- window) exceeds its internal ones, so the external rows, one per (seller, payer) of the window
-- and nearly all of the table, would repeat acc_payers (about 40 bytes a payment at 10M). Internal
-- payers are a seller's own wallets and its operator's sellers: a few rows per seller.
--
-- Incremental (docs/METHOD.md 2.11.7). Step 1a read the payments that entered or left the window
-- (m_delta, each with its class and reason; in a cold run m_window, all of them); they move these
-- tables too. A payment's reason is decided when it is counted and does not change while it
-- stays visible, except by the catalog: a seller whose same_operator pairs changed
-- (acc_operator_pairs: those of the last run) has its rows dropped and its window read again.

-- Cold (step 1a's reset: another window, older facts, or 2.0.0's payments): from m_window.
-- (acc_reason_payers, one row per (seller, internal reason, payer) of the window, is filled without
-- its primary key, in no order (steady runs read it by whole key or by seller), and the key built
-- after, as step 1a does for its large tables; acc_reason_sellers counts its rows, and the
-- external payers from acc_payers, rather than grouping the window's payments a second time.)
do $$
begin
  if (select reset from m_acc) then
    truncate acc_seller_classes, acc_reason_payers, acc_reason_sellers, acc_operator_pairs;
    alter table acc_reason_payers drop constraint acc_reason_payers_pkey;
  end if;
end $$;

insert into acc_seller_classes (seller_id, class, reason, n, total)
select seller_id, class, reason, count(*), sum(value)
  from m_window
 group by 1, 2, 3
 order by 1, 2, 3;

insert into acc_reason_payers (seller_id, reason, payer_id, n)
select seller_id, reason, payer_id, count(*)
  from m_window
 where reason <> 0
 group by 1, 2, 3;

do $$
begin
  if (select reset from m_acc) then
    alter table acc_reason_payers add constraint acc_reason_payers_pkey primary key (seller_id, reason, payer_id);
  end if;
end $$;

insert into acc_reason_sellers (seller_id, reason, payers)
select seller_id, reason, payers
  from (select seller_id, reason::int2, count(*) as payers
          from acc_reason_payers
         group by 1, 2
        union all
        -- (external: the pairs with more payments than internal ones; acc_payers holds no pair
        -- without a payment)
        select p.seller_id, 0::int2, count(*)
          from acc_payers p
          left join (select seller_id, payer_id, sum(n) as n
                       from acc_reason_payers
                      group by 1, 2) i on i.seller_id = p.seller_id and i.payer_id = p.payer_id
         where p.n > coalesce(i.n, 0)
         group by 1) x
 where (select reset from m_acc)
 order by 1, 2;

-- Steady: the sellers of both catalogs whose same_operator pairs changed (a seller new to the
-- catalog is read whole by step 1a already; one gone from it is dropped).
create temp table m_reason_rebuild on commit drop as
select distinct x.seller_id
  from ((select seller_id, payer_id from m_operator_pairs
         except
         select seller_id, payer_id from acc_operator_pairs)
        union
        (select seller_id, payer_id from acc_operator_pairs
         except
         select seller_id, payer_id from m_operator_pairs)) x
 where not (select reset from m_acc)
   and x.seller_id in (select seller_id from m_catalog_sellers)
   and x.seller_id not in (select seller_id from m_added_sellers);
analyze m_reason_rebuild;

delete from acc_seller_classes
 where seller_id in (select seller_id from m_reason_rebuild union all select seller_id from m_removed_sellers);
delete from acc_reason_payers
 where seller_id in (select seller_id from m_reason_rebuild union all select seller_id from m_removed_sellers);
delete from acc_reason_sellers
 where seller_id in (select seller_id from m_reason_rebuild union all select seller_id from m_removed_sellers);

-- (only the pairs that changed: in a steady run under one catalog, none)
delete from acc_operator_pairs a
 where not exists (select 1 from m_operator_pairs o where o.seller_id = a.seller_id and o.payer_id = a.payer_id);
insert into acc_operator_pairs (seller_id, payer_id)
select seller_id, payer_id from m_operator_pairs
except
select seller_id, payer_id from acc_operator_pairs
 order by 1, 2;

-- (few rows in a steady run: look them up by index)
set local enable_nestloop = on;

-- What moves the accumulators: step 1a's changes, but for the sellers read again, whose every
-- payment in the window counts anew (sign 1, with its reason under this catalog).
create temp table m_reason_delta on commit drop as
select seller_id, payer_id, value, class, reason, sign
  from m_delta
 where seller_id not in (select seller_id from m_reason_rebuild)
union all
select t.seller_id, t.payer_id, t.value, t.class, t.reason, 1
  from m_reason_rebuild r
  join m_payment_facts t on t.seller_id = r.seller_id
 cross join m_acc a
 where t.block_number >= (select lo_block from m_bounds)
   and t.block_number <= a.b1
   and t.block_timestamp > a.ws1
   and t.block_timestamp <= a.ts1
   and visible_at(t.added_seq, t.removed_seq, a.s1);
analyze m_reason_delta;

insert into acc_seller_classes as a (seller_id, class, reason, n, total)
select seller_id, class, reason, sum(sign), sum(sign * value)
  from m_reason_delta
 group by 1, 2, 3
having sum(sign) <> 0 or sum(sign * value) <> 0
 order by 1, 2, 3
    on conflict (seller_id, class, reason) do update set n = a.n + excluded.n, total = a.total + excluded.total;
delete from acc_seller_classes a
 using (select distinct seller_id, class, reason from m_reason_delta) d
 where a.seller_id = d.seller_id and a.class = d.class and a.reason = d.reason and a.n = 0;

-- Payers per internal reason: the change of each (seller, reason, payer); the count before is the
-- count after, which the upsert returns, less the change (as for acc_payers in step 1a).
create temp table m_reason_payer_delta (
  seller_id  int4,
  reason     int2,
  payer_id   int4,
  dn         bigint,
  old_n      bigint
) on commit drop;
with d as (
  select seller_id, reason, payer_id, sum(sign) as dn
    from m_reason_delta
   where reason <> 0
   group by 1, 2, 3
  having sum(sign) <> 0),
upserted as (
  insert into acc_reason_payers as a (seller_id, reason, payer_id, n)
  select seller_id, reason, payer_id, dn from d
   order by 1, 2, 3
      on conflict (seller_id, reason, payer_id) do update set n = a.n + excluded.n
  returning a.seller_id, a.reason, a.payer_id, a.n)
insert into m_reason_payer_delta
select d.seller_id, d.reason, d.payer_id, d.dn, u.n - d.dn
  from d
  join upserted u on u.seller_id = d.seller_id and u.reason = d.reason and u.payer_id = d.payer_id;
delete from acc_reason_payers a
 using (select seller_id, reason, payer_id from m_reason_payer_delta where old_n > 0 and old_n + dn = 0) d
 where a.seller_id = d.seller_id and a.reason = d.reason and a.payer_id = d.payer_id and a.n = 0;

-- External payers: a (seller, payer)'s external count is its acc_payers count (already moved by
-- step 1a) less its internal counts (just moved above), and the count before is that less the
-- change of its external payments. (A seller read again has its rows counted anew: all of its
-- external payments are in the change, so the count before is 0, as for its internal reasons.)
insert into m_reason_payer_delta
select d.seller_id, 0, d.payer_id, d.dn, x.n - d.dn
  from (select seller_id, payer_id, sum(sign) as dn
          from m_reason_delta
         where reason = 0
         group by 1, 2
        having sum(sign) <> 0) d
 cross join lateral (
        select coalesce((select p.n from acc_payers p where p.seller_id = d.seller_id and p.payer_id = d.payer_id), 0)
             - coalesce((select sum(i.n) from acc_reason_payers i
                          where i.seller_id = d.seller_id and i.payer_id = d.payer_id), 0) as n) x;

insert into acc_reason_sellers as a (seller_id, reason, payers)
select seller_id, reason,
       sum(case when old_n = 0 and old_n + dn > 0 then 1
                when old_n > 0 and old_n + dn = 0 then -1
                else 0 end)
  from m_reason_payer_delta
 group by 1, 2
 order by 1, 2
    on conflict (seller_id, reason) do update set payers = a.payers + excluded.payers;
delete from acc_reason_sellers where payers = 0
   and seller_id in (select seller_id from m_reason_payer_delta);

-- Each seller's numbers for step 2, kept in its acc_sellers row (migration 0042): its payments
-- and revenue per class (in the order eip3009, permit2_exact, permit2_upto, batch_settlement),
-- and its external, seller_funded and same_operator payments, revenue and payers (zeros when it
-- has none). Summed again only for the sellers whose rows may have moved: those of this run's
-- changes and those read again (above), and the rows not filled yet, which step 1a's rows are
-- after a cold run and for a seller new to the catalog, and which every row was after migration
-- 0042 (step 1a's upsert leaves these columns as they are). Every other seller's rows of
-- acc_seller_classes and acc_reason_sellers did not move, so neither did its sums. (Summing every
-- seller's rows each run, a few per seller, cost 0.9 s of a steady run at 50,000 sellers.)
create temp table m_class_sellers on commit drop as
select seller_id from m_reason_delta
union
select seller_id from m_reason_rebuild
union
select seller_id from acc_sellers where class_payments is null;
analyze m_class_sellers;

update acc_sellers a
   set class_payments = x.class_payments, class_revenue = x.class_revenue,
       external_payments = x.external_payments, external_revenue = x.external_revenue,
       external_payers = x.external_payers, seller_funded_payments = x.seller_funded_payments,
       seller_funded_revenue = x.seller_funded_revenue, seller_funded_payers = x.seller_funded_payers,
       same_operator_payments = x.same_operator_payments, same_operator_revenue = x.same_operator_revenue,
       same_operator_payers = x.same_operator_payers
  from (select t.seller_id,
               array[coalesce(sum(k.n) filter (where k.class = 1), 0),
                     coalesce(sum(k.n) filter (where k.class = 2), 0),
                     coalesce(sum(k.n) filter (where k.class = 3), 0),
                     coalesce(sum(k.n) filter (where k.class = 4), 0)]::int4[]            as class_payments,
               array[coalesce(sum(k.total) filter (where k.class = 1), 0),
                     coalesce(sum(k.total) filter (where k.class = 2), 0),
                     coalesce(sum(k.total) filter (where k.class = 3), 0),
                     coalesce(sum(k.total) filter (where k.class = 4), 0)]::numeric(78,0)[] as class_revenue,
               coalesce(sum(k.n) filter (where k.reason = 0), 0)::int4                     as external_payments,
               coalesce(sum(k.total) filter (where k.reason = 0), 0)                       as external_revenue,
               coalesce(min(p.external), 0)::int4                                          as external_payers,
               coalesce(sum(k.n) filter (where k.reason = 1), 0)::int4                     as seller_funded_payments,
               coalesce(sum(k.total) filter (where k.reason = 1), 0)                       as seller_funded_revenue,
               coalesce(min(p.seller_funded), 0)::int4                                     as seller_funded_payers,
               coalesce(sum(k.n) filter (where k.reason = 2), 0)::int4                     as same_operator_payments,
               coalesce(sum(k.total) filter (where k.reason = 2), 0)                       as same_operator_revenue,
               coalesce(min(p.same_operator), 0)::int4                                     as same_operator_payers
          from m_class_sellers t
          left join acc_seller_classes k on k.seller_id = t.seller_id
          left join (select r.seller_id,
                            sum(r.payers) filter (where r.reason = 0) as external,
                            sum(r.payers) filter (where r.reason = 1) as seller_funded,
                            sum(r.payers) filter (where r.reason = 2) as same_operator
                       from acc_reason_sellers r
                      where r.seller_id in (select seller_id from m_class_sellers)
                      group by 1) p on p.seller_id = t.seller_id
         group by t.seller_id) x
 where a.seller_id = x.seller_id;

set local enable_nestloop = off;

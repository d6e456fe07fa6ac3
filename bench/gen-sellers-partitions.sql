-- Setup for bench/gen-sellers-partitions.sh (issue 21): two copies of gen_sellers in one database,
-- each holding 13 generations of 50,000 synthetic sellers, with today's six indexes (sql/schema.txt):
--   mono: one table, as on main;
--   part: partitioned by list (generation), one partition per generation, the six indexes declared
--         on the parent (so each partition has its own).
-- public.stage is one generation's rows, shaped like step 2's output (sql/method/02_sellers.sql):
-- a third of the sellers unpaid, half the rest verified and ranked. The values are synthetic; only
-- the row width and the index keys' spread matter here.
\set ON_ERROR_STOP 1
drop table if exists public.stage;
set work_mem='1GB'; set jit=off;
drop schema if exists mono cascade; drop schema if exists part cascade;
create schema mono; create schema part;
create table public.stage as
select '0x'||substr(encode(sha256(i::text::bytea),'hex'),1,40) as seller_address,
       ((i%5)+1)::int as listing_count,
       case when i%3=0 then 0 else (i*7919)%500 end::int as payments_30d,
       case when i%3=0 then 0 else (i*104729)%200 end::int as payers_30d,
       (case when i%3=0 then 0 else ((i::numeric*7919)%100000)*1000 end)::numeric(78,0) as verified_revenue_30d_micro,
       (case when i%3=0 then null else ((i::numeric*31)%5000)*100 end)::numeric(78,0) as median_payment_30d_micro,
       case when i%3=0 then 'not_observed' when i%2=0 then 'verified' else 'insufficient' end as evidence_state,
       case when i%2=0 and i%3<>0 then 'verified' else 'listed_only' end as tier,
       (i%50=0)::int::smallint as farm_flag,
       case when i%50=0 then '["listing_count>20"]' end as farm_reasons,
       case when i%2=0 and i%3<>0 then i/2 end::int as rank,
       array['cat'||(i%17),'cat'||(i%5)] as categories,
       encode(sha256(('d'||i)::bytea),'hex') as evidence_sha256,
       1700000000::bigint+i as first_payment_ts, 1700100000::bigint+i as last_payment_ts,
       (20000000+i)::bigint as first_block, (20100000+i)::bigint as last_block,
       ((i::numeric*13)%1000)::numeric(78,0) as external_revenue_30d_micro, (i%100)::int as external_payments_30d, (i%40)::int as external_payers_30d,
       array[i%10,i%7,i%3,0]::int[] as class_payments_30d, array[(i%10)::numeric,(i%7)::numeric,0,0]::numeric(78,0)[] as class_revenue_30d_micro,
       (i%4)::int as internal_seller_funded_payments_30d, (i%4)::numeric(78,0) as internal_seller_funded_revenue_30d_micro, (i%2)::int as internal_seller_funded_payers_30d,
       (i%3)::int as internal_same_operator_payments_30d, (i%3)::numeric(78,0) as internal_same_operator_revenue_30d_micro, (i%2)::int as internal_same_operator_payers_30d
  from generate_series(1::bigint,50000) i;
alter table stage add column seller_no int; update stage s set seller_no = x.n from (select seller_address, row_number() over (order by seller_address collate "C") n from stage) x where x.seller_address=s.seller_address;
create table mono.gen_sellers (generation int not null, like public.stage);
alter table mono.gen_sellers alter seller_address set not null, alter seller_no set not null;
alter table mono.gen_sellers add primary key (generation, seller_address);
create index gen_sellers_rank on mono.gen_sellers (generation, rank) where rank is not null;
create index gen_sellers_by_revenue on mono.gen_sellers (generation, verified_revenue_30d_micro desc, seller_no);
create index gen_sellers_by_external on mono.gen_sellers (generation, coalesce(external_revenue_30d_micro, -1) desc, seller_no);
create index gen_sellers_by_payments on mono.gen_sellers (generation, payments_30d desc, seller_no);
create index gen_sellers_by_payers on mono.gen_sellers (generation, payers_30d desc, seller_no);
insert into mono.gen_sellers select g, s.* from stage s, generate_series(1,13) g order by g, verified_revenue_30d_micro desc, seller_no;
create table part.gen_sellers (generation int not null, like public.stage) partition by list (generation);
alter table part.gen_sellers alter seller_address set not null, alter seller_no set not null;
alter table part.gen_sellers add primary key (generation, seller_address);
create index gen_sellers_rank on part.gen_sellers (generation, rank) where rank is not null;
create index gen_sellers_by_revenue on part.gen_sellers (generation, verified_revenue_30d_micro desc, seller_no);
create index gen_sellers_by_external on part.gen_sellers (generation, coalesce(external_revenue_30d_micro, -1) desc, seller_no);
create index gen_sellers_by_payments on part.gen_sellers (generation, payments_30d desc, seller_no);
create index gen_sellers_by_payers on part.gen_sellers (generation, payers_30d desc, seller_no);
do $$ begin for g in 1..13 loop
  execute format('create table part.gen_sellers_%s partition of part.gen_sellers for values in (%s)', g, g);
  execute format('insert into part.gen_sellers select %s, s.* from stage s order by verified_revenue_30d_micro desc, seller_no', g);
end loop; end $$;
vacuum analyze mono.gen_sellers; vacuum analyze part.gen_sellers; vacuum analyze stage;
select pg_size_pretty(pg_total_relation_size('mono.gen_sellers'));

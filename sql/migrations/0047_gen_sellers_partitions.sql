-- gen_sellers becomes one partition per generation (partition by list (generation)), named
-- gen_sellers_<generation>. Why: method step 2 writes a generation's sellers (50,000 rows at the
-- scale of real Base) every run, and three quarters of that insert's time was maintaining six
-- indexes row by row (docs/benchmarks.md, "gen_sellers: where the insert's time goes"; in the
-- method at 1M the bulk builds cost about what they save: "gen_sellers as one partition per
-- generation"), and pruning deleted 50,000 rows a run. Now step 2
-- fills a new table without indexes, in the published order (the address in byte order, as
-- sellers.ndjson lists them), builds its indexes in bulk, and attaches it: gen_sellers_open(g),
-- the insert into gen_sellers_filling, gen_sellers_close(g), all in the run's one transaction (a
-- killed run leaves neither the table nor the partition). Pruning a generation drops its
-- partition instead of deleting its rows (gen_sellers_follow_generations, migration 0021).
--
-- The indexes stay those of migrations 0001 and 0043, as partitioned indexes on the parent: the
-- primary key (generation, seller_address), the directory's four orders and the rank. Every
-- retained generation stays served by the API (?generation=N pages, bundles, audits), so no
-- partition is meant to go without them; on the parent they are defined once, every partition
-- has them (ATTACH adopts the ones gen_sellers_close built, so nothing is built twice), and
-- sql/schema.txt shows them. Per-partition indexes only would let an old partition drop its order
-- indexes later; nothing reads old generations differently, so that freedom buys nothing yet.
--
-- Nothing published changes (the same rows, columns and order). One transaction
-- (src/db/migrate.ts): killed, it leaves the table as it was. It copies every row once (every
-- retained generation's sellers: at 10M payments and 48 generations, 2.4M rows), so the table
-- needs its size again on disk until the old one is dropped at the end, and the API waits on the
-- table's lock until it commits. Both `run` and `migrate` apply it.

-- The old table moves aside (its view gen_listings follows it until replaced below); its primary
-- key, renamed, serves the copy's per-generation reads in address order; the other indexes go.
alter table gen_sellers rename to gen_sellers_unpartitioned;
alter table gen_sellers_unpartitioned rename constraint gen_sellers_pkey to gen_sellers_unpartitioned_pkey;
drop index gen_sellers_by_revenue;
drop index gen_sellers_by_external;
drop index gen_sellers_by_payments;
drop index gen_sellers_by_payers;
drop index gen_sellers_rank;

-- Same columns in the same order, types, collations and not-null (sql/schema.txt).
create table gen_sellers (like gen_sellers_unpartitioned) partition by list (generation);
alter table gen_sellers add constraint gen_sellers_pkey primary key (generation, seller_address);
create index gen_sellers_by_revenue on gen_sellers (generation, verified_revenue_30d_micro desc, seller_no);
create index gen_sellers_by_external on gen_sellers
  (generation, (coalesce(external_revenue_30d_micro, '-1'::numeric)) desc, seller_no);
create index gen_sellers_by_payments on gen_sellers (generation, payments_30d desc, seller_no);
create index gen_sellers_by_payers on gen_sellers (generation, payers_30d desc, seller_no);
create index gen_sellers_rank on gen_sellers (generation, rank) where rank is not null;

-- gen_sellers_open(g): the table generation g's rows are written into, gen_sellers_filling (in
-- the current schema, as the fact partitions are: fact_partitions_cover), without indexes, with
-- the check that ATTACH would otherwise verify by a scan. One at a time: a second open before
-- the close fails (the name is taken); a concurrent run waits anyway on its generations row.
create function gen_sellers_open(g int4) returns void language plpgsql as $$
begin
  execute format('create table %I.gen_sellers_filling (like %I.gen_sellers, constraint %I check (generation = %s))',
                 current_schema(), current_schema(), 'gen_sellers_' || g || '_generation', g);
end
$$;

-- gen_sellers_close(g): gen_sellers_filling becomes gen_sellers_<g>, gets the parent's indexes
-- (each built once, in bulk; the names follow the parent's) and is attached as generation g's
-- partition. ATTACH takes SHARE UPDATE EXCLUSIVE on the parent (readers go on) until commit.
create function gen_sellers_close(g int4) returns void language plpgsql as $$
declare
  s text := current_schema();
  p text := 'gen_sellers_' || g;
begin
  execute format('alter table %I.gen_sellers_filling rename to %I', s, p);
  execute format('alter table %I.%I add constraint %I primary key (generation, seller_address)', s, p, p || '_pkey');
  execute format('create index %I on %I.%I (generation, verified_revenue_30d_micro desc, seller_no)',
                 p || '_by_revenue', s, p);
  execute format('create index %I on %I.%I (generation, (coalesce(external_revenue_30d_micro, ''-1''::numeric)) desc, seller_no)',
                 p || '_by_external', s, p);
  execute format('create index %I on %I.%I (generation, payments_30d desc, seller_no)', p || '_by_payments', s, p);
  execute format('create index %I on %I.%I (generation, payers_30d desc, seller_no)', p || '_by_payers', s, p);
  execute format('create index %I on %I.%I (generation, rank) where rank is not null', p || '_rank', s, p);
  execute format('alter table %I.gen_sellers attach partition %I.%I for values in (%s)', s, s, p, g);
end
$$;

-- Every stored generation's rows, copied in address order (seller_no is that order: migration 0043).
do $$
declare
  g int4;
begin
  for g in select distinct generation from gen_sellers_unpartitioned order by 1 loop
    perform gen_sellers_open(g);
    execute 'insert into gen_sellers_filling select * from gen_sellers_unpartitioned where generation = $1 order by seller_no'
      using g;
    perform gen_sellers_close(g);
  end loop;
end
$$;

-- Migration 0035's view, word for word, now over the new table.
create or replace view gen_listings as
select f.generation, f.listing_id, f.seller_address, f.verifiability, f.resource_url, f.title, f.network,
       f.description, f.category, f.category_source, f.tier, f.evidence_state, f.verified_revenue_30d_micro,
       f.median_payment_30d_micro, f.farm_flag, f.farm_reasons, f.sibling_listings
  from gen_listings_fixed f
union all
select g.generation,
       l.listing_id,
       case when i.address is null then l.seller_address end,
       case when i.address is null then l.verifiability else 'other_rail' end,
       l.resource_url,
       l.title,
       l.network,
       l.description,
       l.category,
       l.category_source,
       coalesce(s.tier, 'listed_only'),
       coalesce(s.evidence_state, 'not_observed'),
       s.verified_revenue_30d_micro,
       s.median_payment_30d_micro,
       s.farm_flag,
       s.farm_reasons,
       coalesce(s.listing_count, 0)
  from generations g
  join catalog_listings l on l.snapshot_id = g.catalog_snapshot_id
  left join x402_infrastructure i
    on split_part(g.method_version, '.', 1)::int >= 3 and i.address = l.pay_to
  left join gen_sellers s
    on s.generation = g.generation and s.seller_address = l.seller_address and i.address is null
 where g.listings_derived;

drop table gen_sellers_unpartitioned;

-- Deleting generations drops their partitions (the rows go with them, no per-row delete). DROP
-- takes ACCESS EXCLUSIVE on the parent until commit, so API reads of gen_sellers wait for the
-- deleting transaction. Prune (src/publish/prune.ts) runs long at times (27 s once at 10M, when it
-- drops a fact partition and prunes the addresses): it sets x402tally.gen_sellers_drop to 'later'
-- in its transaction, which keeps the partitions here, and drops them after its commit, in a short
-- transaction of their own, with gen_sellers_drop_unused(). Any other delete drops them at once.
create or replace function gen_sellers_follow_generations() returns trigger language plpgsql as $$
declare
  g int4;
begin
  if current_setting('x402tally.gen_sellers_drop', true) = 'later' then
    return null;
  end if;
  for g in select generation from gone order by 1 loop
    execute format('drop table if exists %I.%I', current_schema(), 'gen_sellers_' || g);
  end loop;
  return null;
end
$$;

-- The partitions of gen_sellers whose generation is no longer stored, dropped; their generations.
create function gen_sellers_drop_unused() returns setof int4 language plpgsql as $$
declare
  g int4;
begin
  for g in select p.g
             from (select (regexp_match(c.relname, '^gen_sellers_([0-9]+)$'))[1]::int4 as g
                     from pg_inherits i join pg_class c on c.oid = i.inhrelid
                    where i.inhparent = format('%I.gen_sellers', current_schema())::regclass) p
            where p.g is not null
              and not exists (select 1 from generations x where x.generation = p.g)
            order by 1 loop
    execute format('drop table %I.%I', current_schema(), 'gen_sellers_' || g);
    return next g;
  end loop;
end
$$;

-- A generation's directory rows (gen_listings) are no longer copied per generation: a listing row
-- is its catalog listing (the generation's snapshot) with its seller's numbers (gen_sellers of
-- the generation), exactly what method step 3 wrote (sql/method/03_listings.sql), so the view
-- below derives it on read. A run every 15 minutes no longer writes ~60,000 listing rows (about
-- 1.1 s of a steady run with 60,000 listings: bench/method.ts, docs/benchmarks.md).
-- Rows written before this migration (and by test fixtures) stay in gen_listings_fixed; a
-- generation whose step 3 ran under this migration has `listings_derived` set.
alter table gen_listings rename to gen_listings_fixed;
alter index gen_listings_pkey rename to gen_listings_fixed_pkey;
alter index gen_listings_category rename to gen_listings_fixed_category;
alter index gen_listings_seller rename to gen_listings_fixed_seller;

alter table generations add column listings_derived boolean not null default false;

-- a directory page filtered by category reads the snapshot's listings in listing_id order
create index catalog_listings_category on catalog_listings (snapshot_id, category, listing_id);
-- (a seller's listings, for its profile and display names, use catalog_listings_seller of 0001)

create view gen_listings as
select f.generation, f.listing_id, f.seller_address, f.verifiability, f.resource_url, f.title, f.network,
       f.description, f.category, f.category_source, f.tier, f.evidence_state, f.verified_revenue_30d_micro,
       f.median_payment_30d_micro, f.farm_flag, f.farm_reasons, f.sibling_listings
  from gen_listings_fixed f
union all
select g.generation,
       l.listing_id,
       l.seller_address,
       l.verifiability,
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
  left join gen_sellers s on s.generation = g.generation and s.seller_address = l.seller_address
 where g.listings_derived;

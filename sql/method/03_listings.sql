-- Method 1.0.0, step 3: the listing rows of the directory. A base_usdc row carries its seller's
-- metrics (seller-attributed, not per listing); an other_rail row carries nulls.

insert into gen_listings (
  generation, listing_id, seller_address, verifiability, resource_url, title, network,
  description, category, category_source, tier, evidence_state, verified_revenue_30d_micro,
  median_payment_30d_micro, farm_flag, farm_reasons, sibling_listings)
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
  from m_gen g
  join catalog_listings l
    on l.snapshot_id = g.catalog_snapshot_id
  left join gen_sellers s
    on s.generation = g.generation
   and s.seller_address = l.seller_address;

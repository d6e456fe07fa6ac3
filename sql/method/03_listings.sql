-- Method 1.0.0, step 3: the listing rows of the directory. A base_usdc row carries its seller's
-- metrics (seller-attributed, not per listing); an other_rail row carries nulls.
-- The rows are the view gen_listings (migration 0018): each listing of the generation's catalog
-- snapshot with its seller's row of gen_sellers (step 2): tier and evidence state (listed_only and
-- not_observed without one), revenue, median, farm flag and reasons, and the seller's listing
-- count as sibling_listings. This step marks the generation as one whose rows are derived so.

update generations
   set listings_derived = true
 where generation = (select generation from m_gen);

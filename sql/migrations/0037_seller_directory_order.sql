-- The seller directory (GET /api/v1/directory, src/api/read/directory.ts) serves every seller of
-- a generation in one of four orders, each descending with ties by seller_address ascending. One
-- index per order lets a page be read in order from where the previous one ended (a keyset
-- cursor), so neither the first page nor a deep one sorts the generation's sellers per request.
-- The keys are published columns, unchanged: no number of any generation changes, and
-- generations published before this migration are served the same way.
-- external_revenue_30d_micro is null on 1.x and 2.x generations: coalesce(..., '-1') puts a null
-- after every revenue (revenues are >= 0), and the reader orders by the same expression.
create index gen_sellers_by_revenue on gen_sellers (generation, verified_revenue_30d_micro desc, seller_address);
create index gen_sellers_by_external on gen_sellers
  (generation, (coalesce(external_revenue_30d_micro, '-1'::numeric)) desc, seller_address);
create index gen_sellers_by_payments on gen_sellers (generation, payments_30d desc, seller_address);
create index gen_sellers_by_payers on gen_sellers (generation, payers_30d desc, seller_address);

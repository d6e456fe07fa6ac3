-- Method 3.x's rule "x402 infrastructure is never a seller" (SPEC section 2, "Method 3.0.0";
-- docs/METHOD.md 2.11.2), defined once, here, for everything that reads it: the method (no seller
-- of these addresses in a 3.x generation: sql/method/3.0.0/01_payments.sql), the listing rows of
-- a 3.x generation (the view gen_listings below, which the bundle's listings.ndjson is made from,
-- and the API's directory, src/api/read/listings.ts) and /meta's count `x402_contract_pay_to`.
-- Before this migration the rule lived in the API alone, so a 3.x bundle's listings.ndjson kept
-- such a listing `base_usdc` with a seller while the API served it `other_rail`.
--
-- The catalog snapshot is shared by every method version and keeps such a listing `base_usdc`
-- (2.x generations keep 2.x's rule): the rule is applied per generation, by its method version.
-- The addresses are the canonical ones on Base (lowercase); the contracts have the same address
-- on every EVM chain, and the demo and the tests place their stand-ins there too.
-- test/method/infrastructure3.test.ts checks the rows equal @x402/evm's addresses.
create table x402_infrastructure (
  address  text primary key,
  contract text not null
);
insert into x402_infrastructure (address, contract) values
  ('0x000000000022d473030f116ddee9f6b43ac78ba3', 'Permit2'),
  ('0x402085c248eea27d92e8b30b2c58ed07f9e20001', 'x402ExactPermit2Proxy'),
  ('0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002', 'x402UptoPermit2Proxy'),
  ('0x4020074e9df2ce1dee5a9c1b5c3f541d02a10003', 'x402BatchSettlement'),
  ('0x4020806089470a89826cb9fb1f4059150b550004', 'ERC3009DepositCollector'),
  ('0x4020425faf3b746c082c2f942b4e5159887b0005', 'Permit2DepositCollector');

-- The view of migration 0018 with the rule: under 3.x (the method version's major >= 3, as
-- src/api/read/classes.ts hasClasses decides it) a listing paid to x402 infrastructure is
-- other_rail, without seller and without any seller's numbers (tier listed_only, evidence state
-- not_observed, metrics and farm fields null, sibling_listings 0), as src/api/read/listings.ts
-- serves it. Columns, order and the fixed rows are unchanged.
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

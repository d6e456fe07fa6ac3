-- The seller directory's four orders (GET /api/v1/directory, src/api/read/directory.ts) kept as
-- each seller's place in them, a 4-byte number per order, instead of migration 0037's four indexes
-- on (generation, the order's key, seller_address). Those indexes held the 42-character address
-- and a numeric in every entry, ~70 bytes an entry, and were ~60% of the time and ~55% of the WAL
-- of method step 2's insert of a generation's 50,000 sellers (docs/benchmarks.md, "gen_sellers:
-- the directory's orders as places"). A place is the seller's position, from 1, among every seller
-- of its generation in that order: the order's key descending, ties by seller_address ascending
-- (external revenue: a null, 1.x and 2.x, after every revenue). Places are unique per generation
-- and order, so an index on (generation, place) holds 16-byte entries, and a page continues after
-- the cursor's seller by its place alone (place > the cursor seller's place) where it compared the
-- key, then the address. No published number changes, no file of a bundle either (the places are
-- not published: they are the order of published columns); the directory serves every page as
-- before, of every generation.
--
-- Step 2 (sql/method/02_sellers.sql) numbers a new generation's sellers as it inserts them.
-- gen_sellers_set_places(g) numbers generation g's rows from their published columns: this
-- migration uses it for every stored generation, and the test fixtures that insert gen_sellers
-- rows by hand call it after them. It orders by seller_address in the column's collation, as the
-- reader before this migration did; step 2 orders by the snapshot's seller number, the address in
-- byte order, the rank's tie-break: the same order for addresses, which are 0x and 40 lowercase
-- hex digits.
--
-- One transaction (src/db/migrate.ts): killed, it leaves the table as it was, and run again it
-- starts over. It rewrites every row once (every retained generation's sellers: at 10M payments
-- and 48 generations, 2.4M rows), so the table needs its size again on disk until a VACUUM, and
-- the API waits on the table's lock until it commits. Both `run` and `migrate` apply it.
drop index gen_sellers_by_revenue;
drop index gen_sellers_by_external;
drop index gen_sellers_by_payments;
drop index gen_sellers_by_payers;

alter table gen_sellers
  add column place_revenue  int4,  -- verified_revenue_30d_micro desc, seller_address
  add column place_external int4,  -- coalesce(external_revenue_30d_micro, -1) desc, seller_address
  add column place_payments int4,  -- payments_30d desc, seller_address
  add column place_payers   int4;  -- payers_30d desc, seller_address

create function gen_sellers_set_places(g int4) returns void language sql as $$
  update gen_sellers s
     set place_revenue = p.r, place_external = p.e, place_payments = p.n, place_payers = p.y
    from (select seller_address,
                 row_number() over (order by verified_revenue_30d_micro desc, seller_address) as r,
                 row_number() over (order by coalesce(external_revenue_30d_micro, '-1'::numeric) desc,
                                             seller_address) as e,
                 row_number() over (order by payments_30d desc, seller_address) as n,
                 row_number() over (order by payers_30d desc, seller_address) as y
            from gen_sellers
           where generation = g) p
   where s.generation = g and s.seller_address = p.seller_address
$$;

select gen_sellers_set_places(generation) from (select distinct generation from gen_sellers) x;

alter table gen_sellers
  alter column place_revenue set not null,
  alter column place_external set not null,
  alter column place_payments set not null,
  alter column place_payers set not null;

create index gen_sellers_place_revenue on gen_sellers (generation, place_revenue);
create index gen_sellers_place_external on gen_sellers (generation, place_external);
create index gen_sellers_place_payments on gen_sellers (generation, place_payments);
create index gen_sellers_place_payers on gen_sellers (generation, place_payers);

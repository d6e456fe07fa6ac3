-- The seller directory's four orders (GET /api/v1/directory, src/api/read/directory.ts): each
-- descending, ties by seller_address ascending. Migration 0037 indexed them as (generation, key
-- desc, seller_address): the 42-character address in every entry of four indexes, compared as
-- text on every insert. Those indexes were ~60% of the time and ~55% of the WAL of method step 2's
-- insert of a generation's 50,000 sellers, every run (docs/benchmarks.md, "gen_sellers: the
-- directory's ties by seller number"). Now each row holds seller_no, a 4-byte number in address
-- order within its generation, and the indexes tie by it: (generation, key desc, seller_no). The
-- order is the same (the tie-break compares sellers of one generation only), so every page of
-- every generation is the same, and nothing published changes (seller_no is not published: no
-- bundle file or API body holds it).
--
-- Step 2 (sql/method/02_sellers.sql) writes the snapshot's seller number (seller_ord, the address
-- in byte order, the rank's tie-break). gen_sellers_set_numbers(g) numbers generation g's rows
-- 1..n by seller_address: this migration uses it for every stored generation, and the test
-- fixtures that insert gen_sellers rows by hand call it after them. Both give the address order
-- (addresses are 0x and 40 lowercase hex digits: byte order and the column's collation agree).
--
-- One transaction (src/db/migrate.ts): killed, it leaves the table as it was, and run again it
-- starts over. It rewrites every row once (every retained generation's sellers: at 10M payments
-- and 48 generations, 2.4M rows), so the table needs its size again on disk until a VACUUM, and
-- the API waits on the table's lock until it commits. Both `run` and `migrate` apply it.
drop index gen_sellers_by_revenue;
drop index gen_sellers_by_external;
drop index gen_sellers_by_payments;
drop index gen_sellers_by_payers;

alter table gen_sellers add column seller_no int4;

create function gen_sellers_set_numbers(g int4) returns void language sql as $$
  update gen_sellers s
     set seller_no = n.no
    from (select seller_address, row_number() over (order by seller_address) as no
            from gen_sellers
           where generation = g) n
   where s.generation = g and s.seller_address = n.seller_address
$$;

select gen_sellers_set_numbers(generation) from (select distinct generation from gen_sellers) x;

alter table gen_sellers alter column seller_no set not null;

create index gen_sellers_by_revenue on gen_sellers (generation, verified_revenue_30d_micro desc, seller_no);
create index gen_sellers_by_external on gen_sellers
  (generation, (coalesce(external_revenue_30d_micro, '-1'::numeric)) desc, seller_no);
create index gen_sellers_by_payments on gen_sellers (generation, payments_30d desc, seller_no);
create index gen_sellers_by_payers on gen_sellers (generation, payers_30d desc, seller_no);

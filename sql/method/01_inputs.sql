-- Method step 1 (every version): the inputs of one generation, as temporary tables of this transaction.
-- The generation number comes from the session setting x402tally.generation; its row in
-- `generations` (as-of point, window, catalog snapshot, constants) is already written.

-- JIT compilation costs more than it saves on these one-off queries.
set local jit = off;
-- The rows of a generation are known only at run time (they join through the generations row),
-- so the planner underestimates them and picks per-row index lookups; every step here is a bulk
-- pass over all of them, which hash joins do best.
set local enable_nestloop = off;
-- Sorts (medians, distinct counts, digest lines) of a million payments (~250 MB) stay in memory.
-- Only this transaction's statements get it; the server's own setting is untouched.
set local work_mem = '1GB';

create temp table m_gen on commit drop as
select g.generation,
       g.run_seq,
       g.catalog_snapshot_id,
       g.as_of_block,
       g.as_of_ts,
       g.window_start_ts,
       g.market_from_ts,
       (g.constants ->> 'evidence_min_payments')::int           as evidence_min_payments,
       (g.constants ->> 'evidence_min_payers')::int             as evidence_min_payers,
       (g.constants ->> 'farm_listing_threshold')::int          as farm_listing_threshold,
       (g.constants ->> 'farm_top_payer_share')::numeric        as farm_top_payer_share,
       (g.constants ->> 'farm_top_payer_min_payments')::int     as farm_top_payer_min_payments,
       -- method 2.0.0 only (null under 1.0.0): the length of a digest period
       (g.constants ->> 'digest_period_seconds')::bigint        as digest_period_seconds,
       -- method 3.0.0 only (null before): the seller_funded lookback and the farm's internal share
       (g.constants ->> 'funding_lookback_seconds')::bigint     as funding_lookback_seconds,
       (g.constants ->> 'farm_internal_share')::numeric         as farm_internal_share,
       -- the payments the method counts: `eip3009` (1.0.0, 2.0.0) unless the version's own step
       -- (sql/method/3.0.0/01_payments.sql) says `all_classes`; the derived state records it
       'eip3009'::text                                          as payment_set,
       -- what a 2.0.0 evidence line starts with, by class (1 eip3009 ... 4 batch_settlement):
       -- nothing (3.0.0's step names the class); read by m_payment_facts and by the digests'
       -- cold grouping (01b_digests.sql), so the rule is written here once per version
       array['', '', '', '']::text[]                           as evidence_prefixes
  from generations g
 where g.generation = current_setting('x402tally.generation')::int;

-- (one row: the steps join it, e.g. to pass run_seq to visible_at as a column, migration 0023,
-- and the planner must know it is one)
analyze m_gen;

-- The sellers of the catalog: one row per seller_address of a base_usdc listing, numbered in
-- byte order of the address. The steps below group and sort payments by this number rather than
-- by the 42-character address (on the 1M-payment benchmark, a per-seller pass over the payments
-- takes half the time): seller_id order is address order.
-- (kept per snapshot in catalog_snapshot_sellers, migration 0022: computed by the first
-- generation over a snapshot, read by the next ones)
insert into catalog_snapshot_sellers (snapshot_id, seller_id, seller_address, listing_count, categories)
select (select catalog_snapshot_id from m_gen),
       (row_number() over (order by c.seller_address))::int,
       c.*
  from (select l.seller_address collate "C"                     as seller_address,
               count(*)::int                                      as listing_count,
               array_agg(distinct l.category order by l.category) as categories
          from catalog_listings l
         where l.snapshot_id = (select catalog_snapshot_id from m_gen)
           and l.verifiability = 'base_usdc'
         group by l.seller_address) c
 where not exists (select 1 from catalog_snapshot_sellers s where s.snapshot_id = (select catalog_snapshot_id from m_gen))
    on conflict do nothing;

-- Each seller's address id (migration 0028: the work state is keyed by it), resolved once here,
-- by the index addresses_text on the address's text: one lookup per catalog seller, which costs
-- the same however many addresses the facts hold (a hash join would encode every one of them).
-- seller_ord is the snapshot's number (address byte order: the rank's tie-break). A seller no
-- stored transfer names has no addresses row, so no id (null): it has no payment, and the steps
-- read it as unpaid. The method adds no address: the facts' loader (sql/store/load_facts.sql) is
-- their only writer.
set local enable_nestloop = on;
set local enable_hashjoin = off;
set local enable_mergejoin = off;
create temp table m_catalog_sellers on commit drop as
select s.seller_id                    as seller_ord,
       a.address_id                   as seller_id,
       s.seller_address,
       s.listing_count,
       s.categories
  from catalog_snapshot_sellers s
  left join addresses a on '0x' || encode(a.address, 'hex') = s.seller_address collate "default"
 where s.snapshot_id = (select catalog_snapshot_id from m_gen);
set local enable_nestloop = off;
set local enable_hashjoin = on;
set local enable_mergejoin = on;

analyze m_catalog_sellers;

-- The catalog's seller set as one key (sha256 of the sorted addresses): the derived data built
-- over one set of sellers (market days, 2.0.0 global hours) is reused only under the same key.
create temp table m_sellers_key on commit drop as
select encode(sha256(convert_to(
         coalesce(string_agg(seller_address, ',' order by seller_address), ''), 'UTF8')), 'hex') as sellers_key
  from m_catalog_sellers;

-- The sets a cold read decides internal reasons by (method 3.0.0, whose m_cold_facts reads them;
-- none before it): the fundings visible at this run's seq, and the (seller, payer) pairs that can
-- have an internal reason. Created empty here so that every version's step 1 can name them;
-- filled by step 1a from the views m_cold_funding_rows and m_cold_operator_pairs only when the run
-- is cold (a steady run builds nothing). Those views, and the payments' views, are step 1's
-- payments file (sql/method/01_payments.sql, or a version's own, which replaces it).
create temp table m_cold_fundings (seller_id int4, payer_id int4, block_number int8, log_index int4,
                                   block_timestamp int8) on commit drop;
create temp table m_cold_pairs (seller_id int4, payer_id int4, funded boolean, operator boolean) on commit drop;

-- The sellers of a catalog snapshot as the method numbers them (sql/method/01_inputs.sql: one row
-- per seller_address of a base_usdc listing, seller_id in byte order of the address). Derived
-- data: written by the first generation computed over the snapshot and read by the later ones (a
-- snapshot never changes, and an unchanged catalog keeps its snapshot), instead of grouping the
-- snapshot's listings again every 15 minutes (60,000 listings: 0.1-0.3 s a run).
create table catalog_snapshot_sellers (
  snapshot_id     bigint  not null references catalog_snapshots on delete cascade,
  seller_id       integer not null,
  seller_address  text collate "C" not null,
  listing_count   integer not null,
  categories      text[]  not null,
  primary key (snapshot_id, seller_id)
);

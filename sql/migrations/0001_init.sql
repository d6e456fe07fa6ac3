-- x402-tally schema, version 1.
-- Conventions: addresses and hashes are lowercase 0x hex text; money is numeric(78,0) micro-USDC;
-- block timestamps are unix seconds (bigint); block ranges are inclusive [from, to].

-- ---------------------------------------------------------------------------------------------
-- Catalog snapshots: what a run read from the Bazaar, kept so a generation stays auditable.
-- ---------------------------------------------------------------------------------------------
create table catalog_snapshots (
  snapshot_id     bigint generated always as identity primary key,
  source          text        not null,  -- URL redacted to its host, or a file name
  fetched_at      timestamptz not null,
  sha256          text        not null,  -- sha256 of the canonical NDJSON of the items (docs/METHOD.md)
  items_count     integer     not null,
  listings_count  integer     not null,
  rejected_count  integer     not null
);

create table catalog_items (
  snapshot_id  bigint  not null references catalog_snapshots on delete cascade,
  item_index   integer not null,           -- position in the input, from 0
  item_json    text    not null,           -- the item as read, canonical JSON (sorted keys)
  primary key (snapshot_id, item_index)
);

create table catalog_listings (
  snapshot_id        bigint  not null references catalog_snapshots on delete cascade,
  listing_id         text    not null,
  item_index         integer not null,
  accept_index       integer not null,
  resource_url       text    not null,
  network            text    not null,     -- as the item wrote it
  canonical_network  text    not null,     -- CAIP-2
  pay_to             text    not null,     -- lowercase when an EVM address
  asset              text    not null,     -- canonical: lowercase 0x address for EVM
  verifiability      text    not null check (verifiability in ('base_usdc', 'other_rail')),
  seller_address     text,                 -- lowercase payTo when base_usdc, else null
  title              text,
  description        text,
  category           text    not null,
  category_source    text    not null check (category_source in ('auto', 'seller_asserted')),
  primary key (snapshot_id, listing_id),
  check ((verifiability = 'base_usdc') = (seller_address is not null))
);
create index catalog_listings_seller on catalog_listings (snapshot_id, seller_address);

create table catalog_rejects (
  snapshot_id   bigint  not null references catalog_snapshots on delete cascade,
  reject_index  integer not null,          -- order of rejection, from 0
  item_index    integer not null,
  accept_index  integer,                   -- null when the whole item was rejected
  reason        text    not null,          -- stable snake_case code, counted per snapshot
  detail        text    not null,          -- human text: which field and why
  primary key (snapshot_id, reject_index)
);

-- ---------------------------------------------------------------------------------------------
-- Chain facts: raw USDC logs as read from the chain. Append-only; a reorg marks rows removed
-- (removed_seq) instead of deleting them, so a published generation keeps seeing exactly the
-- rows it was computed from: a generation with run_seq R sees the rows with
-- added_seq <= R and (removed_seq is null or removed_seq > R).
-- ---------------------------------------------------------------------------------------------
create sequence ingest_seq;  -- one value per run; stamps the rows the run adds or removes

create table chain_blocks (
  block_number     bigint not null,
  block_hash       text   not null,
  block_timestamp  bigint not null,
  added_seq        bigint not null,
  removed_seq      bigint,
  primary key (block_number, block_hash)
);

create table usdc_transfers (
  tx_hash          text          not null,
  log_index        integer       not null,
  block_hash       text          not null,
  block_number     bigint        not null,
  block_timestamp  bigint        not null,
  from_address     text          not null,
  to_address       text          not null,
  value            numeric(78,0) not null check (value >= 0),
  added_seq        bigint        not null,
  removed_seq      bigint,
  primary key (tx_hash, log_index, block_hash)
);
create index usdc_transfers_to on usdc_transfers (to_address, block_number);

create table usdc_authorizations (
  tx_hash       text    not null,
  log_index     integer not null,
  block_hash    text    not null,
  block_number  bigint  not null,
  authorizer    text    not null,
  nonce         text    not null,
  added_seq     bigint  not null,
  removed_seq   bigint,
  primary key (tx_hash, log_index, block_hash)
);
create index usdc_authorizations_tx on usdc_authorizations (tx_hash, authorizer);

-- What has been indexed for each seller: every block with number in [from_block, to_block] and,
-- equivalently for day arithmetic, every block with timestamp >= from_ts up to to_block.
create table seller_coverage (
  seller_address  text   primary key,
  from_block      bigint not null,
  from_ts         bigint not null,
  to_block        bigint not null,
  check (from_block <= to_block + 1)
);

-- ---------------------------------------------------------------------------------------------
-- Generations: immutable computed snapshots; the API serves the one `published_pointer` names.
-- ---------------------------------------------------------------------------------------------
create table generations (
  generation           integer     primary key,
  status               text        not null check (status in ('building', 'ready', 'published')),
  run_seq              bigint      not null,  -- the chain facts it sees (see above)
  method_version       text        not null,
  generated_at         timestamptz not null,
  published_at         timestamptz,
  as_of_block          bigint      not null,
  as_of_block_hash     text        not null,
  as_of_ts             bigint      not null,
  window_seconds       bigint      not null,
  window_start_ts      bigint      not null,  -- as_of_ts - window_seconds (exclusive)
  market_from_ts       bigint      not null,  -- start of the UTC day holding window_start_ts
  catalog_snapshot_id  bigint      not null references catalog_snapshots,
  catalog_sha256       text        not null,
  evidence_sha256      text,                  -- set by the method
  constants            jsonb       not null,
  sources              jsonb       not null   -- per-source freshness, as /api/v1/meta serves it
);

create table published_pointer (
  singleton   boolean primary key default true check (singleton),
  generation  integer not null references generations
);

create table gen_sellers (
  generation                 integer       not null references generations on delete cascade,
  seller_address             text          not null,
  listing_count              integer       not null,
  payments_30d               integer       not null,
  payers_30d                 integer       not null,
  verified_revenue_30d_micro numeric(78,0) not null,
  median_payment_30d_micro   numeric(78,0),
  evidence_state             text          not null,
  tier                       text          not null,
  farm_flag                  smallint      not null,
  farm_reasons               text,         -- JSON array as text, null when farm_flag = 0
  rank                       integer,
  categories                 text[]        not null,
  evidence_sha256            text          not null,
  first_payment_ts           bigint,
  last_payment_ts            bigint,
  first_block                bigint,
  last_block                 bigint,
  primary key (generation, seller_address)
);
create index gen_sellers_rank on gen_sellers (generation, rank) where rank is not null;

create table gen_listings (
  generation                 integer       not null references generations on delete cascade,
  listing_id                 text          not null,
  seller_address             text,
  verifiability              text          not null,
  resource_url               text          not null,
  title                      text,
  network                    text          not null,
  description                text,
  category                   text          not null,
  category_source            text          not null,
  tier                       text          not null,
  evidence_state             text          not null,
  verified_revenue_30d_micro numeric(78,0),
  median_payment_30d_micro   numeric(78,0),
  farm_flag                  smallint,
  farm_reasons               text,
  sibling_listings           integer       not null,
  primary key (generation, listing_id)
);
create index gen_listings_category on gen_listings (generation, category, listing_id);
create index gen_listings_seller on gen_listings (generation, seller_address);

create table gen_market_daily (
  generation            integer       not null references generations on delete cascade,
  day                   date          not null,
  payments              integer       not null,
  volume_micro          numeric(78,0) not null,
  payers                integer       not null,
  sellers_paid          integer       not null,
  median_payment_micro  numeric(78,0),
  tracked_sellers       integer       not null,
  tracked_listings      integer       not null,
  primary key (generation, day)
);

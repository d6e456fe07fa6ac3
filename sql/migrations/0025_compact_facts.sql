-- The compact fact layout (docs/data-model.md, "The compact layout"), step A of three: the new
-- tables, empty, and the state of the copy. Nothing reads them yet: the views still read
-- usdc_transfers, usdc_authorizations and chain_blocks until migration 0026 switches them, so a
-- `serve` running through this keeps serving the old layout. Cheap: applied by `run` and `migrate`.
--
-- Not partitioned yet: every key and index already starts with, or holds, block_id, so the tables
-- can become range-partitioned by block_id (the design's weekly partitions) without changing a
-- key; the partitions, and pruning by dropping them, come with the prune work of issue 21.

-- Every address a fact refers to, once (20 bytes). Ids are never reused (an identity), so a stale
-- id can never alias another address; rows are added by the store and never updated.
create table addresses (
  address_id  int4  generated always as identity primary key,
  address     bytea not null unique
);
-- The views print addresses as lowercase 0x text ('0x' || encode(address, 'hex')); a lookup of a
-- seller by that text (the method's per-seller reads, the evidence endpoint) finds its id here.
create index addresses_text on addresses (('0x' || encode(address, 'hex')));

-- One row per block VERSION: a block (number, hash) as stored by one run. block_id =
-- block_number * 2^20 + version, so block ids sort like the chain and a block-number range is an
-- id range. Visibility lives here: every transfer inherits added_seq/removed_seq from its block
-- version (a generation with run_seq R sees a version when added_seq <= R and (removed_seq is null
-- or removed_seq > R)). A later run that stores more logs in a stored block adds a version of its
-- own, so the new logs stay invisible to the generations computed before them.
create table blocks (
  block_id         int8  not null primary key,
  block_number     int8  not null,
  block_timestamp  int8  not null,                 -- unix seconds
  added_seq        int8  not null,
  removed_seq      int8,
  block_hash       bytea not null,                 -- 32 bytes
  check (block_id >> 20 = block_number)
);
create index blocks_ts on blocks (block_timestamp);   -- the window's edges (steps 1a, 4, digests)
create index blocks_added_seq on blocks (added_seq);  -- facts changed since a seq
create index blocks_removed_seq on blocks (removed_seq) where removed_seq is not null;

-- One USDC Transfer log paying a seller, with the AuthorizationUsed that pairs it folded in.
-- Columns in alignment order (8-byte, 4-byte, 2-byte, then the byteas): no padding.
create table transfers (
  value           int8  not null check (value >= 0),  -- micro-USDC, < 2^63 (the sync refuses more)
  block_id        int8  not null,                  -- blocks
  log_index       int4  not null,
  from_id         int4  not null,                  -- addresses
  to_id           int4  not null,                  -- addresses
  pair_log_index  int4,                            -- the AuthorizationUsed that decided class; null when unpaired
  class           int2  not null check (class in (0, 1)),  -- 0 unpaired, 1 EIP-3009 (rule 3); 3.0.0 adds 2, 3
  tx_hash         bytea not null,                  -- 32 bytes
  auth_nonce      bytea,                           -- the AuthorizationUsed nonce (32 bytes), class 1 only
  primary key (block_id, log_index)
);
create index transfers_to on transfers (to_id, block_id);  -- a seller's payments in chain order

-- The copy of the old tables' rows (src/db/compact-copy.ts, run by `migrate` only): block numbers
-- [next_block, top_block) are still to copy. Old tables that are empty (a new database) leave
-- nothing to copy, and migration 0026 applies at once.
create table compact_copy (
  id          boolean primary key default true check (id),
  next_block  int8 not null,
  top_block   int8 not null
);
insert into compact_copy (next_block, top_block)
select coalesce(min(n), 0), coalesce(max(n) + 1, 0)
  from (select min(block_number) as n from chain_blocks
        union all select max(block_number) from chain_blocks
        union all select min(block_number) from usdc_transfers
        union all select max(block_number) from usdc_transfers) x;

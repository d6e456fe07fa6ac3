-- The sync of method 3.0.0's streams (issue 22): what each stream covers, and the Permit2 proxy
-- pairings kept for transfers stored later (docs/data-model.md, "3.0.0's other streams").

-- Coverage of the streams read for every address at once: the proxies' settlements
-- ('x402_proxies', over the window), the batch contract's claims ('x402_claims', over the window)
-- and its ChannelCreated logs ('x402_channels', from its deployment block on). One row a stream:
-- [from_block, to_block] read and stored, from_ts the time the coverage starts at (0 from block 0),
-- as seller_coverage's. The sync extends to_block chunk by chunk in the chunk's transaction; a
-- reorg pulls it back; a prune moves from_block past the dropped fact partitions.
create table stream_coverage (
  from_block  int8 not null,
  from_ts     int8 not null,
  to_block    int8 not null,
  stream      text primary key check (stream in ('x402_proxies', 'x402_claims', 'x402_channels'))
);

-- Coverage of each seller's outgoing USDC Transfers (seller_outgoing): from the first block of the
-- UTC day holding (window start - funding_lookback_seconds) to the as-of block, as seller_coverage
-- for its incoming ones.
create table seller_outgoing_coverage (
  from_block      int8 not null,
  from_ts         int8 not null,
  to_block        int8 not null,
  seller_address  text primary key                 -- lowercase 0x hex
);

-- Every Permit2 proxy log (Settled() / SettledWithPermit()) of the window, with the USDC Transfer
-- its transaction's receipt pairs it with: the last one before it. Kept for every payee, not only
-- the catalog's sellers, so that a seller added to the catalog later has its past transfers stored
-- with the right class without reading the receipts again (src/sync/streams.ts; the cost, one row
-- per proxy settlement of the window, in docs/data-model.md). The transfer's class is decided from
-- here when it is stored (sql/store/store_chunk.sql), and a transfer stored before its pairing
-- (a database synced before this stream existed) is given its class when the pairing is stored.
-- Own block and visibility, like seller_outgoing: a reorg marks it removed; pruned with the facts.
create table x402_proxy_pairings (
  block_number        int8     not null,
  added_seq           int8     not null,
  removed_seq         int8,
  log_index           int4     not null,         -- the proxy log
  transfer_log_index  int4     not null,         -- the paired USDC Transfer
  class               int2     not null check (class in (2, 3)),  -- 2 exact proxy, 3 upto proxy
  tx_hash             bytea    not null,         -- 32 bytes
  block_hash          bytea    not null,         -- 32 bytes
  primary key (block_number, log_index, added_seq)
);
create index x402_proxy_pairings_tx on x402_proxy_pairings (tx_hash, transfer_log_index) where removed_seq is null;

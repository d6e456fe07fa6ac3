-- The tables of method 3.0.0's chain streams (SPEC section 2, "Method 3.0.0"; issue 22), in the
-- compact layout of docs/data-model.md ("3.0.0's other streams"). Empty until the sync fills
-- them; methods 1.0.0 and 2.0.0 read none of them, and their views are unchanged (rule 3 there
-- stays `class = 1`).
--
-- Columns in alignment order (8-byte, 4-byte, then variable length): no padding.

-- Permit2 proxy settlements fold into `transfers` as classes 2 and 3: the proxy's `Settled()` /
-- `SettledWithPermit()` log pairs the last USDC Transfer before it in the transaction
-- (pair_log_index = the proxy log's index). A Transfer paired both by AuthorizationUsed and by a
-- proxy log is class 1 (SPEC "Details").
alter table transfers drop constraint transfers_class_check;
alter table transfers add constraint transfers_class_check check (class in (0, 1, 2, 3));
comment on column transfers.class is '0 unpaired, 1 eip3009, 2 permit2_exact, 3 permit2_upto';

-- One batch-settlement channel's configuration (ChannelConfig), once however often
-- `ChannelCreated` repeats it for the same channel id (SPEC: the same config). Every channel is
-- kept whatever its token (they are few, and a claim's channel must be known to be refused);
-- only claims of USDC channels become facts.
create table batch_channels (
  withdraw_delay          int8  not null,          -- uint40
  channel_id              int4  generated always as identity primary key,
  payer_id                int4  not null,          -- addresses
  payer_authorizer_id     int4  not null,          -- addresses
  receiver_id             int4  not null,          -- addresses
  receiver_authorizer_id  int4  not null,          -- addresses
  token_id                int4  not null,          -- addresses
  channel                 bytea not null unique,   -- the 32-byte channelId
  salt                    bytea not null           -- 32 bytes
);

-- Every `ChannelCreated` log of the batch contract since its deployment block. Not partitioned
-- and never pruned by time: the method needs every one from deployment on, and they are few. It
-- carries its own block and visibility (a row version per run that stored it) instead of a
-- block_id whose partition could be dropped; a reorg marks it removed by block number and hash,
-- as it marks `blocks`.
create table batch_channel_created (
  block_number  int8  not null,
  added_seq     int8  not null,
  removed_seq   int8,
  log_index     int4  not null,
  channel_id    int4  not null references batch_channels,
  tx_hash       bytea not null,                    -- 32 bytes
  block_hash    bytea not null,                    -- 32 bytes
  primary key (block_number, log_index, added_seq)
);
create index batch_channel_created_channel on batch_channel_created (channel_id);

-- One `Claimed` log of the batch contract with claimAmount > 0, of a channel whose token is USDC:
-- one batch_settlement payment. Its block (visibility, number, hash, time) is a `blocks` row, as a
-- transfer's is, so it is partitioned, changed and pruned with `transfers`. Payer and receiver
-- are the channel's config (never Claimed.sender, the submitter), copied here when the claim is
-- stored so the method reads a claim as it reads a transfer.
create table batch_claims (
  value       int8  not null check (value > 0),    -- claimAmount, micro-USDC, < 2^63 (the sync refuses more)
  block_id    int8  not null,                      -- blocks
  log_index   int4  not null,
  channel_id  int4  not null,                      -- batch_channels
  from_id     int4  not null,                      -- addresses: the config's payer
  to_id       int4  not null,                      -- addresses: the config's receiver
  tx_hash     bytea not null,                      -- 32 bytes
  primary key (block_id, log_index)
) partition by range (block_id);
create index batch_claims_to on batch_claims (to_id, block_id);  -- a seller's claims in chain order

-- USDC Transfers FROM a seller (the seller_funded test: "S paid P before this payment, within
-- funding_lookback_seconds"). Its own table: its own coverage and its own horizon (the lookback
-- further back than the window), so it cannot lean on `blocks`, whose partitions are dropped at
-- the window's horizon. It carries its own block and visibility like batch_channel_created, and
-- is partitioned by block number on the same ranges as the facts (fact_partitioning), dropped
-- below the horizon minus the lookback. A transfer from one seller to another is stored here and
-- in `transfers`: one row per stream.
create table seller_outgoing (
  value            int8  not null check (value >= 0),  -- micro-USDC
  block_number     int8  not null,
  block_timestamp  int8  not null,                 -- unix seconds
  added_seq        int8  not null,
  removed_seq      int8,
  log_index        int4  not null,
  from_id          int4  not null,                 -- addresses: the seller
  to_id            int4  not null,                 -- addresses
  tx_hash          bytea not null,                 -- 32 bytes
  block_hash       bytea not null,                 -- 32 bytes
  primary key (block_number, log_index, added_seq)
) partition by range (block_number);
create index seller_outgoing_pair on seller_outgoing (from_id, to_id, block_number, log_index);

-- As migration 0027's function, with batch_claims beside blocks and transfers (the same block-id
-- ranges, created and dropped together).
create or replace function fact_partitions_cover(block_numbers int8[]) returns integer
language plpgsql volatile as $$
declare
  width    int8;
  first    int8;
  created  integer := 0;
  part     text;
  parent   text;
begin
  select width_blocks into strict width from fact_partitioning;
  for first in select distinct n - n % width from unnest(block_numbers) as u(n) where n is not null order by 1 loop
    if to_regclass(format('%I.%I', current_schema(), 'blocks_from_' || first)) is null
       or to_regclass(format('%I.%I', current_schema(), 'transfers_from_' || first)) is null
       or to_regclass(format('%I.%I', current_schema(), 'batch_claims_from_' || first)) is null then
      perform pg_advisory_xact_lock(402000027, hashtext(current_schema()));
      foreach parent in array array['blocks', 'transfers', 'batch_claims'] loop
        part := parent || '_from_' || first;
        if to_regclass(format('%I.%I', current_schema(), part)) is null then
          execute format('create table %I.%I partition of %I.%I for values from (%s) to (%s)',
                         current_schema(), part, current_schema(), parent,
                         first * 1048576, (first + width) * 1048576);
          created := created + 1;
        end if;
      end loop;
    end if;
  end loop;
  return created;
end
$$;

-- The partitions of seller_outgoing that hold these block numbers, when missing (named
-- seller_outgoing_from_<first block number>, bounds in block numbers); the same locking rule as
-- fact_partitions_cover: call it first in the transaction that then inserts.
create function outgoing_partitions_cover(block_numbers int8[]) returns integer
language plpgsql volatile as $$
declare
  width    int8;
  first    int8;
  created  integer := 0;
  part     text;
begin
  select width_blocks into strict width from fact_partitioning;
  for first in select distinct n - n % width from unnest(block_numbers) as u(n) where n is not null order by 1 loop
    part := 'seller_outgoing_from_' || first;
    if to_regclass(format('%I.%I', current_schema(), part)) is null then
      perform pg_advisory_xact_lock(402000027, hashtext(current_schema()));
      if to_regclass(format('%I.%I', current_schema(), part)) is null then
        execute format('create table %I.%I partition of %I.seller_outgoing for values from (%s) to (%s)',
                       current_schema(), part, current_schema(), first, first + width);
        created := created + 1;
      end if;
    end if;
  end loop;
  return created;
end
$$;

-- Existing fact partitions get their batch_claims partner.
select fact_partitions_cover(array(
  select substring(c.relname from '^blocks_from_([0-9]+)$')::int8
    from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
   where i.inhparent = 'blocks'::regclass));

-- The published columns of method 3.0.0 (SPEC "Method 3.0.0"), null on every 1.x and 2.x
-- generation (SPEC "Versions side by side"). Per-class figures are arrays in the order of the
-- classes' codes: [eip3009, permit2_exact, permit2_upto, batch_settlement].
alter table gen_sellers
  add column external_revenue_30d_micro             numeric(78,0),
  add column external_payments_30d                  integer,
  add column external_payers_30d                    integer,
  add column class_payments_30d                     integer[],
  add column class_revenue_30d_micro                numeric(78,0)[],
  add column internal_seller_funded_payments_30d    integer,
  add column internal_seller_funded_revenue_30d_micro numeric(78,0),
  add column internal_seller_funded_payers_30d      integer,
  add column internal_same_operator_payments_30d    integer,
  add column internal_same_operator_revenue_30d_micro numeric(78,0),
  add column internal_same_operator_payers_30d      integer;
alter table gen_market_daily add column external_volume_micro numeric(78,0);

-- The evidence rows gain `class` and `internal_reason` (SPEC "Digests"): null here, for the
-- generations of methods 1.x and 2.x, whose payments are EIP-3009 only and carry no reason. The
-- migration that computes method 3.0.0 defines them for its generations.
create or replace view generation_payments as
select g.generation,
       t.tx_hash,
       t.log_index,
       t.block_number,
       t.block_hash,
       t.block_timestamp,
       t.payer,
       t.seller_address,
       t.value,
       t.block_timestamp > g.window_start_ts as in_window,
       null::text as class,
       null::text as internal_reason
  from generations g
  join (select distinct snapshot_id, seller_address
          from catalog_listings
         where verifiability = 'base_usdc') s
    on s.snapshot_id = g.catalog_snapshot_id
  join verified_transfers t
    on t.seller_address = s.seller_address
   and t.block_number <= g.as_of_block
   and t.block_timestamp >= g.market_from_ts
   and t.block_timestamp <= g.as_of_ts
   and visible_at(t.added_seq, t.removed_seq, g.run_seq);

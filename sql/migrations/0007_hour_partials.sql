-- Incremental generations (method 2.0.0): derived per-hour digests of closed hours, reused by the
-- next run instead of being sorted again. Derived data only: rebuilt from the facts when missing,
-- never trusted over them (sql/method/2.0.0/01b_digests.sql keeps them exact; docs/METHOD.md 2.10).
--
-- A closed hour lies wholly inside a generation's window and ended at or before its as-of time:
-- no payment can enter or leave it except by a change of the facts, and every change of a fact is
-- a new added_seq or removed_seq (facts are append-only; a reorg sets removed_seq). The partials
-- below are valid for the facts visible at part_state.checked_seq; the next run looks only at the
-- facts whose added_seq or removed_seq is newer, and rebuilds the (seller, hour) they touch.

-- One row: the seq the partials are valid at, their period, the hour range [lo, hi) they cover
-- for every seller of part_sellers, and the key (sha256 of the sorted addresses) of the seller
-- set the global hours were built over.
create table part_state (
  id              boolean primary key default true check (id),
  checked_seq     bigint  not null,
  period_seconds  bigint  not null,
  lo              bigint  not null,
  hi              bigint  not null,
  sellers_key     text    not null
);

-- The sellers whose hours [lo, hi) are all built (a hour without a row had no payment).
create table part_sellers (
  seller_address  text primary key
);

-- One seller's closed hour with at least one verified payment: count and sha256 of its sorted lines.
create table part_seller_hours (
  seller_address  text    not null,
  hour_start      bigint  not null,
  payments        integer not null,
  sha256          text    not null,
  primary key (seller_address, hour_start)
);

-- A closed hour over all sellers of part_state.sellers_key.
create table part_hours (
  hour_start  bigint  primary key,
  payments    integer not null,
  sha256      text    not null
);

-- The facts changed since a seq: read by each run (new blocks, reorgs), so it must not scan.
create index usdc_transfers_added_seq on usdc_transfers (added_seq);
create index usdc_transfers_removed_seq on usdc_transfers (removed_seq) where removed_seq is not null;

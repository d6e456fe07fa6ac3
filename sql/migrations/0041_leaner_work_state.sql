-- Fewer bytes per payment, every published number the same (issue 21; docs/data-model.md,
-- "Work state", and docs/benchmarks.md, "Fewer bytes per payment (migration 0041)").
--
-- 1. acc_reason_payers keeps the internal reasons only (1 seller_funded, 2 same_operator). Its
--    reason-0 (external) rows were one per (seller, payer) of the window, nearly the whole table
--    and a copy of acc_payers' keys: a (seller, payer) has an external payment exactly when its
--    acc_payers count exceeds its internal counts, which step 1c now reads instead
--    (sql/method/3.0.0/01c_reasons.sql). Converted in place: the reason-0 rows are deleted, and
--    acc_reason_sellers (the distinct payers per reason, external included) and acc_state stay as
--    they are, exact for the same window, so the next run is not cold. Its count becomes an int4
--    (a (seller, payer)'s payments of one reason in one window; acc_day_payers' count is one too):
--    a 40-byte tuple instead of 48.
-- 2. acc_seller_days: payments and payers as int4 (one seller's payments and payers of one UTC
--    day; seller_daily_rows, which step 6 copies them into, holds them as int4 already): 8 bytes a
--    row less. Its columns keep their order (8-byte, then 4-byte, then the numeric): no padding.
-- 3. seller_coverage and seller_outgoing_coverage: every run of the sync moves every seller's
--    to_block, one new row version per seller per table. In full pages each version went to
--    another page, with a new entry in the primary key: after a few runs the tables held 533-643
--    bytes a row for ~100 of live row (docs/benchmarks.md). With half of each page free
--    (fillfactor 50) the new version stays on its page and no index entry is added (a heap-only
--    update: to_block is in no index), and the old version's space is reused by the next one.
--    The tables are small (one row a seller): copied into tables of the new setting, same names,
--    columns, keys and checks.
-- 4. transfers.auth_nonce goes (33 bytes a payment: a 96-byte tuple instead of 128). Nothing read
--    it: no view, method step, API body or bundle file; rule 3 was decided when the transfer was
--    stored (class), and the pairing AuthorizationUsed stays named by the transfer's own tx_hash and
--    its pair_log_index, from which an auditor reads the nonce in that log. A catalog-only change
--    (no rewrite of 10M rows): the rows stored before it keep the dropped column's bytes until
--    their partition is dropped (prune.ts: about the window and a week later), and a partition
--    created after it has no such column.
-- 5. x402_proxy_pairings_tx (tx_hash, transfer_log_index), ~50 bytes a pairing, goes: its one
--    reader, the store's probe for a staged transfer's pairing (sql/store/store_chunk.sql), now
--    reaches the pairings of the transfer's block by the primary key's prefix (block_number), a
--    few rows a block, and tests the transfer's log index, transaction and block hash on them.

-- 1.
delete from acc_reason_payers where reason = 0;
alter table acc_reason_payers alter column n type int4;

-- 2.
alter table acc_seller_days
  alter column payments type int4,
  alter column payers type int4;

-- 3.
alter table seller_coverage rename to seller_coverage_0040;
alter table seller_coverage_0040 rename constraint seller_coverage_pkey to seller_coverage_0040_pkey;
alter table seller_coverage_0040 rename constraint seller_coverage_check to seller_coverage_0040_check;
create table seller_coverage (
  seller_address  text   primary key,
  from_block      bigint not null,
  from_ts         bigint not null,
  to_block        bigint not null,
  check (from_block <= to_block + 1)
) with (fillfactor = 50);
insert into seller_coverage (seller_address, from_block, from_ts, to_block)
select seller_address, from_block, from_ts, to_block from seller_coverage_0040 order by seller_address;
drop table seller_coverage_0040;

alter table seller_outgoing_coverage rename to seller_outgoing_coverage_0040;
alter table seller_outgoing_coverage_0040 rename constraint seller_outgoing_coverage_pkey to seller_outgoing_coverage_0040_pkey;
create table seller_outgoing_coverage (
  from_block      int8 not null,
  from_ts         int8 not null,
  to_block        int8 not null,
  seller_address  text primary key                 -- lowercase 0x hex
) with (fillfactor = 50);
insert into seller_outgoing_coverage (from_block, from_ts, to_block, seller_address)
select from_block, from_ts, to_block, seller_address from seller_outgoing_coverage_0040 order by seller_address;
drop table seller_outgoing_coverage_0040;

-- 4.
alter table transfers drop column auth_nonce;

-- 5.
drop index x402_proxy_pairings_tx;

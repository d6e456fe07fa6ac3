-- The staging tables of one chunk (src/sync/store.ts): session-local, emptied by this script, which
-- every writer runs at the start of its transaction (the deletes at the end). Not `on commit delete
-- rows`: that truncated the files of every table that held rows at every chunk's commit, and the
-- next chunk extended them again, page by page: `IO:DataFileTruncate` on `commit` was the first
-- wait of every whole run (bench/indexer.ts; docs/benchmarks.md, "The staging tables"). Deleted
-- rows leave their pages in place; src/db/load-facts.ts, vacuumStagingTables, makes them reusable
-- every few chunks, so the files stop growing and are neither truncated nor extended.
-- Postgres fills them by COPY, PGlite (no COPY) by unnest; then store_chunk.sql moves them into
-- the fact tables. Text columns in byte order ("C"): store_chunk.sql's ORDER BY (the lock order)
-- then compares with memcmp rather than the database's locale; for lowercase hex both orders are
-- the same, and all writers use this one (on 200k staged transfers the sort went from ~0.6 s to
-- ~0.1 s of server CPU).
create temp table if not exists x402_stage_blocks (n int8, h text collate "C", ts int8) on commit preserve rows;
create temp table if not exists x402_stage_transfers (tx text collate "C", li int4, h text collate "C", n int8, ts int8,
                                                      f text collate "C", t text collate "C", v numeric) on commit preserve rows;
create temp table if not exists x402_stage_authorizations (tx text collate "C", li int4, h text collate "C", n int8,
                                                           au text collate "C", no text collate "C") on commit preserve rows;
-- The rows to load into the compact fact tables (sql/store/load_facts.sql), in the old layout's
-- text forms: a staged chunk (store_chunk.sql), a batch of the copy from the old tables
-- (src/db/compact-copy.ts), or a test's facts. Each transfer names the block version it belongs
-- to by (n, h, ts, added, removed); each block row is a version to keep even without transfers.
create temp table if not exists x402_load_blocks (n int8, h text collate "C", ts int8, added int8, removed int8) on commit preserve rows;
create temp table if not exists x402_load_transfers (tx text collate "C", li int4, h text collate "C", n int8, ts int8,
                                                     f text collate "C", t text collate "C", v numeric,
                                                     added int8, removed int8, class int2, pair_li int4,
                                                     nonce text collate "C") on commit preserve rows;
-- Empty at the start: what an earlier transaction of this session staged and committed is gone.
delete from x402_stage_blocks;
delete from x402_stage_transfers;
delete from x402_stage_authorizations;
delete from x402_load_blocks;
delete from x402_load_transfers;

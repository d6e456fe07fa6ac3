-- The staging tables of one chunk (src/sync/store.ts): session-local, emptied at every commit.
-- Postgres fills them by COPY, PGlite (no COPY) by unnest; then store_chunk.sql moves them into
-- the fact tables. Text columns in byte order ("C"): store_chunk.sql's ORDER BY (the lock order)
-- then compares with memcmp rather than the database's locale; for lowercase hex both orders are
-- the same, and all writers use this one (on 200k staged transfers the sort went from ~0.6 s to
-- ~0.1 s of server CPU).
create temp table if not exists x402_stage_blocks (n int8, h text collate "C", ts int8) on commit delete rows;
create temp table if not exists x402_stage_transfers (tx text collate "C", li int4, h text collate "C", n int8, ts int8,
                                                      f text collate "C", t text collate "C", v numeric) on commit delete rows;
create temp table if not exists x402_stage_authorizations (tx text collate "C", li int4, h text collate "C", n int8,
                                                           au text collate "C", no text collate "C") on commit delete rows;
-- The rows to load into the compact fact tables (sql/store/load_facts.sql), in the old layout's
-- text forms: a staged chunk (store_chunk.sql), a batch of the copy from the old tables
-- (src/db/compact-copy.ts), or a test's facts. Each transfer names the block version it belongs
-- to by (n, h, ts, added, removed); each block row is a version to keep even without transfers.
create temp table if not exists x402_load_blocks (n int8, h text collate "C", ts int8, added int8, removed int8) on commit delete rows;
create temp table if not exists x402_load_transfers (tx text collate "C", li int4, h text collate "C", n int8, ts int8,
                                                     f text collate "C", t text collate "C", v numeric,
                                                     added int8, removed int8, class int2, pair_li int4,
                                                     nonce text collate "C") on commit delete rows;

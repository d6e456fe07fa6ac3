-- Loads the rows of x402_load_blocks and x402_load_transfers (sql/store/stage.sql) into the
-- compact fact tables (migrations 0025, 0027): four statements, run in order in the caller's
-- transaction (src/db/load-facts.ts), each seeing what the one before wrote and what concurrent
-- writers committed. The sync (store_chunk.sql), the copy from the old tables
-- (src/db/compact-copy.ts) and the tests' fact writers all store facts through here.

-- 0. The partitions of `blocks` and `transfers` (migration 0027) that the rows need, when missing.
-- The sync creates them first in its chunk's transaction (src/db/load-facts.ts,
-- coverFactPartitions: before the transaction touches a fact table, so two chunks creating
-- partitions cannot deadlock); then this finds them all and takes no lock. It is here so that no
-- writer can miss it. (The copy of migration 0025's rows runs before 0027 and skips it.)
select fact_partitions_cover(array(select n from x402_load_blocks union select n from x402_load_transfers));

-- Each statement finds the stored rows its rows need by one index probe per row (the subqueries
-- with OFFSET 0, below), never by hashing the stored side. Left to choose, Postgres hashed it:
-- every address (50,000 at 200k payments, 130,000 at 1M) three times per chunk, and every block
-- stored in the chunk's block range by the other seller batches, which sync the same range (up to
-- ~30,000 per chunk late in a 200k backfill), so a chunk's cost grew with the table instead of
-- with the chunk. OFFSET 0 keeps a subquery from being pulled up into a join (the planner's
-- documented fence), so it runs per row, through the unique index or the primary key.

-- 1. New addresses, in byte order (concurrent writers take the unique index's locks in one
-- order). Only absent ones are offered, so the identity is not spent on addresses already there.
insert into addresses (address)
select a
  from (select decode(substr(f, 3), 'hex') as a from x402_load_transfers
        union
        select decode(substr(t, 3), 'hex') from x402_load_transfers) x
 where not exists (select 1 from addresses d where d.address = x.a offset 0)
 order by a
    on conflict do nothing;

-- 2. The block versions named, reusing a stored version with the same number, hash, time and seqs,
-- else adding the next version numbers of the block: the highest stored version + 1, 2, ... in a
-- fixed order, so the same rows always get the same ids. A version number reaching 2^20 fails
-- block_version_id (migration 0051; before it the check block_id >> 20 = block_number): the store
-- refuses rather than overflow.
-- (A concurrent chunk of the same run that added the same version first wins the conflict; this
-- chunk's transfers then join its row, which has the same number, hash, time and seqs.)
-- One probe of the block's stored versions per row (usually none or one) gives both the highest
-- version and whether one is the row's.
insert into blocks (block_id, block_timestamp, added_seq, removed_seq, block_hash)
select block_version_id(v.n, coalesce(m.top, -1)
         + dense_rank() over (partition by v.n order by v.added, v.h, v.ts, v.removed nulls first)),
       v.ts, v.added, v.removed, decode(substr(v.h, 3), 'hex')
  from (select n, h, ts, added, removed from x402_load_blocks
        union
        select n, h, ts, added, removed from x402_load_transfers) v
  left join lateral (select max(b.block_id) - v.n * 1048576 as top,
                            bool_or(b.block_hash = decode(substr(v.h, 3), 'hex')
                                    and b.block_timestamp = v.ts
                                    and b.added_seq = v.added
                                    and b.removed_seq is not distinct from v.removed) as stored
                       from blocks b
                      where b.block_id between v.n * 1048576 and v.n * 1048576 + 1048575) m on true
 where m.stored is not true
 order by 1
    on conflict (block_id) do nothing;

-- 3. The transfers, in key order, each into its block version; returns how many were stored and
-- how many found no version (the caller refuses the chunk then: never seen on one chain).
-- The addresses are there (statement 1, or a concurrent writer's committed row): a missing one
-- would fail the not-null check rather than drop the transfer.
-- (The pairing AuthorizationUsed's nonce is not kept since migration 0041: its transaction and
-- log index, tx_hash and pair_log_index, name that log.)
with stored as (
  insert into transfers (value, block_id, log_index, from_id, to_id, pair_log_index, class, tx_hash)
  select u.v::int8, b.block_id, u.li,
         (select a.address_id from addresses a where a.address = decode(substr(u.f, 3), 'hex')),
         (select a.address_id from addresses a where a.address = decode(substr(u.t, 3), 'hex')),
         u.pair_li, u.class, decode(substr(u.tx, 3), 'hex')
    from x402_load_transfers u
    join lateral (select b.block_id
                    from blocks b
                   where b.block_id between u.n * 1048576 and u.n * 1048576 + 1048575
                     and b.block_hash = decode(substr(u.h, 3), 'hex')
                     and b.block_timestamp = u.ts
                     and b.added_seq = u.added
                     and b.removed_seq is not distinct from u.removed
                  offset 0) b on true
   order by b.block_id, u.li
  returning class
)
select (select count(*) from stored)::int4 as transfers,
       (select count(*) from stored where class = 1)::int4 as authorized,
       (select count(*) from x402_load_transfers)::int4 - (select count(*) from stored)::int4 as unplaced

-- Fewer bytes per payment in the fact tables' indexes (issue 21; docs/data-model.md, "The fact
-- indexes"): measured at 1M payments (docs/benchmarks.md, "The fact indexes, leaner"), `blocks`
-- cost 154 bytes a block version, 52 of them in the three indexes this migration changes (143
-- after), and `transfers` 198 bytes a payment (195 after). The heaps and the columns do not
-- change, nor do the views.
--
-- 1. `blocks_added_seq` ("facts changed since a seq", read by the changed-fact scans of steps 1a,
--    4 and the 2.0.0 digests) becomes a BRIN index: 7.0 bytes a block as a B-tree (already
--    deduplicated: every block version of a run has the same seq), about 0.15 as BRIN. Block
--    versions are only appended, in seq order, so within a partition a page range holds few seqs
--    and a changed-fact scan reads the newest range or two of a partition (33 pages at 1M, the
--    same bitmap plan); a backfill's versions are appended to their old partition's end, so they
--    too sit together. What BRIN cannot do, an ordered scan, nobody asks of this index. Pages
--    added since the last summary are always read (BRIN keeps no entry for them):
--    `autosummarize` has Postgres' autovacuum summarize a range once inserts move past it, and
--    the sync calls `fact_indexes_summarize()` (below) after storing, for the embedded database,
--    which runs no autovacuum.
--    `blocks_ts` stays a B-tree: step 1a's `m_bounds` reads the first block of the window in
--    timestamp order (`order by block_timestamp ... limit 1`) and prune reads a partition's
--    latest timestamp (`max(block_timestamp)`); with BRIN both would read every block of the
--    window or of the partition on every run. `blocks_removed_seq` (partial, reorged versions
--    only) is already empty in practice.
--
-- 2. The B-trees whose keys arrive in ascending order fill their pages to 100% instead of the
--    default 90%: `blocks_pkey` (block_id), `blocks_ts` (block_timestamp) and `transfers_pkey`
--    (block_id, log_index). The sync stores blocks in chain order, so new keys land on the
--    rightmost leaf, whose split keeps `fillfactor` percent on the left page and never touches
--    it again; 90% left 10% of those pages empty forever. A backfill's keys land in the middle
--    and split those pages in halves, as at 90%. 10% of 22.6 + 22.6 + 31.6 bytes: about 7.7
--    bytes a payment when every payment has its block. `transfers_to (to_id, block_id)` keeps
--    the default: its inserts land inside the index, one seller's key range at a time.
--
-- The indexes are built again over the existing rows, in this one transaction (`migrate` runs
-- each migration in its own): killed, it rolls back and leaves the old indexes; run again, it
-- starts over (3.9 s at 1M payments; the fact tables are locked meanwhile, so `serve`'s evidence
-- endpoint waits). New partitions (fact_partitions_cover) get their indexes from the parents', with
-- these options. Same SQL on Postgres 15 and PGlite.

drop index blocks_added_seq;
create index blocks_added_seq on blocks using brin (added_seq) with (autosummarize = on);

drop index blocks_ts;
create index blocks_ts on blocks (block_timestamp) with (fillfactor = 100);

alter table blocks drop constraint blocks_pkey;
alter table blocks add constraint blocks_pkey primary key (block_id) with (fillfactor = 100);

alter table transfers drop constraint transfers_pkey;
alter table transfers add constraint transfers_pkey primary key (block_id, log_index) with (fillfactor = 100);

-- Summarizes the page ranges of `blocks_added_seq` (on every partition) that filled since the last
-- summary; returns how many it summarized. Cheap when there are none: a look at the index's
-- range map. The sync calls it after storing (src/db/load-facts.ts, summarizeFactIndexes). It
-- takes a share-update-exclusive lock on each partition, which inserts do not wait for; a
-- partition whose lock is held (autovacuum, a concurrent call) is skipped after 50 ms rather than
-- waited for: autovacuum summarizes it, or the next call does.
create function fact_indexes_summarize() returns integer
language plpgsql volatile
set lock_timeout = '50ms'
as $$
declare
  part        regclass;
  summarized  integer := 0;
begin
  for part in select i.inhrelid::regclass
                from pg_inherits i
               where i.inhparent = to_regclass(format('%I.%I', current_schema(), 'blocks_added_seq'))
               order by 1 loop
    begin
      summarized := summarized + brin_summarize_new_values(part);
    exception when lock_not_available then
      null;  -- summarized by autovacuum or by the next call
    end;
  end loop;
  return summarized;
end
$$;

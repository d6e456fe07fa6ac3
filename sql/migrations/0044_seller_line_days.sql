-- Each seller's kept lines (part_seller_lines, migrations 0020 and 0028) by UTC day: one row per
-- seller and day with at least one live closed hour, the lines of that day's hours in hour order
-- (`hour_start:payments:sha256\n`, at most 24 lines, ~2 KB). Nothing published changes: a
-- seller's evidence digest is still the sha256 of its first edge period's line, its lines (now the
-- day rows in day order, concatenated) and its last edge period's line (docs/METHOD.md 2.10).
--
-- Why: a run that closes an hour cut the line of the hour that left the window's start and
-- appended that of the hour that closed at its end, rewriting each such seller's whole text
-- (~60 KB for a seller paid every hour): at 10M payments, 1.26 s of every hour-closing steady run
-- (issue 22). Now it rewrites the first and the last day row of the seller (~2 KB each).
--
-- Work state, converted in place (the next run is not cold): each text is split into its lines,
-- grouped by the day of their hour. A seller's empty text (no live closed hour) becomes no row,
-- which the step reads the same way (no lines).
create table part_seller_line_days (
  seller_id  int4 not null,                    -- addresses
  day_start  int8 not null,                    -- unix seconds, a multiple of 86400
  lines      text not null,                    -- never empty
  primary key (seller_id, day_start)
);
-- (a row is at most ~2 KB: kept in the page, neither compressed nor moved out of line)
alter table part_seller_line_days alter column lines set storage plain;

insert into part_seller_line_days (seller_id, day_start, lines)
select l.seller_id,
       x.hour_start - x.hour_start % 86400,
       string_agg(x.line || E'\n', '' order by x.hour_start)
  from part_seller_lines l
 cross join lateral (select split_part(s.line, ':', 1)::int8 as hour_start, s.line
                       from unnest(string_to_array(rtrim(l.lines, E'\n'), E'\n')) as s(line)
                      where s.line <> '') x
 group by 1, 2
 order by 1, 2;

drop table part_seller_lines;
alter table part_seller_line_days rename to part_seller_lines;
alter table part_seller_lines rename constraint part_seller_line_days_pkey to part_seller_lines_pkey;

-- The evidence lines of the payments in the edge periods' reach, kept across runs (issue 22): a
-- steady run read both edge periods' payments from the facts again (up to two hours of payments
-- with their texts: at 10M payments, 1.40 s of every steady run), though only 15 minutes of them
-- were new. part_edge_lines holds the line of every payment of the catalog's sellers in the window
-- with a time in (window start, window start + period] (the hour the first edge period is taken
-- from, whichever hour that is as the window moves) or at or after the last closed hour's end
-- (the open last period), as of the as-of point and seq of part_state; a run reads from the facts
-- only what that set gained: the next minutes at its front, the new blocks at its end, the
-- (seller, period) whose facts changed and the sellers new to the catalog. part_state says what
-- it is exact for (window start, as-of block and time; null: nothing kept, the next run fills it).
-- Work state, never published; a run that cannot move it (a reset, a window or as-of that went
-- back) empties it and reads it again.
create table part_edge_lines (
  seller_id        int4 not null,                     -- addresses
  block_timestamp  int8 not null,
  evidence_line    text collate "C" not null          -- as the digests' m_payments builds it
);
create index part_edge_lines_ts on part_edge_lines (block_timestamp);

alter table part_state
  add column edge_window_start_ts  int8,
  add column edge_as_of_block      int8,
  add column edge_as_of_ts         int8;

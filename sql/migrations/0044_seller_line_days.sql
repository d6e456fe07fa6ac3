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

-- Method 2.0.0, derived data: each seller's live closed-hour lines as one text, so that a run
-- composes a seller's evidence digest (docs/METHOD.md 2.9) by hashing
--   (its first edge period's line) || lines || (its last edge period's line)
-- instead of reading its up to 720 hour partials again. At 10M payments a 15-minute run composes
-- the digests of ~4,000 sellers (those with payments in an edge period) over ~850,000 hour lines:
-- reading and sorting those rows took ~2 s; hashing the kept texts takes a fraction of it.
--
-- Invariant, kept by sql/method/2.0.0/01b_digests.sql for every seller of part_sellers:
--   lines = the lines `hour_start:payments:sha256\n` of the seller's live part_seller_hours rows
--           (gen_to is null), in hour order ('' when it has none).
-- A run changes it where those rows change: a prefix cut when hours leave the window's start,
-- lines appended when new hours close at its end, and a rebuild from the rows for anything else
-- (changed facts, a new seller). Derived data only: emptied with the partials, never trusted over
-- the facts (a from-scratch run rebuilds it, and the property tests compare both).
-- No value is unbounded: a seller has at most one line per hour of the window (720, ~60 KB).
create table part_seller_lines (
  seller_address  text collate "C" primary key,
  lines           text not null
);
-- hashed whole every time it is read: kept uncompressed, so reading it is a copy
alter table part_seller_lines alter column lines set storage external;

-- the lines of the partials a database already has
insert into part_seller_lines (seller_address, lines)
select seller_address, string_agg(hour_start || ':' || payments || ':' || sha256 || E'\n', '' order by hour_start)
  from part_seller_hours
 where gen_to is null
 group by seller_address;

-- Method 2.0.0 (docs/METHOD.md, section 2.9): the per-period digests behind a generation's
-- composed evidence digests. A period is digest_period_seconds long (3600) and starts at a
-- multiple of it (UTC). One row per period with at least one in-window payment: its start (unix
-- seconds), its payment count and the sha256 of its sorted evidence lines.
--
-- These tables hold a generation's *edge* periods: those not wholly inside its window or not yet
-- ended at its as-of time (the window's first and last, partial, periods). Its closed periods are
-- shared between generations (part_seller_hours, part_hours: migration 0007), and the views
-- gen_periods and gen_seller_periods (0007) give all of a generation's periods. 1.0.0
-- generations have none.
create table gen_edge_periods (
  generation    integer not null references generations on delete cascade,
  period_start  bigint  not null,
  payments      integer not null,
  sha256        text    not null,
  primary key (generation, period_start)
);

create table gen_edge_seller_periods (
  generation      integer not null references generations on delete cascade,
  seller_address  text    not null,
  period_start    bigint  not null,
  payments        integer not null,
  sha256          text    not null,
  primary key (generation, seller_address, period_start)
);

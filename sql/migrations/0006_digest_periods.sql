-- Method 2.0.0 (docs/METHOD.md, "Method 2.0.0"): the per-period digests behind a generation's
-- composed evidence digests. A period is digest_period_seconds long (3600) and starts at a
-- multiple of it (UTC); the window's first and last periods are partial (only in-window
-- payments). One row per period with at least one in-window payment: its start (unix seconds),
-- its payment count and the sha256 of its sorted evidence lines. `evidence_sha256` of the
-- generation (gen_periods) and of each seller (gen_seller_periods) is the sha256 of the lines
-- `period_start:payments:sha256\n` of these rows in period order. 1.0.0 generations have none.
create table gen_periods (
  generation    integer not null references generations on delete cascade,
  period_start  bigint  not null,
  payments      integer not null,
  sha256        text    not null,
  primary key (generation, period_start)
);

create table gen_seller_periods (
  generation      integer not null references generations on delete cascade,
  seller_address  text    not null,
  period_start    bigint  not null,
  payments        integer not null,
  sha256          text    not null,
  primary key (generation, seller_address, period_start)
);

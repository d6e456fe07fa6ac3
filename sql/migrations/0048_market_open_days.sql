-- The market's open days (not yet published) built incrementally, so that the first run after UTC
-- midnight reads the day that just ended from this table instead of from the facts
-- (sql/method/04_market_daily.sql; issue 21: at 10M payments that read, through the facts' view
-- that works out each payment's 3.0.0 reason, was 5-6 s of the 11-12 s after-midnight run).
--
-- acc_market_open: the payments per (UTC day, value, per request or not) of the days from
-- acc_market_state.open_from_ts on, and how many of them are external (reason 0; all of them
-- under 1.x/2.x). A day's payments, volume, external volume and median come from these as they
-- come from the facts' histogram. Moved every run by step 1a's signed changes (m_delta); a day
-- is deleted once it is published into acc_market_days.
-- acc_market_state.open_from_ts: the first day the table is exact for (null: none, so no day is
-- read from it). Nothing published changes.
create table acc_market_open (
  day_start    bigint        not null,
  value        numeric(78,0) not null,
  per_request  boolean       not null,
  n            bigint        not null,
  n_external   bigint        not null,
  primary key (day_start, value, per_request)
);

alter table acc_market_state add column if not exists open_from_ts bigint;

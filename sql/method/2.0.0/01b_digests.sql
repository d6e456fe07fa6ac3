-- Method 2.0.0, digests: composed of per-period digests (docs/METHOD.md, "Method 2.0.0").
-- A period is digest_period_seconds long and starts at a multiple of it (unix seconds, UTC):
-- period_start = block_timestamp - block_timestamp % digest_period_seconds. The window's first
-- and last periods are partial: only the window's own payments count in them.
-- Period digest = sha256 of the period's evidence lines `tx_hash:log_index:from:to:value\n`,
-- in byte order. Evidence digest (per seller, and of the generation over all sellers) = sha256
-- of one line `period_start:payments:period_digest\n` per period with >= 1 payment, in period
-- order; the sha256 of the empty text when there are none. No value ever holds more than one
-- period's lines (string_agg runs per period), so no window is too large to publish.

create temp table m_seller_periods on commit drop as
select seller_id,
       block_timestamp - block_timestamp % (select digest_period_seconds from m_gen) as period_start,
       count(*)::int                                                                as payments,
       encode(sha256(convert_to(
         string_agg(evidence_line, '' order by evidence_line collate "C"), 'UTF8')), 'hex') as sha256
  from m_payments
 where in_window
 group by 1, 2;

insert into gen_seller_periods (generation, seller_address, period_start, payments, sha256)
select (select generation from m_gen), c.seller_address, p.period_start, p.payments, p.sha256
  from m_seller_periods p
  join m_catalog_sellers c using (seller_id);

insert into gen_periods (generation, period_start, payments, sha256)
select (select generation from m_gen),
       block_timestamp - block_timestamp % (select digest_period_seconds from m_gen),
       count(*)::int,
       encode(sha256(convert_to(
         string_agg(evidence_line, '' order by evidence_line collate "C"), 'UTF8')), 'hex')
  from m_payments
 where in_window
 group by 2;

create temp table m_seller_digests on commit drop as
select seller_id,
       encode(sha256(convert_to(
         string_agg(period_start || ':' || payments || ':' || sha256 || E'\n', '' order by period_start),
         'UTF8')), 'hex') as digest
  from m_seller_periods
 group by seller_id;

create temp table m_global_digest on commit drop as
select encode(sha256(convert_to(
         coalesce(string_agg(period_start || ':' || payments || ':' || sha256 || E'\n', '' order by period_start), ''),
         'UTF8')), 'hex') as digest
  from gen_periods
 where generation = (select generation from m_gen);

-- Method 1.0.0, digests: the flat evidence digests. Per seller and for the generation, the sha256
-- of one line `tx_hash:log_index:from:to:value\n` per verified payment in the window, lines in
-- byte order (the sha256 of the empty text when there are none). Retained 1.0.0 generations are
-- audited with this step; new generations are computed under 2.0.0.

create temp table m_seller_digests on commit drop as
select seller_id,
       encode(sha256(convert_to(
         string_agg(evidence_line, '' order by evidence_line collate "C"), 'UTF8')), 'hex') as digest
  from m_payments
 where in_window
 group by seller_id;

create temp table m_global_digest on commit drop as
select encode(sha256(convert_to(
         coalesce(string_agg(evidence_line, '' order by evidence_line collate "C"), ''),
         'UTF8')), 'hex') as digest
  from m_payments
 where in_window;

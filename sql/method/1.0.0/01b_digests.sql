-- Method 1.0.0, digests: the flat evidence digests. Per seller and for the generation, the sha256
-- of one line `tx_hash:log_index:from:to:value\n` per verified payment in the window, lines in
-- byte order (the sha256 of the empty text when there are none). Retained 1.0.0 generations are
-- audited with this step; new generations are computed under 2.0.0.

-- Verified payments (rules 1-4, the view generation_payments) in the window, with the evidence
-- line of each. Text compares in byte order ("C"): the order the digests are defined in.
-- (A flat digest reads every payment of the window: 1.0.0 cannot be computed incrementally.)
create temp table m_payments on commit drop as
select c.seller_id,
       (p.tx_hash || ':' || p.log_index || ':' || p.payer || ':' || p.seller_address || ':' || p.value || E'\n')
         collate "C" as evidence_line
  from generation_payments p
  join m_catalog_sellers c on c.seller_address = p.seller_address
 where p.generation = (select generation from m_gen)
   and p.in_window;

create temp table m_seller_digests on commit drop as
select seller_id,
       encode(sha256(convert_to(
         string_agg(evidence_line, '' order by evidence_line collate "C"), 'UTF8')), 'hex') as digest
  from m_payments
 group by seller_id;

create temp table m_global_digest on commit drop as
select encode(sha256(convert_to(
         coalesce(string_agg(evidence_line, '' order by evidence_line collate "C"), ''),
         'UTF8')), 'hex') as digest
  from m_payments;

-- Method 1.0.0, step 5: the evidence digest of the generation: sha256 of one line
-- `tx_hash:log_index:from:to:value\n` per verified payment in the window, lines in byte order.

update generations
   set evidence_sha256 = (
         select encode(sha256(convert_to(
                  coalesce(string_agg(evidence_line, '' order by evidence_line collate "C"), ''),
                  'UTF8')), 'hex')
           from m_payments
          where in_window)
 where generation = (select generation from m_gen);

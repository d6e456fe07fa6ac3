-- Method step 5: the evidence digest of the generation, as the version's digest step
-- (sql/method/<version>/01b_digests.sql) computed it in m_global_digest.

update generations
   set evidence_sha256 = (select digest from m_global_digest)
 where generation = (select generation from m_gen);

-- Method step 1 (1.0.0 and 2.0.0, after the inputs and the operator pairs): the payments the steps
-- read, as views of this session. A version with payments of its own replaces this file with its
-- own of the same name (sql/method/3.0.0/01_payments.sql), so that each view is created once a
-- run: when 3.0.0 created them again over these, five temp views were made twice a run (each a
-- catalog write; docs/benchmarks.md, "The steady run's fixed cost at 200k, statement by statement").
-- (None of them is read before this file: step 1's inputs and operator pairs name no payment.)

-- The payments the steps read, as a view of this session (created again by every run; dropped by
-- the last step): under 1.0.0 and 2.0.0 the verified EIP-3009 transfers (rules 2 and 3), each of class 1 (eip3009), external
-- (reason 0), with no class in its evidence line. The steps add rules 1 and 4. A view, not a
-- table: the steps' plans are those over verified_transfers itself.
create or replace temp view m_payment_facts as
select v.*,
       1            as class,            -- 1 eip3009, 2 permit2_exact, 3 permit2_upto, 4 batch_settlement
       0            as reason,           -- 0 external, 1 seller_funded, 2 same_operator
       (select evidence_prefixes[1] from m_gen) as evidence_prefix   -- what an evidence line starts with
  from verified_transfers v;

-- The same payments for a cold run's bulk reads (step 1a's m_window and m_cold_head, read again
-- by the market's days, step 4): those visible at this run's seq, at or before its as-of block,
-- with the numbers the aggregates use and nothing else. verified_transfers' rules 2 and 3 on the
-- fact tables themselves: through the view every payment was joined twice to `addresses` for texts
-- no aggregate reads. The value stays the facts' `bigint` (m_payment_facts' is `numeric`): the
-- same numbers, summed and grouped faster; the accumulators' columns take them as `numeric`.
-- The transaction hash and log index are for the digests' evidence lines (01b_digests.sql groups
-- a cold run's digests from the same read, step 1a's m_window: one read of the facts, not two).
-- (A cold run only; the steady steps keep reading m_payment_facts.)
create or replace temp view m_cold_facts as
select t.to_id                  as seller_id,
       t.from_id                as payer_id,
       t.value                  as value,
       b.block_timestamp,
       b.block_id >> 20         as block_number,
       1                        as class,
       0                        as reason,
       t.log_index,
       t.tx_hash
  from transfers t
  join blocks b on b.block_id = t.block_id
 cross join m_gen g   -- (run_seq as a column: visible_at is inlined)
 where t.class = 1              -- rule 3 (authorized: verified_transfers' `authorized`)
   and t.from_id <> t.to_id     -- rule 2 (an address has one id)
   and t.value > 0              -- rule 2
   and (b.block_id >> 20) <= g.as_of_block
   and visible_at(b.added_seq, b.removed_seq, g.run_seq);

-- The sets of a cold read's internal reasons (step 1's m_cold_fundings and m_cold_pairs): none
-- before 3.0.0, so step 1a fills them with no row.
create or replace temp view m_cold_funding_rows as
select * from m_cold_fundings where false;
create or replace temp view m_cold_operator_pairs as
select seller_id, payer_id from m_cold_pairs where false;

-- The facts whose addition or removal can change a payment (block versions changed since a seq
-- are found through them): transfers, and under 3.0.0 batch claims too.
create or replace temp view m_fact_rows as
select block_id, to_id from transfers;

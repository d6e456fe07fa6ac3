-- seller_funded (migration 0031) answered by the seller's LATEST funding of the payer before the
-- payment, not by the first of them that passes every test. Same result (below), other cost.
--
-- 0031's EXISTS walked the index seller_outgoing_pair (from_id, to_id, block_number, log_index)
-- forward, from the pair's oldest funding, testing each row's time against the lookback (the time
-- is not in the index): a probe read every earlier funding of the pair, so a pair with many
-- fundings and many payments cost their product. Measured 2026-11-27 on bench/method.ts's 10M
-- payments with MIX=3 (990k outgoing transfers; 490k payments whose pair has any funding), sized
-- cluster, load 30: 20,000 such payments took 8.4 s with 0031's body and 2.9 s with this one, the
-- same 20,000 answers; the cold run's one read of the window, with 0031's body, had not ended
-- after 22 minutes (65.8M buffer reads for 2.3M payments in one partition's plan).
--
-- Why the same result: the transfers visible at one seq are one chain, whose block times never go
-- down as (block_number, log_index) grows. So among the visible fundings (value > 0) of the pair
-- before (block, log), the latest one has the greatest time: some of them is less than `lookback`
-- seconds before `ts` exactly when the latest one is. The scan goes backward from the payment and
-- stops at the first visible funding; `block_number <= block` lets each partition after the
-- payment's block be skipped. Tests: the golden and property tests of method 3.0.0
-- (test/method/method3.test.ts, incremental3.test.ts: fundings at the lookback's edges, after the
-- payment, in its block, removed by a reorg) pass unchanged.
create or replace function seller_funded(seller int4, payer int4, block int8, log int4, ts int8, seq int8, lookback int8)
returns boolean
language sql stable parallel safe
as $$
  select coalesce((select o.block_timestamp > ts - lookback
                     from seller_outgoing o
                    where o.from_id = seller
                      and o.to_id = payer
                      and o.block_number <= block
                      and (o.block_number, o.log_index) < (block, log)
                      and o.value > 0
                      and visible_at(o.added_seq, o.removed_seq, seq)
                    order by o.block_number desc, o.log_index desc
                    limit 1), false)
$$;

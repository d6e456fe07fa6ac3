-- A log (or block) orphaned by a reorg can become canonical again after a later reorg (a chain
-- that flips back). Each fact row is one interval of visibility, [added_seq, removed_seq), so such a
-- log needs a second row, added by the run that finds it again. Until now the primary keys made
-- that impossible (the stored copy was removed, the new one conflicted and was dropped: the payment
-- was lost to every later generation). The key of a fact is now unique among the rows that are
-- live (removed_seq is null); removed rows keep their history. The stores' `on conflict do
-- nothing` takes these unique indexes as arbiters, so a live duplicate is still skipped. Same
-- number of indexes as before, so storing a chunk costs the same.
alter table chain_blocks drop constraint chain_blocks_pkey;
create unique index chain_blocks_live on chain_blocks (block_number, block_hash) where removed_seq is null;

alter table usdc_transfers drop constraint usdc_transfers_pkey;
create unique index usdc_transfers_live on usdc_transfers (tx_hash, log_index, block_hash) where removed_seq is null;

alter table usdc_authorizations drop constraint usdc_authorizations_pkey;
create unique index usdc_authorizations_live on usdc_authorizations (tx_hash, log_index, block_hash) where removed_seq is null;

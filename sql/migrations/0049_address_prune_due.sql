-- The weekly address prune in a transaction of its own (src/publish/prune.ts): the prune that
-- drops fact partitions commits the drops (whose locks block the evidence endpoint) at once, and
-- deletes the addresses nothing names any more after, under the same run lock. This one-row table
-- says an address prune is due: the dropping transaction inserts the row, the address prune
-- deletes it in its own transaction, so a run killed between the two leaves the row, and the next
-- prune (even one that drops nothing) deletes the addresses first.
create table if not exists address_prune_due (
  due     boolean     primary key default true check (due),
  -- when the first partition drop not yet followed by an address prune committed (for operators)
  since   timestamptz not null default now()
);

-- Method step 2b (every version): operator groups (docs/METHOD.md 2.12.1). The generation's
-- sellers (m_catalog_sellers: under 3.x without x402 infrastructure) linked transitively by the
-- same_operator relation (a base_usdc listing of each on one resource host: url_host(),
-- catalog_operator_pairs, migration 0031; kept per snapshot in
-- catalog_snapshot_sellers.same_operator_payers by step 01_operator_pairs). A group is a connected
-- component of two or more sellers. Its id is 'op_' and its lowest member address (byte order)
-- without 0x: the same whatever order the rows come in. Its numbers are the members' gen_sellers
-- rows summed (step 2), and its payers the distinct payers of all members in the window
-- (acc_payers, step 1a), not a sum.
-- Catalog-derived and a few rows a seller: computed whole every run, but for a group with the same
-- members as in the previous generation its hosts (over the same snapshot) and its distinct
-- payers (moved by the payers its members gained and lost in step 1a) follow that generation's.

-- The previous generation, when its members are this one's: over the same catalog snapshot with
-- the same method version (the members are a function of these two: the snapshot's sellers and
-- pairs, and the version's sellers, m_catalog_sellers), with this step's rows (gen_outputs: a
-- generation computed before migration 0038 has none). Its members are then copied instead of
-- linking the catalog's pairs again (the edges, the label passes and their joins: 0.9-1.5 s of a
-- steady run at 50,000 sellers on a loaded machine). Not after step 1a's reset: a cold run links
-- everything again, so the tests' from-scratch runs check what is reused.
create temp table m_op_same on commit drop as
select p.generation
  from generations p
  join generations g on g.generation = (select generation from m_gen)
 where p.generation = (select max(generation) from generations where generation < g.generation)
   and p.catalog_snapshot_id = g.catalog_snapshot_id
   and p.method_version = g.method_version
   and exists (select 1 from gen_outputs o where o.generation = p.generation and o.output = 'operator_groups')
   and not (select reset from m_acc);

-- The relation among the generation's sellers, by their snapshot numbers, both ways (none when
-- the members are copied).
create temp table m_op_edges on commit drop as
select x.a, x.b
  from (select c.seller_id as a, o.ord as b
          from catalog_snapshot_sellers c
         cross join unnest(c.same_operator_payers) as o(ord)
         where c.snapshot_id = (select catalog_snapshot_id from m_gen)
           and cardinality(c.same_operator_payers) > 0
        union
        select o.ord, c.seller_id
          from catalog_snapshot_sellers c
         cross join unnest(c.same_operator_payers) as o(ord)
         where c.snapshot_id = (select catalog_snapshot_id from m_gen)
           and cardinality(c.same_operator_payers) > 0) x
 where x.a in (select seller_ord from m_catalog_sellers)
   and x.b in (select seller_ord from m_catalog_sellers)
   and not exists (select 1 from m_op_same);

-- Each linked seller's label: the lowest snapshot number reachable from it (numbers are in
-- address byte order, so the lowest number is the lowest address). Each pass lowers a label to
-- the lowest of its neighbours'; the passes stop when none changes (as many as the longest chain).
create temp table m_op_labels on commit drop as
select distinct a as seller_ord, a as label from m_op_edges;
alter table m_op_labels add primary key (seller_ord);
analyze m_op_edges;
analyze m_op_labels;
do $$
begin
  loop
    update m_op_labels l
       set label = x.label
      from (select e.a, min(n.label) as label
              from m_op_edges e
              join m_op_labels n on n.seller_ord = e.b
             group by e.a) x
     where x.a = l.seller_ord
       and x.label < l.label;
    exit when not found;
  end loop;
end $$;

set local enable_nestloop = on;
insert into gen_operator_members (generation, seller_address, group_id)
select (select generation from m_gen), s.seller_address, 'op_' || substr(r.seller_address, 3)
  from m_op_labels l
  join m_catalog_sellers s on s.seller_ord = l.seller_ord
  join m_catalog_sellers r on r.seller_ord = l.label;
-- (the previous generation's members, by its primary key's prefix)
insert into gen_operator_members (generation, seller_address, group_id)
select (select generation from m_gen), m.seller_address, m.group_id
  from gen_operator_members m
 where m.generation = (select generation from m_op_same);

-- Each member's address id (null for a member no stored transfer names: it has no payer).
-- (hash joins of small tables, here and for the kept groups and their moves)
set local enable_nestloop = off;
create temp table m_op_members on commit drop as
select m.group_id, m.seller_address, c.seller_id
  from gen_operator_members m
  join m_catalog_sellers c on c.seller_address = m.seller_address collate "C"
 where m.generation = (select generation from m_gen);
analyze m_op_members;

-- What a group of the previous generation with the same members gives this one, in a steady run
-- (not step 1a's reset: a cold run counts everything again, so the tests' from-scratch runs
-- check what is reused). Its hosts, when that generation was over the same catalog snapshot
-- (they are the snapshot's listings of the members: looking them up read every listing of the
-- snapshot and its url_host, 1.3 s of a steady run at 1M payments on a loaded machine). Its
-- distinct payers, when that generation was computed at the window and seq the accumulators
-- moved from (m_acc's s0, ws0, ts0, b0) with this method version: its payers_30d is then the
-- distinct payers of these members in acc_payers before step 1a moved them, moved below by what
-- changed. (Counting every touched group again read its members' acc_payers rows each run: the
-- large sellers' groups are touched every run, 3.2-5.0 s of a 13.8 s steady run at 10M
-- payments, 5,000 groups.)
create temp table m_op_prev on commit drop as
with now_groups as (
  select group_id, array_agg(seller_address order by seller_address collate "C") as sellers
    from m_op_members
   group by group_id),
previous as (
  select p.generation,
         not a.reset and p.catalog_snapshot_id = g.catalog_snapshot_id as same_catalog,
         not a.reset
           and p.method_version = g.method_version
           and p.run_seq = a.s0 and p.window_start_ts = a.ws0 and p.as_of_ts = a.ts0
           and p.as_of_block = a.b0 as same_state
    from generations p
    join generations g on g.generation = (select generation from m_gen)
   cross join m_acc a
   where p.generation = (select max(generation) from generations where generation < g.generation))
select o.group_id,
       case when (select same_state from previous) then o.payers_30d end as payers,
       case when (select same_catalog from previous) then o.hosts end    as hosts
  from now_groups n
  join gen_operator_groups o on o.group_id = n.group_id and o.seller_addresses = n.sellers
 where o.generation = (select generation from previous);
analyze m_op_prev;

-- The kept groups' payers gained or lost: step 1a's (seller, payer) pairs whose count went from 0
-- to more (+1) or from more to 0 (-1) (m_payer_delta), summed per (group, payer) over its
-- members. A payer counts in the group when one member or more has it; how many members have it
-- now is looked up (acc_payers, moved by step 1a, by primary key), and before is now less the
-- moves, so the group's count moves by [now > 0] - [before > 0] per payer: a payer gained by one
-- member and already another's changes nothing.
create temp table m_op_moves on commit drop as
select m.group_id, d.payer_id,
       sum(case when d.old_n = 0 then 1 else -1 end)::int as moved
  from m_payer_delta d
  join m_op_members m on m.seller_id = d.seller_id
 where m.group_id in (select group_id from m_op_prev where payers is not null)
   and (d.old_n = 0) <> (d.old_n + d.dn = 0)
 group by 1, 2;
analyze m_op_moves;

-- (each member's row of a moved payer by the whole primary key, in a subplan: as a join the
-- planner probed by seller alone and filtered the payer, every payer of the large sellers)
create temp table m_op_payers on commit drop as
select k.group_id,
       k.payers + coalesce(sum((x.now > 0)::int - (x.now - x.moved > 0)::int), 0)::int as payers
  from m_op_prev k
  left join (select v.group_id, v.payer_id, v.moved,
                    (count(*) filter (where exists (select 1 from acc_payers p
                                                     where p.seller_id = m.seller_id
                                                       and p.payer_id = v.payer_id)))::int as now
               from m_op_moves v
               join m_op_members m on m.group_id = v.group_id
              group by 1, 2, 3) x on x.group_id = k.group_id
 where k.payers is not null
 group by k.group_id, k.payers;

-- (the grouped sellers are few: the listings of a group whose hosts are counted again, and the
-- payers and rows of each member, are looked up by index)
set local enable_nestloop = on;
insert into gen_operator_groups (
  generation, group_id, seller_count, seller_addresses, hosts, payments_30d, payers_30d,
  verified_revenue_30d_micro, external_revenue_30d_micro)
with members as (select group_id, seller_address, seller_id from m_op_members),
-- the hosts that link: those of a base_usdc listing of two or more members (the previous
-- generation's over the same snapshot, else looked up)
hosts as (
  select group_id, hosts from m_op_prev where hosts is not null
  union all
  select h.group_id, array_agg(h.host order by h.host collate "C") as hosts
    from (select m.group_id, url_host(l.resource_url) as host
            from members m
            join catalog_listings l
              on l.snapshot_id = (select catalog_snapshot_id from m_gen)
             and l.seller_address = m.seller_address
             and l.verifiability = 'base_usdc'
           where url_host(l.resource_url) is not null
             and m.group_id not in (select group_id from m_op_prev where hosts is not null)
           group by 1, 2
          having count(distinct m.seller_address) >= 2) h
   group by h.group_id
),
-- the others (new, changed, or every group after a reset) counted from their members' payers
payers as (
  select group_id, payers from m_op_payers
  union all
  select m.group_id, count(distinct p.payer_id)::int as payers
    from members m
    join acc_payers p on p.seller_id = m.seller_id
   where m.group_id not in (select group_id from m_op_prev where payers is not null)
   group by m.group_id
)
select (select generation from m_gen),
       m.group_id,
       count(*)::int,
       array_agg(m.seller_address order by m.seller_address collate "C"),
       coalesce(min(h.hosts), '{}'),
       sum(s.payments_30d)::int,
       coalesce(min(p.payers), 0),
       sum(s.verified_revenue_30d_micro),
       sum(s.external_revenue_30d_micro)
  from members m
  join gen_sellers s on s.generation = (select generation from m_gen) and s.seller_address = m.seller_address collate "C"
  left join hosts h on h.group_id = m.group_id
  left join payers p on p.group_id = m.group_id
 group by m.group_id;

set local enable_nestloop = off;

insert into gen_outputs (generation, output) select generation, 'operator_groups' from m_gen;

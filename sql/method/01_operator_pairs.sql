-- Method step 1 (every version, after the inputs): the same_operator pairs of the catalog
-- snapshot (SPEC section 2, "Method 3.0.0"): method 3.x's internal reason same_operator
-- (sql/method/3.0.0/01_payments.sql) and the operator groups of every version
-- (sql/method/02b_operator_groups.sql) read them.
--
-- The same_operator pairs of the generation's catalog (catalog_operator_pairs, migration 0031),
-- kept per snapshot with its sellers (catalog_snapshot_sellers.same_operator_payers, migration
-- 0034): computed by the first generation over the snapshot, read by the next ones (the
-- hosts of every listing compared with every other cost 0.3 s a run at 10,000 listings). The
-- one-time filter skips the comparison when every seller of the snapshot has its pairs.
update catalog_snapshot_sellers c
   set same_operator_payers = x.payers
  from (select s.seller_id,
               coalesce(array_agg(p.seller_id order by p.seller_id) filter (where p.seller_id is not null),
                        '{}') as payers
          from catalog_snapshot_sellers s
          left join catalog_operator_pairs o
            on o.snapshot_id = s.snapshot_id
           and o.seller_address = s.seller_address collate "C"
          left join catalog_snapshot_sellers p
            on p.snapshot_id = s.snapshot_id
           and p.seller_address = o.payer_address collate "C"
         where s.snapshot_id = (select catalog_snapshot_id from m_gen)
         group by s.seller_id) x
 where exists (select 1 from catalog_snapshot_sellers n
                where n.snapshot_id = (select catalog_snapshot_id from m_gen)
                  and n.same_operator_payers is null)
   and c.snapshot_id = (select catalog_snapshot_id from m_gen)
   and c.seller_id = x.seller_id
   and c.same_operator_payers is null;

-- gen_sellers gets one row per catalog seller per generation: 50,000 rows every 15 minutes at the
-- scale of real Base. Its foreign key to generations ran one check per inserted row at the end of
-- the method's step 2: 50,000 rows inserted in 1.03-1.16 s with the key and 0.52-0.57 s into the
-- same table without it (Postgres 15, three runs each, 2026-11-25, on a busy machine). Its rows
-- are written only in the transaction that writes their generations row (sql/method/02_sellers.sql),
-- so the per-row check goes; deleting a generation still deletes its rows, once per statement.
alter table gen_sellers drop constraint gen_sellers_generation_fkey;

create function gen_sellers_follow_generations() returns trigger language plpgsql as $$
begin
  delete from gen_sellers s using gone g where s.generation = g.generation;
  return null;
end
$$;

create trigger generations_delete_gen_sellers
  after delete on generations
  referencing old table as gone
  for each statement execute function gen_sellers_follow_generations();

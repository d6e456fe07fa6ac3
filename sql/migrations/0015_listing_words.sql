-- Search postings: for each listing row of a generation and each word of its search document
-- (migration 0014), the word's score in that listing: 4 if the title holds it, + 2 if the
-- description does, + 1 if the resource URL does. The index orders a word's listings by
-- descending score, then listing_id: a one-word search reads just the rows of its page, however
-- many listings hold the word (GET /api/v1/sellers?q=, src/api/read/listings.ts).
-- Derived data: written by a trigger with the gen_listings rows, removed with their generation.
create table gen_listing_words (
  generation  integer  not null references generations on delete cascade,
  word        text     not null,
  score       smallint not null,
  listing_id  text     not null
);
create unique index gen_listing_words_order on gen_listing_words (generation, word, score desc, listing_id);

create function gen_listing_words_add() returns trigger language plpgsql as $$
begin
  insert into gen_listing_words (generation, word, score, listing_id)
  select n.generation,
         w.lexeme,
         (case when 'A' = any(w.weights) then 4 else 0 end
        + case when 'B' = any(w.weights) then 2 else 0 end
        + case when 'C' = any(w.weights) then 1 else 0 end)::smallint,
         n.listing_id
    from new_rows n, unnest(n.search_doc) w;
  return null;
end $$;

create trigger gen_listing_words_add after insert on gen_listings
  referencing new table as new_rows for each statement execute function gen_listing_words_add();

-- The generations published before this migration.
insert into gen_listing_words (generation, word, score, listing_id)
select l.generation, w.lexeme,
       (case when 'A' = any(w.weights) then 4 else 0 end
      + case when 'B' = any(w.weights) then 2 else 0 end
      + case when 'C' = any(w.weights) then 1 else 0 end)::smallint,
       l.listing_id
  from gen_listings l, unnest(l.search_doc) w;

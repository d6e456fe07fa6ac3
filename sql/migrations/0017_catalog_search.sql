-- Search (migrations 0014 and 0015) moves from each generation's listing rows to the catalog
-- snapshot's: the words of a listing are its catalog text (title, description, resource URL),
-- which only a new catalog snapshot changes, while a generation is computed every 15 minutes
-- from the same snapshot. Indexing the words once per snapshot takes the search documents, their
-- GIN index and the one-word postings (about 15 rows per listing) out of every run: with 60,000
-- listings they cost about 7 s of a steady run (bench/method.ts, docs/benchmarks.md).
-- Same words, same scores, same order: a search reads gen_listings for a generation's numbers
-- and catalog_listings of its snapshot for the words (src/api/read/listings.ts).

alter table catalog_listings add column search_doc tsvector generated always as (
     setweight(to_tsvector('simple'::regconfig, regexp_replace(lower(coalesce(title, '')), '[^[:alnum:]]+', ' ', 'g')), 'A')
  || setweight(to_tsvector('simple'::regconfig, regexp_replace(lower(coalesce(description, '')), '[^[:alnum:]]+', ' ', 'g')), 'B')
  || setweight(to_tsvector('simple'::regconfig, regexp_replace(lower(resource_url), '[^[:alnum:]]+', ' ', 'g')), 'C')
) stored;

create index catalog_listings_search on catalog_listings using gin (search_doc);

-- One row per (snapshot, word, listing) with the listing's score for the word (title 4,
-- description 2, resource URL 1, summed): a one-word search reads the word's rows in score order.
create table catalog_listing_words (
  snapshot_id  bigint   not null references catalog_snapshots on delete cascade,
  word         text     not null,
  score        smallint not null,
  listing_id   text     not null
);
create unique index catalog_listing_words_order on catalog_listing_words (snapshot_id, word, score desc, listing_id);

create function catalog_listing_words_add() returns trigger language plpgsql as $$
begin
  insert into catalog_listing_words (snapshot_id, word, score, listing_id)
  select n.snapshot_id,
         w.lexeme,
         (case when 'A' = any(w.weights) then 4 else 0 end
        + case when 'B' = any(w.weights) then 2 else 0 end
        + case when 'C' = any(w.weights) then 1 else 0 end)::smallint,
         n.listing_id
    from new_rows n, unnest(n.search_doc) w;
  return null;
end $$;

create trigger catalog_listing_words_add after insert on catalog_listings
  referencing new table as new_rows for each statement execute function catalog_listing_words_add();

insert into catalog_listing_words (snapshot_id, word, score, listing_id)
select l.snapshot_id, w.lexeme,
       (case when 'A' = any(w.weights) then 4 else 0 end
      + case when 'B' = any(w.weights) then 2 else 0 end
      + case when 'C' = any(w.weights) then 1 else 0 end)::smallint,
       l.listing_id
  from catalog_listings l, unnest(l.search_doc) w;

drop trigger gen_listing_words_add on gen_listings;
drop function gen_listing_words_add();
drop table gen_listing_words;
drop index gen_listings_search;
alter table gen_listings drop column search_doc;

-- Search of two or more words by score bands (src/api/read/listings.ts). A word's postings
-- (catalog_listing_words, migration 0017) fall into at most seven bands, one per score (1..7: title
-- 4 + description 2 + resource URL 1), and within a band the index keeps them in listing_id order.
-- A search of several words ranks its matches by the sum of the words' scores, so the listings of
-- one combination of bands (say title+description for both words, 6 + 6) all have the same score
-- and are found in listing_id order by walking the bands' postings side by side: a search reads
-- the combinations from the best score down and stops once it holds the rows of its page, instead
-- of scoring every listing that holds all the words (~28,000 for two common words of 50,000).
-- This table counts the postings of each band, so a search knows before it reads anything which
-- combinations exist, which band of a combination is the smallest (the one to walk) and about how
-- many listings hold all its words (few: the GIN index of migration 0017 is the cheaper path).
-- Derived data, per catalog snapshot like the postings: kept by the same trigger, removed with
-- the snapshot.
create table catalog_word_bands (
  snapshot_id  bigint   not null references catalog_snapshots on delete cascade,
  word         text     not null,
  score        smallint not null,
  listings     integer  not null,
  primary key (snapshot_id, word, score)
);

-- A snapshot's listings are inserted in several statements (src/catalog/store.ts): each adds its
-- counts to the bands.
create or replace function catalog_listing_words_add() returns trigger language plpgsql as $$
begin
  insert into catalog_listing_words (snapshot_id, word, score, listing_id)
  select n.snapshot_id,
         w.lexeme,
         (case when 'A' = any(w.weights) then 4 else 0 end
        + case when 'B' = any(w.weights) then 2 else 0 end
        + case when 'C' = any(w.weights) then 1 else 0 end)::smallint,
         n.listing_id
    from new_rows n, unnest(n.search_doc) w;
  insert into catalog_word_bands as b (snapshot_id, word, score, listings)
  select n.snapshot_id,
         w.lexeme,
         (case when 'A' = any(w.weights) then 4 else 0 end
        + case when 'B' = any(w.weights) then 2 else 0 end
        + case when 'C' = any(w.weights) then 1 else 0 end)::smallint,
         count(*)
    from new_rows n, unnest(n.search_doc) w
   group by 1, 2, 3
  on conflict (snapshot_id, word, score) do update set listings = b.listings + excluded.listings;
  return null;
end $$;

insert into catalog_word_bands (snapshot_id, word, score, listings)
select snapshot_id, word, score, count(*) from catalog_listing_words group by snapshot_id, word, score;

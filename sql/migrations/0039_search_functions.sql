-- Search (GET /api/v1/sellers?q=, src/api/read/search.ts): one definition of a listing's words
-- and of a word's score, used by the generated column search_doc, by the trigger that writes the
-- postings and their bands, and by the query (which cuts q with search_words and ranks by the
-- postings' scores or by search_score over the matching words of search_doc). Before this
-- migration the same expressions were written out in migrations 0014, 0015, 0017 and 0019 and
-- again in the query; they are the same words and scores, now defined once.

-- The words of a text: lowercased, cut at every character that is not a letter or a digit, kept
-- as they are (the `simple` configuration: no stemming, no stop words). `Weather-API` gives
-- `weather` and `api`. Plural and prefix matching are done by the query (src/api/read/search.ts).
create function search_words(t text) returns tsvector language sql immutable parallel safe as $$
  select to_tsvector('simple'::regconfig, regexp_replace(lower(coalesce(t, '')), '[^[:alnum:]]+', ' ', 'g'))
$$;

-- A listing's search document: its words weighted by where they are, A the title, B the
-- description, C the resource URL.
create function search_document(title text, description text, resource_url text) returns tsvector
  language sql immutable parallel safe as $$
  select setweight(search_words(title), 'A') || setweight(search_words(description), 'B')
      || setweight(search_words(resource_url), 'C')
$$;

-- A word's score in a listing from the weights it has in the search document: 4 if the title
-- holds it, + 2 if the description does, + 1 if the resource URL does (1 to 7).
create function search_score(weights text[]) returns smallint language sql immutable parallel safe as $$
  select ((case when 'A' = any(weights) then 4 else 0 end)
        + (case when 'B' = any(weights) then 2 else 0 end)
        + (case when 'C' = any(weights) then 1 else 0 end))::smallint
$$;

-- The catalog's search documents, rebuilt from the function (the index goes with the column).
alter table catalog_listings drop column search_doc;
alter table catalog_listings add column search_doc tsvector generated always as (
  search_document(title, description, resource_url)
) stored;
create index catalog_listings_search on catalog_listings using gin (search_doc);

create or replace function catalog_listing_words_add() returns trigger language plpgsql as $$
begin
  insert into catalog_listing_words (snapshot_id, word, score, listing_id)
  select n.snapshot_id, w.lexeme, search_score(w.weights), n.listing_id
    from new_rows n, unnest(n.search_doc) w;
  insert into catalog_word_bands as b (snapshot_id, word, score, listings)
  select n.snapshot_id, w.lexeme, search_score(w.weights), count(*)
    from new_rows n, unnest(n.search_doc) w
   group by 1, 2, 3
  on conflict (snapshot_id, word, score) do update set listings = b.listings + excluded.listings;
  return null;
end $$;

-- The postings and bands of every stored snapshot, rebuilt from the new documents.
delete from catalog_word_bands;
delete from catalog_listing_words;
insert into catalog_listing_words (snapshot_id, word, score, listing_id)
select l.snapshot_id, w.lexeme, search_score(w.weights), l.listing_id
  from catalog_listings l, unnest(l.search_doc) w;
insert into catalog_word_bands (snapshot_id, word, score, listings)
select snapshot_id, word, score, count(*) from catalog_listing_words group by snapshot_id, word, score;

-- Prefix search (a word being typed, `vid` for `video`): the snapshot's words that begin with a
-- prefix, read by `word like 'vid%'` whatever the database's collation.
create index catalog_word_bands_prefix on catalog_word_bands (snapshot_id, word text_pattern_ops);

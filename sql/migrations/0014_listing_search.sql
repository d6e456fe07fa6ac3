-- Full-text search over the directory (`GET /api/v1/sellers?q=`). Each listing row of a
-- generation carries a search document, written with the row (a stored generated column), so a
-- generation's search index is complete the moment the generation is published.
--
-- Tokens: the text is lowercased and cut at every character that is not a letter or a digit, so
-- `Weather-API` gives `weather` and `api`, and `https://api.example.com/v1/forecast` gives
-- `https`, `api`, `example`, `com`, `v1` and `forecast`. The `simple` configuration keeps every
-- token as it is: no stemming and no stop words, so what matches can be checked by hand.
-- The weights tell where a word was found: A the title, B the description, C the resource URL
-- (the score of a search result, src/api/read/listings.ts, counts 4, 2 and 1 for them).
alter table gen_listings add column search_doc tsvector generated always as (
     setweight(to_tsvector('simple'::regconfig, regexp_replace(lower(coalesce(title, '')), '[^[:alnum:]]+', ' ', 'g')), 'A')
  || setweight(to_tsvector('simple'::regconfig, regexp_replace(lower(coalesce(description, '')), '[^[:alnum:]]+', ' ', 'g')), 'B')
  || setweight(to_tsvector('simple'::regconfig, regexp_replace(lower(resource_url), '[^[:alnum:]]+', ' ', 'g')), 'C')
) stored;

create index gen_listings_search on gen_listings using gin (search_doc);

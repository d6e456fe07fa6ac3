-- The NDJSON files of each generation's audit bundle as built once: the sha256 and row count the
-- manifest lists, and the byte size (the API's Content-Length). A generation never changes after
-- it is computed, so neither do its files: the first `export` or the first download from the API
-- (GET /api/v1/generations/{n}/bundle/{file}) streams every file once through sha256 and stores
-- the result here; later ones read it (src/publish/bundle-manifest.ts). Generations computed
-- before this migration have no rows until then. Derived data: deleting a row only costs a rebuild.
create table bundle_files (
  generation  integer not null references generations on delete cascade,
  name        text    not null,
  sha256      text    not null,
  rows        integer not null,
  bytes       bigint  not null,
  primary key (generation, name)
);

#!/bin/sh
# Runs once, when the Postgres volume is first initialised (docker-entrypoint-initdb.d):
# creates the API's SELECT-only role. The password comes from TALLY_API_PASSWORD.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v api_password="${TALLY_API_PASSWORD:?set TALLY_API_PASSWORD}" \
  -f /docker-entrypoint-initdb.d/api-role.psql

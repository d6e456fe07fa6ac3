#!/usr/bin/env bash
# Where the gen_sellers step's write time goes at 50,000 sellers, and what one partition per
# generation would save (issue 21). Four ways to write one new generation, each in a transaction
# rolled back, the order rotating between rounds so that each way runs in every position:
#   mono          insert into one table with the six indexes (as on main);
#   heap          the same insert into a table without indexes (the SELECT, sort and heap writes);
#   part_cascade  a new partition created first (the parent's indexes cascade), then the insert;
#   part_attach   a new stand-alone table filled without indexes, its six indexes built in bulk,
#                 a check constraint (so ATTACH skips its scan), then ATTACH PARTITION.
#   BENCH_DATABASE_URL=postgres://... ROUNDS=8 SETUP=1 bench/gen-sellers-partitions.sh
# SETUP=1 first builds the two schemas with bench/gen-sellers-partitions.sql (a few minutes).
# Prints min / median / max ms per way, and the steps of part_attach's last round.
set -euo pipefail
url=${BENCH_DATABASE_URL:?set BENCH_DATABASE_URL}
rounds=${ROUNDS:-8}
here=$(dirname "$0")
if [ "${SETUP:-0}" = 1 ]; then psql "$url" -q -f "$here/gen-sellers-partitions.sql"; fi

# One way's SQL for generation $2, between START and END marks that the summary reads.
way() {
  local v=$1 g=$2
  local rows="select $g, s.* from stage s order by verified_revenue_30d_micro desc, seller_no"
  echo "begin;"
  echo "\\echo START $v"
  case $v in
    mono) echo "insert into mono.gen_sellers $rows;" ;;
    heap) echo "create table public.h_$g (like mono.gen_sellers); insert into public.h_$g $rows;" ;;
    part_cascade)
      echo "create table part.gen_sellers_$g partition of part.gen_sellers for values in ($g);"
      echo "insert into part.gen_sellers_$g $rows;" ;;
    part_attach)
      cat <<SQL
create table part.gen_sellers_$g (like part.gen_sellers including defaults);
insert into part.gen_sellers_$g $rows;
alter table part.gen_sellers_$g add primary key (generation, seller_address);
create index on part.gen_sellers_$g (generation, rank) where rank is not null;
create index on part.gen_sellers_$g (generation, verified_revenue_30d_micro desc, seller_no);
create index on part.gen_sellers_$g (generation, coalesce(external_revenue_30d_micro, -1) desc, seller_no);
create index on part.gen_sellers_$g (generation, payments_30d desc, seller_no);
create index on part.gen_sellers_$g (generation, payers_30d desc, seller_no);
alter table part.gen_sellers_$g add constraint gen_$g check (generation = $g);
alter table part.gen_sellers attach partition part.gen_sellers_$g for values in ($g);
SQL
      ;;
  esac
  echo "\\echo END $v"
  echo "rollback;"
}

ways=(mono heap part_cascade part_attach)
{
  echo "\\set ON_ERROR_STOP 1"
  echo "set work_mem = '1GB'; set jit = off; \\timing on"
  for ((r = 0; r < rounds; r++)); do
    for k in 0 1 2 3; do way "${ways[$(((k + r) % 4))]}" $((1000 + r)); done
  done
} | psql "$url" 2>&1 | awk '
  /^START/ { way = $2; total = 0; steps = ""; next }
  /^END/ { n[way]++; t[way, n[way]] = total; last[way] = steps; way = ""; next }
  way != "" && /^Time:/ { total += $2; steps = steps " " int($2 + 0.5) }
  END {
    for (w in n) {
      m = n[w]
      for (i = 1; i <= m; i++) v[i] = t[w, i]
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
      med = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
      printf "%-13s n=%d min=%.0f median=%.0f max=%.0f ms  last round steps:%s\n", w, m, v[1], med, v[m], last[w]
    }
  }'

#!/usr/bin/env bash
# The newcomer's path (issue 23, "Done when"), scripted: a fresh clone of this repository into a
# temporary folder, `npm install && npm start` there, then every command the demo prints, run from
# ANOTHER folder, each timed with /usr/bin/time (wall seconds, peak RSS). Each must exit 0; the
# audits are reported against their targets (full audit <= 20 s, --seller <= 10 s, < 300 MB).
#
#   bash bench/newcomer.sh [REPO] [PORT]
#
# REPO: what to clone (default: this checkout's committed HEAD); PORT: the demo's (default 18461).
# Needs git, npm (the registry, for npm install), curl, node and /usr/bin/time. Prints one line per
# step and a table at the end; the exit status is 1 when a step failed, else 0. Writes only under
# its own temporary folder, which it removes (KEEP=1 keeps it).
set -euo pipefail

REPO=${1:-$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)}
PORT=${2:-18461}
WORK=$(mktemp -d -t x402-newcomer.XXXXXX)
CLONE="$WORK/x402-tally"
ELSEWHERE="$WORK/elsewhere" # the other folder the printed commands run from
mkdir -p "$ELSEWHERE"
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
DEMO_PID=
failed=0

cleanup() {
  if [ -n "$DEMO_PID" ] && kill -0 "$DEMO_PID" 2>/dev/null; then
    # (to the demo's whole process group, as Ctrl-C on a terminal: npm 11 does not pass a SIGINT
    # sent to it alone on to the demo, and the script then waited for ever)
    kill -INT -- "-$DEMO_PID" 2>/dev/null || true
    wait "$DEMO_PID" 2>/dev/null || true
  fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# step NAME DIR COMMAND...: runs COMMAND in DIR under /usr/bin/time; records name, exit, s, MB.
# With TREE=1, under bench/tree-memory.ts instead: the peak is every process's own peak RSS added
# up (an audit is a launcher and a child; /usr/bin/time's %M is the largest process alone).
step() {
  local name=$1 dir=$2
  shift 2
  local log="$WORK/$name.log" status=0
  local timer=(/usr/bin/time -f '%e %M' -o "$WORK/$name.time")
  # (clone and npm install run before the clone has tsx: /usr/bin/time for those)
  [ "${TREE:-0}" = 1 ] && [ -e "$CLONE/node_modules/tsx/dist/loader.mjs" ] &&
    timer=(node --import "file://$CLONE/node_modules/tsx/dist/loader.mjs" "$CLONE/bench/tree-memory.ts" "$WORK/$name.time" --)
  (cd "$dir" && "${timer[@]}" "$@") >"$log" 2>&1 || status=$?
  read -r secs kb <"$WORK/$name.time" || { secs=?; kb=0; }
  local mb=$((kb / 1024))
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$secs" "$mb" >>"$RESULTS"
  printf '%-22s exit %-3s %8s s %6s MB   (%s)\n' "$name" "$status" "$secs" "$mb" "$(tail -n 1 "$log" | cut -c1-100)"
  if [ "$status" != 0 ]; then
    failed=1
    tail -n 20 "$log" >&2
  fi
  return 0
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; node $(node --version)"
step clone "$WORK" git clone --quiet "$REPO" "$CLONE"
step npm-install "$CLONE" npm install --no-audit --no-fund

# npm start, in the background; ready when it prints "Stop with Ctrl-C.".
DEMO_LOG="$WORK/demo.log"
started=$(date +%s.%N)
(cd "$CLONE" && PORT=$PORT exec setsid npm start) >"$DEMO_LOG" 2>&1 &
DEMO_PID=$!
until grep -q 'Stop with Ctrl-C.' "$DEMO_LOG"; do
  if ! kill -0 "$DEMO_PID" 2>/dev/null; then
    echo "npm start exited before it was ready:" >&2
    cat "$DEMO_LOG" >&2
    exit 1
  fi
  sleep 0.2
done
ready=$(echo "$(date +%s.%N) - $started" | bc)
printf 'npm-start-ready\t0\t%.1f\t-\n' "$ready" >>"$RESULTS"
echo "npm start: ready after $(printf '%.1f' "$ready") s ($(grep -o 'ready in [0-9.]* s' "$DEMO_LOG"))"

# Every URL the demo prints (web page, docs, "try" lines): each must answer 2xx.
n=0
for url in $(grep -Eo '^  (web page|API docs|try) +http[^ ]+' "$DEMO_LOG" | awk '{print $NF}'); do
  n=$((n + 1))
  step "url-$n" "$ELSEWHERE" curl -fsS -o /dev/null "$url"
done

# The audit block: the lines between "Audit what it serves" and "Stop with Ctrl-C.", as printed
# (continuations joined by bash itself), run from the other folder.
sed -n '/^Audit what it serves/,/^Stop with Ctrl-C\./p' "$DEMO_LOG" | sed '1d;$d' >"$WORK/printed.sh"
echo "printed commands:" && sed 's/^/    /' "$WORK/printed.sh"
download=$(grep -v ' audit ' "$WORK/printed.sh")
audit=$(grep ' audit ' "$WORK/printed.sh" | sed 's/^ *//')
step bundle-download "$ELSEWHERE" bash -c "set -e; $download"
TREE=1 step audit-full "$ELSEWHERE" bash -c "$audit"
# --seller, the form the page and the audit docs give, on the first ranked seller of the demo.
seller=$(curl -fsS "http://127.0.0.1:$PORT/api/v1/rankings?limit=1" | node -pe 'JSON.parse(require("fs").readFileSync(0)).rankings[0].seller_address')
TREE=1 step audit-seller "$ELSEWHERE" bash -c "$audit --seller $seller"

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "step	exit	seconds	peak_MB"
cat "$RESULTS"
check() { # check NAME MAX_SECONDS: against the issue's target
  awk -F'\t' -v n="$1" -v max="$2" '$1 == n { verdict = ($3 <= max && $4 < 300) ? "within" : "NOT within"; printf "%s: %s s, %s MB: %s the target (<= %s s, < 300 MB)\n", n, $3, $4, verdict, max }' "$RESULTS"
}
check audit-full 20
check audit-seller 10
exit "$failed"

#!/usr/bin/env bash
# Board latency benchmark (issue 11's "a new order appears within one second without reload"), one run on this
# machine: how long after the hub answered a webhook (the order is committed) its event reaches a merchant board's
# open stream (GET /api/dashboard/events), and how long after the webhook was sent, measured by
# tests/load/board_latency.py: BENCH_PROBES (default 300) order_created webhooks of branch DEMO-1, one every
# BENCH_INTERVAL (default 0.1) s, read back by a board user of DEMO-1. Three runs against one `orderhub serve
# --role api`:
#   1. idle: the probes alone;
#   2. a busy hub: the probes while tests/load/send_orders.py sends BENCH_LOAD_RATE (default 500) orders/s of
#      another brand's branch (OTHER-1) for as long as the probes last; the board's stream carries none of them;
#   3. a busy branch: the probes while BENCH_BRANCH_RATE (default 50) orders/s of DEMO-1 itself arrive, all of
#      them carried by the stream;
#   4. another process: the probes sent to a second `orderhub serve --role api` on the same database, the board
#      still on the first (several instances behind a load balancer): no nudge reaches the board's feed, which
#      sees the order at its next poll (every 250 ms).
# The target is a p99 of at most 1,000 ms from the answer to the event. Everything runs on loopback against a
# throwaway PostgreSQL 15 cluster (deploy/pg-local.sh, fsync on) that is destroyed at the end, also on failure or
# Ctrl-C, with the processes stopped by PID. The table is printed and written to BENCH_RESULT (default
# tests/load/results/board-<date>-<host>.md). Exits non-zero when a webhook was not answered 200 or an event
# did not come.
# ORDERHUB_BUILD_DIR (default build) holds bin/orderhub (built as Release when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
# shellcheck source=tests/load/bench-lib.sh
. "$root/tests/load/bench-lib.sh"

probes=${BENCH_PROBES:-300}
interval=${BENCH_INTERVAL:-0.1}
load_rate=${BENCH_LOAD_RATE:-500}
branch_rate=${BENCH_BRANCH_RATE:-50}
build=${ORDERHUB_BUILD_DIR:-build}
load=$root/tests/load

./deploy/install-deps.sh --bench
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target orderhub -j2 >/dev/null 2>&1 || cmake --build "$build" --target orderhub -j2 >/dev/null
hub_bin=$(cd "$build/bin" && pwd)/orderhub
host=$(hostname -s)
result=${BENCH_RESULT:-$root/tests/load/results/board-$(date -u +%Y-%m-%d)-$host.md}

bench_work board
export ORDERHUB_SECRET_KEY=${ORDERHUB_SECRET_KEY:-$(openssl rand -hex 32)}
"$root/deploy/pg-local.sh" start "$work/pg" >/dev/null
bench_provision "$hub_bin" board
ORDERHUB_DATABASE_URL=$bench_url "$hub_bin" branch create --id OTHER-1 --brand OTHER >/dev/null
BOARD_PASSWORD=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
export BOARD_PASSWORD
ORDERHUB_DATABASE_URL=$bench_url "$hub_bin" user add --email board@demo.test --brand DEMO --branch DEMO-1 --json \
  <<<"$BOARD_PASSWORD" >/dev/null
sed 's/"branch_id": "DEMO-1"/"branch_id": "OTHER-1"/' deploy/examples/order-created.json >"$work/other.json"
grep -q '"OTHER-1"' "$work/other.json" || { echo "the example order's branch_id is not DEMO-1" >&2; exit 1; }

bench_serve "$hub_bin" "$bench_url" "$work/hub.log"
url=http://127.0.0.1:$bench_port
bench_serve "$hub_bin" "$bench_url" "$work/hub-2.log"
other_url=http://127.0.0.1:$bench_port
window=$(python3 -c "import math; print(math.ceil($probes * $interval))")

# run NAME PREFIX [RATE BODY [INGEST_URL]]: the probes, beside RATE orders/s of BODY for the probes' window when
# RATE is not empty, sent to INGEST_URL when given.
declare -A out
run() {
  local name=$1 prefix=$2 rate=${3:-} body=${4:-} ingest=${5:-$url} bg=
  if [ -n "$rate" ]; then
    python3 "$load/send_orders.py" --url "$url$bench_webhook" --count $((rate * (window + 1))) --rate "$rate" \
      --connections 16 --prefix "$prefix-load" --body "$body" >"$work/$name-load.json" &
    bg=$!
    pids+=("$bg")
    sleep 1
  fi
  python3 "$load/board_latency.py" --url "$url" --ingest-url "$ingest" --webhook "$bench_webhook" \
    --email board@demo.test --probes "$probes" --interval "$interval" --prefix "$prefix" >"$work/$name.json" || status=1
  if [ -n "$bg" ]; then
    wait "$bg" || status=1
  fi
  out[$name]=$(cat "$work/$name.json")
  echo "$name: ${out[$name]}" >&2
}

status=0
bench_vacuum
run idle IDLE
bench_vacuum
run busy-hub HUB "$load_rate" "$work/other.json"
bench_vacuum
run busy-branch BRANCH "$branch_rate" "$root/deploy/examples/order-created.json"
bench_vacuum
run other-process OTHER "" "" "$other_url"

field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))' "$1" "$2"; }
load_of() {
  if [ -f "$work/$1-load.json" ]; then
    python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
print("%s orders/s, answers p99 %s ms, not 200: %d" % (d["rate"], d["p99_ms"], d["non200"] + d["errors"]))' \
      "$work/$1-load.json"
  else
    echo "none"
  fi
}
{
  echo "# Board latency, $(date -u +%Y-%m-%d) on $host"
  echo
  echo "$(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) cores; commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- hub common || echo " + local changes")."
  echo "tests/load/board-bench.sh: $probes order_created webhooks of DEMO-1, one every $interval s, followed by a board"
  echo "user of DEMO-1 on GET /api/dashboard/events. Target (issue 11): a new order on the board within one second."
  echo
  echo "| run | other traffic | delivered / sent | answer -> event p50 | p95 | p99 | max | send -> event p50 | p99 | max |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for name in idle busy-hub busy-branch other-process; do
    j=${out[$name]}
    echo "| $name | $(load_of "$name") | $(field "$j" delivered) / $(field "$j" probes) |" \
      "$(field "$j" answer_to_event_p50_ms) ms | $(field "$j" answer_to_event_p95_ms) ms |" \
      "$(field "$j" answer_to_event_p99_ms) ms | $(field "$j" answer_to_event_max_ms) ms |" \
      "$(field "$j" send_to_event_p50_ms) ms | $(field "$j" send_to_event_p99_ms) ms | $(field "$j" send_to_event_max_ms) ms |"
  done
  echo
  echo "busy-hub: $load_rate orders/s of another brand's branch beside the probes; busy-branch: $branch_rate orders/s of"
  echo "DEMO-1 itself, every one an event on the board's stream; other-process: the probes sent to a second hub process"
  echo "on the same database, so the board's feed sees them at its next poll (250 ms), not at once."
} | tee "$result"
exit $status

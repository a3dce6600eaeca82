#!/usr/bin/env bash
# Instructions per stored order of two builds of `orderhub serve --role api` (issue 23), counted by valgrind's
# callgrind. On these VMs the hub's CPU time per order swings by 15 to 30 % between rounds of the same build
# (tests/load/ab-bench.sh), more than a cut of a few per cent can show; the instructions the hub executes in user
# space per stored order do not depend on the machine's speed or on its neighbours. They do not count the kernel's
# work (system calls) nor cache misses: use this for changes to the hub's own code, ab-bench.sh for the rest.
#
#   HUB_A=path/to/orderhub HUB_B=path/to/other/orderhub tests/load/ab-instructions.sh
#
# Both hubs run under callgrind at once against two databases of one throwaway PostgreSQL 15 cluster. Each round:
# the counters zeroed, wrk (tests/load/ingest.lua) for BENCH_SECONDS against a, the count read; then the same for
# b. Under callgrind the hub runs about fifty times slower, so the statements carry other batch sizes than at full
# speed: compare a with b, not with ab-bench.sh's figures. Environment: HUB_A, HUB_B (default build/bin/orderhub);
# BENCH_SECONDS (default 10); BENCH_ROUNDS (default 3); BENCH_CONNECTIONS (default 16); BENCH_CACHE_SIM=1 also
# simulates the caches (callgrind --cache-sim=yes, slower still) and reports the data reads and writes that missed
# the first-level cache per order, for changes that move what memory a request touches rather than how much work
# it does. Results go to stdout.
set -euo pipefail
hub_a=${HUB_A:+$(realpath -m "$HUB_A")}
hub_b=${HUB_B:+$(realpath -m "$HUB_B")}
cd "$(dirname "$0")/../.."
root=$PWD
load=$root/tests/load
pgbin=/usr/lib/postgresql/15/bin
secs=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-3}
conns=${BENCH_CONNECTIONS:-16}
cache_sim=${BENCH_CACHE_SIM:-0}
[ "$cache_sim" = 1 ] && sim_opt=--cache-sim=yes || sim_opt=--cache-sim=no
threads=$((conns < 2 ? 1 : 2))
declare -A bin url port hpid wh
# shellcheck source=tests/load/bench-lib.sh
. "$load/bench-lib.sh"
bench_ab_builds "$hub_a" "$hub_b"
command -v valgrind >/dev/null || { echo "valgrind is needed: ./deploy/install-deps.sh --bench" >&2; exit 2; }
bench_work ab-instructions

"$root/deploy/pg-local.sh" start "$work/pg" >/dev/null
sql() { "$pgbin/psql" -X -q -tA -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
export ORDERHUB_SECRET_KEY=${ORDERHUB_SECRET_KEY:-$(openssl rand -hex 32)}
export ORDERHUB_LOG_FORMAT=json

for v in a b; do
  bench_provision "${bin[$v]}" "instr_$v"
  url[$v]=$bench_url
  wh[$v]=$bench_webhook
  # exec keeps the PID: callgrind_control finds the run by it.
  printf '#!/bin/sh\nexec valgrind --tool=callgrind %s --callgrind-out-file=%s --dump-instr=no "%s" "$@"\n' \
    "$sim_opt" "$work/callgrind-$v.out" "${bin[$v]}" >"$work/hub-$v.sh"
  chmod +x "$work/hub-$v.sh"
  bench_serve "$work/hub-$v.sh" "${url[$v]}" "$work/hub-$v.log"
  hpid[$v]=$bench_pid
  port[$v]=$bench_port
done

# The instructions the run executed since its counters were last zeroed: the sum of its threads' lines
# ("   Th 2  1,234,567") after "Totals:".
instructions() { counted "$1" Ir; }
# The sum of the events named (callgrind_control -e A,B) over the run's threads.
counted() {
  callgrind_control -e "$2" "$1" 2>/dev/null |
    awk '/Totals:/ { t = 1; next } t && $1 == "Th" { for (i = 3; i <= NF; i++) { gsub(",", "", $i); s += $i } } END { if (t) print s }'
}

echo "a: ${bin[a]}"
echo "b: ${bin[b]}"
echo "$conns connections, $rounds rounds of $secs s under callgrind, alternating (commit $(git rev-parse --short HEAD))"
echo
if [ "$cache_sim" = 1 ]; then
  echo "| round | side | stored orders | instructions per order | first-level data misses per order |"
  echo "|---:|---|---:|---:|---:|"
else
  echo "| round | side | stored orders | instructions per order |"
  echo "|---:|---|---:|---:|"
fi
: >"$work/rows"
for r in $(seq "$rounds"); do
  for v in a b; do
    callgrind_control -z "${hpid[$v]}" >/dev/null 2>&1
    BENCH_RUN=I$r$v BENCH_SECONDS=$secs BENCH_BODY=$root/deploy/examples/order-created.json \
      wrk -t "$threads" -c "$conns" -d "$((secs + 5))s" --timeout 30s -s "$load/ingest.lua" \
      "http://127.0.0.1:${port[$v]}${wh[$v]}" >"$work/wrk.out" 2>&1 || { cat "$work/wrk.out" >&2; exit 1; }
    sleep 1  # answers still being written when wrk stopped
    ir=$(instructions "${hpid[$v]}")
    [ -n "$ir" ] || { echo "callgrind_control gave no count for ${hpid[$v]}" >&2; exit 1; }
    stored=$(sql "${url[$v]}" "SELECT count(*) FROM hub.orders WHERE external_id LIKE 'I$r$v-%'")
    [ "$stored" -gt 0 ] || { echo "no order stored in round $r ($v)" >&2; cat "$work/wrk.out" >&2; exit 1; }
    if [ "$cache_sim" = 1 ]; then
      missed=$(counted "${hpid[$v]}" D1mr,D1mw)
      [ -n "$missed" ] || { echo "callgrind_control gave no miss count for ${hpid[$v]}" >&2; exit 1; }
      echo "$r $v $stored $((ir / stored)) $((missed / stored))" >>"$work/rows"
      echo "| $r | $v | $stored | $((ir / stored)) | $((missed / stored)) |"
    else
      echo "$r $v $stored $((ir / stored))" >>"$work/rows"
      echo "| $r | $v | $stored | $((ir / stored)) |"
    fi
  done
done
python3 - "$work/rows" <<'EOF'
import statistics
import sys
rows = {}
for line in open(sys.argv[1]):
    r, v, stored, *per = line.split()
    rows[(r, v)] = [int(x) for x in per]
pairs = sorted({r for r, _ in rows}, key=int)
print()
for k, what in enumerate(["instructions per stored order", "first-level data misses per stored order"]):
    if len(rows[(pairs[0], "a")]) <= k:
        break
    ratio = [rows[(r, "b")][k] / rows[(r, "a")][k] for r in pairs]
    print(f"b / a per pair, {what}: " + ", ".join(f"{x:.3f}" for x in ratio) +
          f" (median {statistics.median(ratio):.3f})")
EOF

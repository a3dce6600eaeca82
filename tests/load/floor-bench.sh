#!/usr/bin/env bash
# The floor under the hub's CPU per stored order (issue 23): how much of it a bare Beast loop with Boost.JSON
# parsing (tests/load/floor_server.cpp) spends on the same requests, on this machine, in one run.
#
# Each round, at BENCH_CONNECTIONS (default 64) with wrk and tests/load/ingest.lua (the interface's example
# order_created, a unique payload.id per request) for BENCH_SECONDS (default 10):
#   1. hub: `orderhub serve --role api` storing every order in a throwaway PostgreSQL 15 cluster (as ab-bench.sh);
#   2. floor, paced: floor_server releasing the answers waiting every time the hub's mean answer time of step 1
#      has passed (one timer for all, as a group commit releases the hub's), so that the requests come at the hub's
#      pace and in its kind of bursts;
#   3. floor, unpaced: floor_server answering at once, as fast as wrk and the loop go.
# Per round and server: requests/s, mean and p99 latency, and the server's CPU per answered request from /proc
# (user and system, threads included); then the medians, and the hub's CPU per order minus the paced floor's: what
# the hub adds to the bare loop (validation, the stored forms, the batch to PostgreSQL and its results, the access
# log, the metrics).
#
# Environment: BENCH_SECONDS, BENCH_ROUNDS (default 3), BENCH_CONNECTIONS; ORDERHUB_BUILD_DIR (default build): the
# script configures it with -DORDERHUB_BENCH=ON and builds orderhub and floor_server. Results go to stdout;
# nothing is written to the repository.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
load=$root/tests/load
build=${ORDERHUB_BUILD_DIR:-build}
secs=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-3}
conns=${BENCH_CONNECTIONS:-64}
threads=$((conns < 2 ? 1 : 2))  # wrk wants at least one connection per thread

./deploy/install-deps.sh --bench
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DORDERHUB_BENCH=ON >/dev/null
cmake --build "$build" --target orderhub floor_server -j2 >/dev/null
hub_bin=$(realpath "$build/bin/orderhub")
floor_bin=$(realpath "$build/bin/floor_server")

# shellcheck source=tests/load/bench-lib.sh
. "$load/bench-lib.sh"
bench_work floor-bench
"$root/deploy/pg-local.sh" start "$work/pg" >/dev/null
"$load/warm-wal.sh" "$("$root/deploy/pg-local.sh" url "$work/pg" postgres)" >/dev/null 2>&1
export ORDERHUB_SECRET_KEY=${ORDERHUB_SECRET_KEY:-$(openssl rand -hex 32)}
export ORDERHUB_LOG_FORMAT=json
bench_provision "$hub_bin" floor
bench_serve "$hub_bin" "$bench_url" "$work/hub.log"
hub_pid=$bench_pid
hub_port=$bench_port

# floor_start PERIOD_US: starts floor_server (0: unpaced); sets $floor_pid and $floor_port.
floor_start() {
  "$floor_bin" "$1" >"$work/floor.out" &
  floor_pid=$!
  pids+=("$floor_pid")
  floor_port=
  for _ in $(seq 100); do
    floor_port=$(sed -n 's/^listening \([0-9]*\)$/\1/p' "$work/floor.out")
    [ -n "$floor_port" ] && return 0
    sleep 0.05
  done
  echo "floor_server did not start" >&2
  exit 1
}

floor_stop() {
  kill "$floor_pid"
  wait "$floor_pid" 2>/dev/null || true
}

# measure NAME ROUND PID URL: one wrk run against URL; appends "round name rate mean_us p99_us user_us sys_us ok" to
# $work/rows (CPU per answered request).
measure() {
  local name=$1 r=$2 pid=$3 url=$4 before after result
  before=$(python3 "$load/procstat.py" times "$pid")
  BENCH_RUN="F$r$name" BENCH_SECONDS=$secs BENCH_BODY=$root/deploy/examples/order-created.json \
    wrk -t "$threads" -c "$conns" -d "$((secs + 2))s" --timeout 10s --latency -s "$load/ingest.lua" "$url" \
    >"$work/wrk.out" 2>&1 || { cat "$work/wrk.out" >&2; exit 1; }
  after=$(python3 "$load/procstat.py" times "$pid")
  result=$(grep '^RESULT' "$work/wrk.out" || true)
  [ -n "$result" ] || { cat "$work/wrk.out" >&2; exit 1; }
  python3 - "$r" "$name" "$secs" "$before" "$after" "$result" >>"$work/rows" <<'EOF'
import sys
r, name, secs, before, after, result = sys.argv[1:]
kv = dict(p.split("=") for p in result.split()[1:])
ok, bad = int(kv["ok"]), int(kv["non200"])
if ok == 0 or bad:
    sys.exit(f"{name}: {ok} answers 200, {bad} others")
u0, s0 = map(float, before.split())
u1, s1 = map(float, after.split())
print(r, name, f"{ok / int(secs):.0f}", kv["mean_us"], kv["p99_us"], f"{(u1 - u0) * 1e6 / ok:.1f}",
      f"{(s1 - s0) * 1e6 / ok:.1f}", ok)
EOF
  tail -n 1 "$work/rows" | awk '{printf "| %s | %s | %s | %.2f | %.1f | %.1f | %.1f | %.1f |\n", $1, $2, $3, $4 / 1000, $5 / 1000, $6 + $7, $6, $7}'
}

echo "$conns connections, $rounds rounds of $secs s (commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet -- . ':!tests/load/results' 2>/dev/null || echo ' + local changes'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| round | server | requests/s | mean ms | p99 ms | CPU µs/request | user | system |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
: >"$work/rows"
for r in $(seq "$rounds"); do
  bench_vacuum
  measure hub "$r" "$hub_pid" "http://127.0.0.1:$hub_port$bench_webhook"
  mean=$(tail -n 1 "$work/rows" | cut -d' ' -f4)
  floor_start "$mean"
  measure floor-paced "$r" "$floor_pid" "http://127.0.0.1:$floor_port/webhooks/floor"
  floor_stop
  floor_start 0
  measure floor-unpaced "$r" "$floor_pid" "http://127.0.0.1:$floor_port/webhooks/floor"
  floor_stop
done
python3 - "$work/rows" <<'EOF'
import statistics
import sys
by = {}
for line in open(sys.argv[1]):
    r, name, rate, mean, p99, user, system, ok = line.split()
    by.setdefault(name, []).append((float(user), float(system), float(rate)))
def med(name, i):
    return statistics.median(x[i] for x in by[name])
print()
for name in ("hub", "floor-paced", "floor-unpaced"):
    print(f"{name}: median {med(name, 0) + med(name, 1):.1f} µs per request (user {med(name, 0):.1f}, "
          f"system {med(name, 1):.1f}) at {med(name, 2):.0f} requests/s")
hub, floor = by["hub"], by["floor-paced"]
extra = statistics.median((h[0] + h[1]) - (f[0] + f[1]) for h, f in zip(hub, floor))
share = statistics.median((f[0] + f[1]) / (h[0] + h[1]) for h, f in zip(hub, floor))
print(f"the hub over the paced floor: median {extra:.1f} µs per order, round by round; the floor is "
      f"{share:.2f} × the hub's CPU per order")
EOF

#!/usr/bin/env bash
# Forwarding benchmark (issue 8), one run on this machine:
#   1. drain: 20,000 orders stored by `orderhub serve --role api`, then one `orderhub serve --role forwarder`
#      delivers them to the reference POS (`orderpos serve`): orders/s;
#   2. steady: one `orderhub serve` (api and forwarder) receives 500 orders/s on a fixed schedule
#      (tests/load/send_orders.py) for BENCH_SECONDS; the commit -> POS latency p50/p99, measured from the
#      databases: hub.orders.created_at (the order's transaction) against pos.orders.created_at (the POS stored
#      it, just before answering) and against the delivered attempt's answer (attempted_at, the exchange's start,
#      plus latency_ms: when the hub had the POS's answer);
#   3. beside a black-holed POS (product.md section 10): a second brand whose POS accepts connections and never
#      answers (tests/reliability/faultproxy.py blackhole), then runs 1 and 2 again for the healthy POS with the
#      black-holed brand's orders mixed in: BENCH_BLACKHOLE_ORDERS stored with the drain, BENCH_BLACKHOLE_RATE
#      orders/s beside the steady run. The healthy POS's drain rate and latency are reported next to those of
#      runs 1 and 2 (same invocation, same cluster).
# Everything runs on loopback against a throwaway PostgreSQL 15 cluster (deploy/pg-local.sh, fsync on; WAL sizes
# and recycled segments as tests/load/warm-wal.sh sets them) that is destroyed at the end, also on failure or
# Ctrl-C. The table is printed and written to
# tests/load/results/forward-<date>-<host>.md.
#
#   2b. the whole path at a steady rate (issue 23): one `orderhub serve` (api and forwarder) receives
#      BENCH_PATH_RATE (default 300) orders/s for BENCH_SECONDS; CPU per order of PostgreSQL (all its processes:
#      the hub's ingest, claim, delivery and end of claim, and the reference POS's insert, which share the
#      cluster), of the hub and of orderpos, from /proc over the sending window (no query of the benchmark's own
#      runs in it); then every order is checked delivered;
# Environment: BENCH_DRAIN_ORDERS (default 20000), BENCH_RATE (default 500) orders/s for BENCH_SECONDS (default
# 20) s; BENCH_PATH_RATE (default 300) orders/s for run 2b; BENCH_FORWARD_ARGS extra `orderhub serve` flags for both runs (e.g. --forward-per-host 32);
# BENCH_PRE_DRAIN_SQL is run in the hub's database before the drain (for experiments: drop a trigger to see its cost);
# BENCH_PG_STATS=1 loads pg_stat_statements and prints where PostgreSQL spent the time of the drain, of the
# steady run and of the path run, statement by statement (the profile to read when the forwarder falls short), and PostgreSQL's CPU in
# the path run's window process by process (each connection's user and database, the background processes).
# BENCH_AUTO_EXPLAIN=FILE logs the plans (EXPLAIN ANALYZE with buffers) of a sample of the top-level statements,
# BENCH_AUTO_EXPLAIN_RATE of them (default 0.02), and copies the server's log to FILE at the end (how the end of
# claims' bitmap scan was found); its instrumentation slows every run, so no CPU figure of such a run compares.
# BENCH_BLACKHOLE=0 skips run 3; BENCH_BLACKHOLE_ORDERS (default 2000) and BENCH_BLACKHOLE_RATE (default 50) size
# the black-holed brand's orders.
# ORDERHUB_BUILD_DIR (default build) holds bin/orderhub and bin/orderpos (built as Release when missing);
# BENCH_RESULT the results file (default tests/load/results/forward-<date>-<host>.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

drain_orders=${BENCH_DRAIN_ORDERS:-20000}
rate=${BENCH_RATE:-500}
path_rate=${BENCH_PATH_RATE:-300}
secs=${BENCH_SECONDS:-20}
blackhole=${BENCH_BLACKHOLE:-1}
hole_orders=${BENCH_BLACKHOLE_ORDERS:-2000}
hole_rate=${BENCH_BLACKHOLE_RATE:-50}
build=${ORDERHUB_BUILD_DIR:-build}
pgbin=/usr/lib/postgresql/15/bin
load=$root/tests/load

./deploy/install-deps.sh --bench
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target orderhub orderpos -j2 >/dev/null 2>&1 || cmake --build "$build" --target orderhub orderpos -j2 >/dev/null
hub_bin=$(cd "$build/bin" && pwd)/orderhub
pos_bin=$(cd "$build/bin" && pwd)/orderpos

# shellcheck source=tests/load/bench-lib.sh
. "$root/tests/load/bench-lib.sh"
bench_work forward-bench  # $work and $pids, both cleaned up on exit (and on Ctrl-C)

log() { echo "[$(date +%T)] $*" >&2; }
started_at=$(date +%s)
sql() { "$pgbin/psql" -X -q -tA -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
cpu() { python3 "$load/procstat.py" cpu "$1"; }
not_delivered() {  # PREFIX: orders PREFIX-* whose job is not delivered
  sql "$hub_url" "SELECT count(*) FROM hub.forward_jobs j JOIN hub.orders o ON o.id = j.order_id
    WHERE o.external_id LIKE '$1-%' AND j.state <> 'delivered'"
}
wait_delivered() {  # PREFIX: waits up to 60 s for every PREFIX-* order to be delivered; prints how many are not
  local left
  for _ in $(seq 240); do
    left=$(not_delivered "$1")
    [ "$left" = 0 ] && break
    sleep 0.25
  done
  echo "$left"
}
sub() { python3 -c 'import sys; print(f"{float(sys.argv[1]) - float(sys.argv[2]):.2f}")' "$1" "$2"; }

log "starting a throwaway PostgreSQL cluster in $work/pg"
"$root/deploy/pg-local.sh" start "$work/pg" >/dev/null
if [ "${BENCH_PG_STATS:-0}" = 1 ]; then
  echo "shared_preload_libraries = 'pg_stat_statements'" >>"$work/pg/data/postgresql.conf"
  echo "pg_stat_statements.track_planning = on" >>"$work/pg/data/postgresql.conf"
fi
if [ -n "${BENCH_AUTO_EXPLAIN:-}" ]; then
  printf '%s\n' "session_preload_libraries = 'auto_explain'" "auto_explain.log_min_duration = 0" \
    "auto_explain.log_analyze = on" "auto_explain.log_buffers = on" \
    "auto_explain.sample_rate = ${BENCH_AUTO_EXPLAIN_RATE:-0.02}" >>"$work/pg/data/postgresql.conf"
fi
if [ "${BENCH_PG_STATS:-0}" = 1 ] || [ -n "${BENCH_AUTO_EXPLAIN:-}" ]; then
  "$root/deploy/pg-local.sh" restart "$work/pg" >/dev/null
fi
pg_pid=$(head -n 1 "$work/pg/data/postmaster.pid")
hub_url=$("$root/deploy/pg-local.sh" url "$work/pg" orderhub)
pos_url=$("$root/deploy/pg-local.sh" url "$work/pg" orderpos)
log "recycled WAL segments, as on a server that has been running (tests/load/warm-wal.sh)"
"$root/tests/load/warm-wal.sh" "$("$root/deploy/pg-local.sh" url "$work/pg" postgres)"

export ORDERHUB_SECRET_KEY=${ORDERHUB_SECRET_KEY:-$(openssl rand -hex 32)}
export ORDERHUB_LOG_FORMAT=json ORDERHUB_DATABASE_URL=$hub_url ORDERPOS_DATABASE_URL=$pos_url

# Starts `BINARY serve ARGS...` on a free loopback port, logging to $work/NAME.log; sets $svc_pid and $svc_port.
start_service() {
  local name=$1 program=$2
  shift 2
  "$program" serve --listen 127.0.0.1:0 "$@" 2>"$work/$name.log" &
  svc_pid=$!
  pids+=("$svc_pid")
  svc_port=
  for _ in $(seq 300); do
    svc_port=$(sed -n 's/.*"msg":"listening".*"address":"127\.0\.0\.1:\([0-9]*\)".*/\1/p' "$work/$name.log" | head -n 1)
    [ -n "$svc_port" ] && return 0
    kill -0 "$svc_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$name did not start" >&2
  cat "$work/$name.log" >&2
  exit 1
}
stop_service() {  # PID: SIGTERM and wait (the forwarder finishes its deliveries in flight)
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
# PREFIX: "n p50 p99 max answer_p50 answer_p99 answer_max" (ms) of the delivered orders PREFIX-*: commit -> POS
# stored (hub.orders.created_at against pos.orders.created_at, one PostgreSQL clock) and commit -> the hub had the
# POS's answer (the delivered attempt's attempted_at, when the exchange started, plus its latency_ms).
latencies() {
  sql "$hub_url" "COPY (SELECT o.external_id, extract(epoch FROM o.created_at),
      extract(epoch FROM a.attempted_at) + a.latency_ms / 1000.0
    FROM hub.orders o JOIN hub.pos_delivery_attempts a ON a.order_id = o.id AND a.outcome = 'delivered'
    WHERE o.external_id LIKE '$1-%') TO STDOUT" >"$work/hub-times-$1.tsv"
  sql "$pos_url" "COPY (SELECT substr(partner_reference, 7), extract(epoch FROM created_at) FROM pos.orders
    WHERE partner_reference LIKE 'bench:$1-%') TO STDOUT" >"$work/pos-times-$1.tsv"
  python3 - "$work/hub-times-$1.tsv" "$work/pos-times-$1.tsv" <<'EOF'
import sys
hub = {}
for line in open(sys.argv[1]):
    ext, created, answered = line.split("\t")
    hub[ext] = (float(created), float(answered))
pos = {}
for line in open(sys.argv[2]):
    ext, stored = line.split("\t")
    pos[ext] = float(stored)
to_pos = sorted((pos[e] - c) * 1000 for e, (c, _) in hub.items() if e in pos)
to_answer = sorted((a - c) * 1000 for c, a in hub.values())
def pct(v, p):
    return v[min(len(v) - 1, int(len(v) * p))] if v else float("nan")
print(len(to_pos), *(f"{x:.1f}" for x in (pct(to_pos, .5), pct(to_pos, .99), to_pos[-1] if to_pos else 0,
                                          pct(to_answer, .5), pct(to_answer, .99), to_answer[-1] if to_answer else 0)))
EOF
}

# ---- the reference POS and the hub, provisioned as tests/e2e/test_forward.py does ----
"$pos_bin" migrate >/dev/null
"$pos_bin" menu load deploy/demo-menu.json >/dev/null
pos_password=$(openssl rand -hex 12)
"$pos_bin" user add --email bench@demo.test --password - --brand DEMO <<<"$pos_password" >/dev/null
start_service pos "$pos_bin"
pos_pid=$svc_pid
pos_port=$svc_port
token=$(python3 - "$pos_port" "$pos_password" <<'EOF'
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
c.request("POST", "/api/login", json.dumps({"email": "bench@demo.test", "password": sys.argv[2]}),
          {"Content-Type": "application/json"})
print(json.loads(c.getresponse().read())["access_token"])
EOF
)
"$hub_bin" migrate >/dev/null
"$hub_bin" branch create --id DEMO-1 --brand DEMO >/dev/null
partner=$(ORDERHUB_PUBLIC_URL=http://127.0.0.1:1 "$hub_bin" partner create --name "Bench Platform" --label bench --json)
webhook=/webhooks/$(python3 -c 'import json,sys; print(json.load(sys.stdin)["webhook_url"].rsplit("/webhooks/", 1)[1])' <<<"$partner")
"$hub_bin" pos set --brand DEMO --base-url "http://127.0.0.1:$pos_port" --token - <<<"$token" >/dev/null

# The benchmark measures capacity, not the per-partner rate limiter: it is raised out of the way.
hub_flags=()
# The help is read whole first: `grep -q` stops reading at its match, and under pipefail the writer's SIGPIPE would
# read as "no such flag".
if grep -q -- '--rate-limit-per-second' <<<"$("$hub_bin" serve --help 2>&1)"; then
  hub_flags+=(--rate-limit-per-second 1000000 --rate-limit-burst 1000000)
fi
# shellcheck disable=SC2206
forward_flags=(${BENCH_FORWARD_ARGS:-})

# ---- 1. drain ----
log "storing $drain_orders orders through orderhub serve --role api"
start_service api "$hub_bin" --role api "${hub_flags[@]}"
api_pid=$svc_pid
python3 "$load/send_orders.py" --url "http://127.0.0.1:$svc_port$webhook" --count "$drain_orders" --connections 32 \
  --prefix DRAIN >"$work/drain-send.json" || { cat "$work/drain-send.json" >&2; exit 1; }
stop_service "$api_pid"
stored=$(sql "$hub_url" "SELECT count(*) FROM hub.forward_jobs WHERE state = 'pending'")
[ "$stored" = "$drain_orders" ] || { echo "expected $drain_orders pending jobs, found $stored" >&2; exit 1; }
[ -n "${BENCH_PRE_DRAIN_SQL:-}" ] && sql "$hub_url" "$BENCH_PRE_DRAIN_SQL" >&2
sql "$hub_url" "CHECKPOINT" >/dev/null

log "draining them with orderhub serve --role forwarder"
if [ "${BENCH_PG_STATS:-0}" = 1 ]; then
  stats_url=$("$root/deploy/pg-local.sh" url "$work/pg" postgres)
  sql "$stats_url" "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
  sql "$stats_url" "SELECT pg_stat_statements_reset()" >/dev/null
fi
pg0=$(cpu "$pg_pid")
pos0=$(cpu "$pos_pid")
t0=$(date +%s.%N)
start_service forwarder "$hub_bin" --role forwarder "${forward_flags[@]}"
fwd_pid=$svc_pid
delivered=0
for _ in $(seq 1200); do
  # Counted through the partial indexes of the jobs still to do: counting the delivered rows scans the table,
  # and at four times a second that scan was the largest item in PostgreSQL's profile of the drain.
  left=$(sql "$hub_url" "SELECT (SELECT count(*) FROM hub.forward_jobs WHERE state = 'pending' AND due_at > '-infinity')
                           + (SELECT count(*) FROM hub.forward_jobs WHERE state = 'in_flight' AND lease_until > '-infinity')")
  delivered=$((drain_orders - left))
  [ "$left" -eq 0 ] && break
  sleep 0.25
done
t1=$(date +%s.%N)
fwd_cpu=$(cpu "$fwd_pid")
fwd_rss=$(python3 "$load/procstat.py" mem "$fwd_pid")
pg1=$(cpu "$pg_pid")
pos1=$(cpu "$pos_pid")
stop_service "$fwd_pid"
pg_stats() {  # STAGE: where PostgreSQL spent its time since the last reset, then a reset
  [ "${BENCH_PG_STATS:-0}" = 1 ] || return 0
  log "where PostgreSQL spent the $1 (pg_stat_statements, top 15 by execution time; planning beside it):"
  sql "$stats_url" "SELECT round(total_exec_time)::text || ' ms | ' || calls || ' calls | ' ||
      round((total_exec_time / greatest(calls, 1))::numeric, 3) || ' ms/call | ' ||
      plans || ' plans, ' || round(total_plan_time) || ' ms | ' ||
      left(regexp_replace(query, '\s+', ' ', 'g'), 110)
    FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 15" >&2
  sql "$stats_url" "SELECT pg_stat_statements_reset()" >/dev/null
}
pg_stats drain
[ "$delivered" -ge "$drain_orders" ] || { echo "only $delivered of $drain_orders delivered in 300 s" >&2; exit 1; }
read -r window attempts not_delivered < <(sql "$hub_url" "SELECT
    extract(epoch FROM max(attempted_at) - min(attempted_at)), count(*), count(*) FILTER (WHERE outcome <> 'delivered')
  FROM hub.pos_delivery_attempts" | tr '|' ' ')
read -r at_pos distinct_pos < <(sql "$pos_url" "SELECT count(*), count(DISTINCT partner_reference) FROM pos.orders
  WHERE partner_reference LIKE 'bench:DRAIN-%'" | tr '|' ' ')
drain_wall=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
drain_rate_wall=$(python3 -c "print(f'{$drain_orders / ($t1 - $t0):.0f}')")
drain_rate=$(python3 -c "print(f'{$drain_orders / max($window, 0.001):.0f}')")

# ---- 2. steady rate ----
count=$((rate * secs))
log "steady: $rate orders/s for $secs s through one orderhub serve (api and forwarder)"
start_service hub "$hub_bin" "${hub_flags[@]}" "${forward_flags[@]}"
hub_pid=$svc_pid
h0=$(cpu "$hub_pid")
pg0s=$(cpu "$pg_pid")
pos0s=$(cpu "$pos_pid")
python3 "$load/send_orders.py" --url "http://127.0.0.1:$svc_port$webhook" --count "$count" --rate "$rate" \
  --connections 64 --prefix STEADY >"$work/steady-send.json" || { cat "$work/steady-send.json" >&2; exit 1; }
left=$(wait_delivered STEADY)
h1=$(cpu "$hub_pid")
pg1s=$(cpu "$pg_pid")
pos1s=$(cpu "$pos_pid")
hub_rss=$(python3 "$load/procstat.py" mem "$hub_pid")
stop_service "$hub_pid"
[ "$left" = 0 ] || { echo "$left steady orders were not delivered in 60 s" >&2; exit 1; }
pg_stats "steady run"
read -r n_lat pos_p50 pos_p99 pos_max att_p50 att_p99 att_max < <(latencies STEADY)

# ---- 2b. the whole path's CPU per order at a steady rate (issue 23) ----
path_count=$((path_rate * secs))
log "path: $path_rate orders/s for $secs s through one orderhub serve (api and forwarder): CPU per order"
start_service path "$hub_bin" "${hub_flags[@]}" "${forward_flags[@]}"
path_pid=$svc_pid
sql "$hub_url" "CHECKPOINT" >/dev/null
[ "${BENCH_PG_STATS:-0}" = 1 ] && python3 "$load/procstat.py" procs "$pg_pid" "$work/path-procs0.json"
ph0=$(cpu "$path_pid")
ppg0=$(cpu "$pg_pid")
ppos0=$(cpu "$pos_pid")
pt0=$(date +%s.%N)
python3 "$load/send_orders.py" --url "http://127.0.0.1:$svc_port$webhook" --count "$path_count" --rate "$path_rate" \
  --connections 64 --prefix PATH >"$work/path-send.json" || { cat "$work/path-send.json" >&2; exit 1; }
# The window ends when the last order was answered: the deliveries still in flight then (a few milliseconds'
# worth) are outside it, as those of the orders before the window would be inside a longer run.
ph1=$(cpu "$path_pid")
ppg1=$(cpu "$pg_pid")
ppos1=$(cpu "$pos_pid")
pt1=$(date +%s.%N)
if [ "${BENCH_PG_STATS:-0}" = 1 ]; then
  python3 "$load/procstat.py" procs "$pg_pid" "$work/path-procs1.json"
  log "PostgreSQL's CPU in the path run's window, by process:"
  python3 "$load/procstat.py" procsdiff "$work/path-procs0.json" "$work/path-procs1.json" >&2
fi
path_left=$(wait_delivered PATH)
stop_service "$path_pid"
[ "$path_left" = 0 ] || { echo "$path_left path orders were not delivered in 60 s" >&2; exit 1; }
pg_stats "path run at $path_rate orders/s"
path_at_pos=$(sql "$pos_url" "SELECT count(*) FROM pos.orders WHERE partner_reference LIKE 'bench:PATH-%'")
# The answers' latency is what the gathers cost the platform: at this rate a webhook waits for its group commit's
# company.
read -r path_send_rate path_ans_p50 path_ans_p99 < <(python3 -c "import json; d = json.load(open('$work/path-send.json'))
print(f\"{d['rate']} {d['p50_ms']:.1f} {d['p99_ms']:.1f}\")")
path_window=$(python3 -c "print(f'{$pt1 - $pt0:.2f}')")
per_order() { python3 -c "import sys; print(f'{(float(sys.argv[2]) - float(sys.argv[1])) * 1e6 / int(sys.argv[3]):.0f}')" "$@"; }
path_pg_us=$(per_order "$ppg0" "$ppg1" "$path_count")
path_hub_us=$(per_order "$ph0" "$ph1" "$path_count")
path_pos_us=$(per_order "$ppos0" "$ppos1" "$path_count")

# ---- 3. runs 1 and 2 again beside a black-holed POS ----
if [ "$blackhole" = 1 ]; then
  python3 "$root/tests/reliability/faultproxy.py" blackhole >"$work/blackhole.out" &
  hole_pid=$!
  pids+=("$hole_pid")
  hole_port=
  for _ in $(seq 100); do
    hole_port=$(head -n 1 "$work/blackhole.out")
    [ -n "$hole_port" ] && break
    sleep 0.1
  done
  [ -n "$hole_port" ] || { echo "the black-holed POS did not start" >&2; exit 1; }
  "$hub_bin" branch create --id HOLE-1 --brand HOLE >/dev/null
  "$hub_bin" pos set --brand HOLE --base-url "http://127.0.0.1:$hole_port" --token - <<<"never-checked" >/dev/null
  sed 's/"branch_id": "DEMO-1"/"branch_id": "HOLE-1"/' deploy/examples/order-created.json >"$work/hole-order.json"
  grep -q '"branch_id": "HOLE-1"' "$work/hole-order.json" || { echo "no branch_id to replace in the example" >&2; exit 1; }
  open_jobs() {  # jobs to do (pending or leased), counted through the partial indexes as in run 1
    sql "$hub_url" "SELECT (SELECT count(*) FROM hub.forward_jobs WHERE state = 'pending' AND due_at > '-infinity')
                         + (SELECT count(*) FROM hub.forward_jobs WHERE state = 'in_flight' AND lease_until > '-infinity')"
  }

  log "beside a black-holed POS (127.0.0.1:$hole_port): storing $drain_orders orders for the healthy POS and $hole_orders for the black-holed one"
  start_service api "$hub_bin" --role api "${hub_flags[@]}"
  api_pid=$svc_pid
  python3 "$load/send_orders.py" --url "http://127.0.0.1:$svc_port$webhook" --count "$drain_orders" --connections 32 \
    --prefix HDRAIN >"$work/hdrain-send.json" || { cat "$work/hdrain-send.json" >&2; exit 1; }
  python3 "$load/send_orders.py" --url "http://127.0.0.1:$svc_port$webhook" --count "$hole_orders" --connections 32 \
    --prefix HOLED --body "$work/hole-order.json" >"$work/holed-send.json" || { cat "$work/holed-send.json" >&2; exit 1; }
  stop_service "$api_pid"
  hole_waiting=$(($(open_jobs) - drain_orders))
  [ "$hole_waiting" -ge "$hole_orders" ] || { echo "expected $hole_orders black-holed jobs waiting, found $hole_waiting" >&2; exit 1; }
  sql "$hub_url" "CHECKPOINT" >/dev/null
  log "draining them with orderhub serve --role forwarder"
  hpg0=$(cpu "$pg_pid")
  hpos0=$(cpu "$pos_pid")
  ht0=$(date +%s.%N)
  start_service hforwarder "$hub_bin" --role forwarder "${forward_flags[@]}"
  fwd_pid=$svc_pid
  for _ in $(seq 1200); do
    [ $(($(open_jobs) - hole_waiting)) -le 0 ] && break
    sleep 0.25
  done
  ht1=$(date +%s.%N)
  h_fwd_cpu=$(cpu "$fwd_pid")
  h_fwd_rss=$(python3 "$load/procstat.py" mem "$fwd_pid")
  h_pg_cpu=$(sub "$(cpu "$pg_pid")" "$hpg0")
  h_pos_cpu=$(sub "$(cpu "$pos_pid")" "$hpos0")
  stop_service "$fwd_pid"
  # Not delivered beside the black hole is a result (the isolation failed), reported in the table, not an abort.
  h_drain_left=$(not_delivered HDRAIN)
  h_window=$(sql "$hub_url" "SELECT extract(epoch FROM max(a.attempted_at) - min(a.attempted_at))
    FROM hub.pos_delivery_attempts a JOIN hub.orders o ON o.id = a.order_id
    WHERE o.external_id LIKE 'HDRAIN-%' AND a.outcome = 'delivered'")
  h_drain_rate=$(python3 -c "print(f'{($drain_orders - $h_drain_left) / max(${h_window:-0}, 0.001):.0f}')")
  h_drain_wall=$(python3 -c "print(f'{$ht1 - $ht0:.2f}')")
  h_drain_attempts=$(sql "$hub_url" "SELECT count(*) FROM hub.pos_delivery_attempts a JOIN hub.orders o ON o.id = a.order_id
    WHERE o.external_id LIKE 'HOLED-%'")
  h_drain_opened=$(grep -c '"msg":"POS breaker opened"' "$work/hforwarder.log" || true)

  log "steady beside the black hole: $rate orders/s to the healthy POS, $hole_rate orders/s to the black-holed one, for $secs s"
  start_service hhub "$hub_bin" "${hub_flags[@]}" "${forward_flags[@]}"
  hub_pid=$svc_pid
  hh0=$(cpu "$hub_pid")
  hpg0s=$(cpu "$pg_pid")
  hpos0s=$(cpu "$pos_pid")
  python3 "$load/send_orders.py" --url "http://127.0.0.1:$svc_port$webhook" --count $((hole_rate * secs)) --rate "$hole_rate" \
    --connections 16 --prefix HOLES --body "$work/hole-order.json" >"$work/holes-send.json" &
  hole_send_pid=$!
  pids+=("$hole_send_pid")
  python3 "$load/send_orders.py" --url "http://127.0.0.1:$svc_port$webhook" --count "$count" --rate "$rate" \
    --connections 64 --prefix HSTEADY >"$work/hsteady-send.json" || { cat "$work/hsteady-send.json" >&2; exit 1; }
  wait "$hole_send_pid" || { cat "$work/holes-send.json" >&2; exit 1; }
  left=$(wait_delivered HSTEADY)
  h_hub_cpu=$(sub "$(cpu "$hub_pid")" "$hh0")
  h_pg_cpus=$(sub "$(cpu "$pg_pid")" "$hpg0s")
  h_pos_cpus=$(sub "$(cpu "$pos_pid")" "$hpos0s")
  h_hub_rss=$(python3 "$load/procstat.py" mem "$hub_pid")
  stop_service "$hub_pid"
  h_steady_left=$left
  read -r h_n_lat h_pos_p50 h_pos_p99 h_pos_max h_att_p50 h_att_p99 h_att_max < <(latencies HSTEADY)
  h_send_rate=$(python3 -c "import json; print(json.load(open('$work/hsteady-send.json'))['rate'])")
  h_steady_attempts=$(($(sql "$hub_url" "SELECT count(*) FROM hub.pos_delivery_attempts a
    JOIN hub.orders o ON o.id = a.order_id WHERE o.branch_id = 'HOLE-1'") - h_drain_attempts))
  h_steady_opened=$(grep -c '"msg":"POS breaker opened"' "$work/hhub.log" || true)
  h_hole_waiting=$(sql "$hub_url" "SELECT count(*) FROM hub.forward_jobs j JOIN hub.orders o ON o.id = j.order_id
    WHERE o.branch_id = 'HOLE-1' AND j.state IN ('pending', 'in_flight')")
  stop_service "$hole_pid"
  hole_seen=$(tail -n 1 "$work/blackhole.out")
fi
elapsed=$(($(date +%s) - started_at))

# ---- the table ----
verdict() { if python3 -c "import sys; sys.exit(0 if $1 else 1)"; then echo met; else echo "NOT met"; fi; }
send_rate=$(python3 -c "import json; print(json.load(open('$work/steady-send.json'))['rate'])")
late=$(python3 -c "import json; print(json.load(open('$work/steady-send.json'))['max_late_ms'])")
# The forwarding defaults as this binary states them in its help.
default_of() { "$hub_bin" serve --help 2>&1 | sed -n "s/^ *--$1 [A-Z]* .*(default \([0-9]*\)).*/\1/p" | head -n 1; }
host=$(hostname -s)
day=$(date +%F)
out=${BENCH_RESULT:-$load/results/forward-$day-$host.md}
mkdir -p "$(dirname "$out")"
{
  echo "# Forwarding benchmark, $day, $host"
  echo
  echo "$(date -u +%FT%TZ); $(nproc) cores; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg);"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet -- . ':!tests/load/results' 2>/dev/null || echo ' + local changes'); PostgreSQL 15 (fsync on, min_wal_size 2GB, max_wal_size 4GB, WAL segments recycled); orderhub ${hub_flags[*]} ${forward_flags[*]:-} (forwarding defaults: --forward-concurrency $(default_of forward-concurrency), --forward-per-host $(default_of forward-per-host), --forward-timeout-ms $(default_of forward-timeout-ms)) and orderpos with default flags; the whole benchmark took ${elapsed} s."
  echo
  echo "| run | result | hub/forwarder CPU s | orderpos CPU s | PG CPU s | notes |"
  echo "|---|---:|---:|---:|---:|---|"
  echo "| drain $drain_orders stored orders | $drain_rate orders/s | $fwd_cpu | $(sub "$pos1" "$pos0") | $(sub "$pg1" "$pg0") | first to last delivery $(python3 -c "print(f'{$window:.2f}')") s; $drain_rate_wall orders/s counting the forwarder's start ($drain_wall s); $at_pos at the POS ($distinct_pos distinct), $attempts attempts, $not_delivered not delivered; forwarder peak RSS $fwd_rss MiB |"
  echo "| steady $rate orders/s, commit → POS stored | p50 $pos_p50 ms, p99 $pos_p99 ms (max $pos_max) | $(sub "$h1" "$h0") | $(sub "$pos1s" "$pos0s") | $(sub "$pg1s" "$pg0s") | $n_lat orders over $secs s, sent at $send_rate/s (schedule at most $late ms late); hub peak RSS $hub_rss MiB |"
  echo "| steady $rate orders/s, commit → POS answer received | p50 $att_p50 ms, p99 $att_p99 ms (max $att_max) | | | | the delivered attempt's attempted_at (when the exchange started) + latency_ms |"
  echo "| whole path at $path_rate orders/s: CPU per order, webhook → POS commit | PostgreSQL **$path_pg_us µs**, hub $path_hub_us µs, orderpos $path_pos_us µs | $(sub "$ph1" "$ph0") | $(sub "$ppos1" "$ppos0") | $(sub "$ppg1" "$ppg0") | $path_count orders sent at $path_send_rate/s over a $path_window s window (CPU from /proc over it; PostgreSQL: every process of the cluster, which holds the hub's and the POS's databases), all delivered ($path_at_pos at the POS); webhook answers p50 $path_ans_p50 ms, p99 $path_ans_p99 ms |"
  echo
  echo "| target | measured | |"
  echo "|---|---:|---|"
  echo "| forwarder ≥ 2,000 orders/s to the reference POS | $drain_rate orders/s | $(verdict "$drain_rate >= 2000") |"
  echo "| commit → POS p99 ≤ 250 ms at $rate orders/s | $pos_p99 ms | $(verdict "$pos_p99 <= 250") |"
  echo "| PostgreSQL CPU per order, whole path at $path_rate orders/s (issue 23: halve it from the first figure reported) | $path_pg_us µs | reported |"
  if [ "$blackhole" = 1 ]; then
    echo
    echo "Beside a black-holed POS (brand HOLE, whose POS accepts connections and never answers; same invocation and cluster): the healthy POS's figures next to those above."
    echo
    echo "| healthy POS | alone | beside a black-holed POS | hub/forwarder CPU s | orderpos CPU s | PG CPU s | notes |"
    echo "|---|---:|---:|---:|---:|---:|---|"
    echo "| drain $drain_orders stored orders | $drain_rate orders/s | $h_drain_rate orders/s | $h_fwd_cpu | $h_pos_cpu | $h_pg_cpu | stored with $hole_orders black-holed orders; $h_drain_left not delivered within 300 s; first to last healthy delivery $(python3 -c "print(f'{${h_window:-0}:.2f}')") s ($h_drain_wall s counting the forwarder's start); $h_drain_attempts attempts to the black hole, breaker opened $h_drain_opened times; forwarder peak RSS $h_fwd_rss MiB |"
    echo "| steady $rate orders/s, commit → POS stored | p50 $pos_p50 ms, p99 $pos_p99 ms (max $pos_max) | p50 $h_pos_p50 ms, p99 $h_pos_p99 ms (max $h_pos_max) | $h_hub_cpu | $h_pos_cpus | $h_pg_cpus | $h_n_lat orders delivered, $h_steady_left not within 60 s, sent at $h_send_rate/s beside $hole_rate orders/s to the black hole (and the drain's black-holed orders still waiting: $h_hole_waiting at the end); $h_steady_attempts attempts to the black hole, breaker opened $h_steady_opened times; hub peak RSS $h_hub_rss MiB |"
    echo "| steady $rate orders/s, commit → POS answer received | p50 $att_p50 ms, p99 $att_p99 ms (max $att_max) | p50 $h_att_p50 ms, p99 $h_att_p99 ms (max $h_att_max) | | | | the black hole saw: $hole_seen |"
    echo
    echo "| target (product.md section 10: the usual latency beside a bad POS) | measured | |"
    echo "|---|---:|---|"
    echo "| forwarder ≥ 2,000 orders/s to the healthy POS beside a black-holed one | $h_drain_rate orders/s | $(verdict "$h_drain_rate >= 2000 and $h_drain_left == 0") |"
    echo "| commit → POS p99 ≤ 250 ms at $rate orders/s beside a black-holed POS | $h_pos_p99 ms | $(verdict "float('$h_pos_p99') <= 250 and $h_steady_left == 0") |"
  fi
} >"$out"
cat "$out"
log "written to ${out#"$root"/}"
if [ -n "${BENCH_AUTO_EXPLAIN:-}" ]; then
  # pg-local.sh writes the server's log beside the data directory (which may be a link to one under /var/tmp).
  cp "$(dirname "$(readlink -f "$work/pg/data")")/postgresql.log" "$BENCH_AUTO_EXPLAIN"
  log "the sampled plans (auto_explain) are in $BENCH_AUTO_EXPLAIN"
fi

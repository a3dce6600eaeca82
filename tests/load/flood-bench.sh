#!/usr/bin/env bash
# Random-key flood benchmark (issue 20, finding 3): does a flood of unknown webhook keys, as fast as one hub
# process answers them, slow down the real webhooks? One invocation, two runs of BENCH_SECONDS each against one
# `orderhub serve --role api` (its per-partner rate limit raised out of the way, as in ingest-bench.sh):
#   1. alone: real order_created webhooks of one partner at a fixed BENCH_RATE orders/s (tests/load/send_orders.py,
#      a fixed schedule, so the real load is the same in both runs);
#   2. flood: the same real load while wrk (tests/load/flood.lua) POSTs /webhooks/<fresh random key> on
#      FLOOD_CONNECTIONS connections as fast as they are answered.
# Reported: the real webhooks' p50/p99 in each run (from sending each request to its answer, and from its due time
# on the schedule), the ratio p99(flood)/p99(alone) against the target ≤ 2, the flood's rate and its status codes
# (404 unknown key, 503 new-key lookups saturated), the CPU seconds of the hub and of PostgreSQL (all its
# processes) in each run, and the database work the flood caused: the hub's database pool jobs
# (orderhub_db_pool_jobs_total; there is no partner-cache metric) and PostgreSQL's scans of hub.partners
# (pg_stat_user_tables), i.e. the partner lookups that reached the database.
# Everything runs on loopback against a throwaway PostgreSQL 15 cluster (deploy/pg-local.sh, WAL warmed by
# tests/load/warm-wal.sh) that is destroyed at the end, also on failure or Ctrl-C; it takes about
# 2 × BENCH_SECONDS + 30 s. The table is printed and written to tests/load/results/flood-<date>-<host>.md.
#
# Environment: BENCH_SECONDS (default 15) per run; BENCH_RATE (default 300) real orders/s; FLOOD_CONNECTIONS
# (default 32) wrk connections of the flood and FLOOD_THREADS (default 1: one wrk thread outpaces the hub's one network
# thread and leaves the other core to the hub, PostgreSQL and the real client) its threads; ORDERHUB_BUILD_DIR (default build) holds bin/orderhub (built as
# Release, brought up to date first); ORDERHUB_BIN an orderhub binary to run as it is (no build; e.g. another
# checkout's); BENCH_HUB_ARGS extra `orderhub serve` flags.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

secs=${BENCH_SECONDS:-15}
rate=${BENCH_RATE:-300}
flood_conns=${FLOOD_CONNECTIONS:-32}
flood_threads=${FLOOD_THREADS:-1}
build=${ORDERHUB_BUILD_DIR:-build}
pgbin=/usr/lib/postgresql/15/bin
load=$root/tests/load

./deploy/install-deps.sh --bench
if [ -n "${ORDERHUB_BIN:-}" ]; then
  hub_bin=$(realpath "$ORDERHUB_BIN")
  [ -x "$hub_bin" ] || { echo "ORDERHUB_BIN=$ORDERHUB_BIN is not an executable" >&2; exit 1; }
else
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  cmake --build "$build" --target orderhub -j2 >/dev/null 2>&1 || cmake --build "$build" --target orderhub -j2 >/dev/null
  hub_bin=$root/$build/bin/orderhub
  [ -x "$hub_bin" ] || hub_bin=$build/bin/orderhub
fi

# shellcheck source=tests/load/bench-lib.sh
. "$root/tests/load/bench-lib.sh"
bench_work flood-bench  # $work and $pids, both cleaned up on exit (and on Ctrl-C)

log() { echo "[$(date +%T)] $*" >&2; }
started_at=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- PostgreSQL ----
log "starting a throwaway PostgreSQL cluster in $work/pg"
"$root/deploy/pg-local.sh" start "$work/pg" >/dev/null
pg_port=$(cat "$work/pg/port")
pg_pid=$(head -n 1 "$work/pg/data/postmaster.pid")
url_of() { "$root/deploy/pg-local.sh" url "$work/pg" "$1"; }
log "recycled WAL segments, as on a server that has been running (tests/load/warm-wal.sh)"
"$load/warm-wal.sh" "$(url_of postgres)"
sql() { "$pgbin/psql" -X -q -tA -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }

export ORDERHUB_SECRET_KEY=${ORDERHUB_SECRET_KEY:-$(openssl rand -hex 32)}
export ORDERHUB_LOG_FORMAT=json

# A fresh database with the hub's schema, branch DEMO-1 and one partner; sets $db_url, $webhook.
"$pgbin/createdb" -h 127.0.0.1 -p "$pg_port" -U orderhub orderhub_flood
db_url=$(url_of orderhub_flood)
ORDERHUB_DATABASE_URL=$db_url "$hub_bin" migrate >/dev/null
ORDERHUB_DATABASE_URL=$db_url "$hub_bin" branch create --id DEMO-1 --brand DEMO >/dev/null
partner=$(ORDERHUB_DATABASE_URL=$db_url ORDERHUB_PUBLIC_URL=http://127.0.0.1:1 \
  "$hub_bin" partner create --name "Bench Platform" --label bench --json)
webhook=/webhooks/$(python3 -c 'import json,sys; print(json.load(sys.stdin)["webhook_url"].rsplit("/webhooks/", 1)[1])' <<<"$partner")

pg_cpu() { python3 "$load/procstat.py" cpu "$pg_pid"; }
hub_cpu() { python3 "$load/procstat.py" cpu "$hub_pid"; }
sub() { python3 -c 'import sys; print(f"{float(sys.argv[1]) - float(sys.argv[2]):.2f}")' "$1" "$2"; }

# ---- the hub ----
# The real partner's rate limit is raised out of the way (as in ingest-bench.sh); unknown keys have no partner
# and so no per-partner limit: the flood runs at the process's own ceiling.
hub_flags=(--role api)
# The help is read whole first: `grep -q` stops reading at its match, and under pipefail the writer's SIGPIPE would
# read as "no such flag".
if grep -q -- '--rate-limit-per-second' <<<"$("$hub_bin" serve --help 2>&1)"; then
  hub_flags+=(--rate-limit-per-second 1000000 --rate-limit-burst 1000000)
fi
log "starting orderhub serve ${hub_flags[*]} ${BENCH_HUB_ARGS:-}"
# shellcheck disable=SC2086
ORDERHUB_DATABASE_URL=$db_url "$hub_bin" serve "${hub_flags[@]}" --listen 127.0.0.1:0 ${BENCH_HUB_ARGS:-} \
  2>"$work/hub.log" &
hub_pid=$!
pids+=("$hub_pid")
hub_port=
for _ in $(seq 300); do
  hub_port=$(sed -n 's/.*"msg":"listening".*"address":"127\.0\.0\.1:\([0-9]*\)".*/\1/p' "$work/hub.log" | head -n 1)
  [ -n "$hub_port" ] && break
  kill -0 "$hub_pid" 2>/dev/null || { cat "$work/hub.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$hub_port" ] || { echo "orderhub did not start" >&2; cat "$work/hub.log" >&2; exit 1; }
hub_threads=$(ls "/proc/$hub_pid/task" | wc -l)
base=http://127.0.0.1:$hub_port

# The hub's database pool jobs so far (all kinds summed), or "-" when /metrics does not say.
pool_jobs() {
  curl -fsS --max-time 5 "$base/metrics" 2>/dev/null |
    awk '/^orderhub_db_pool_jobs_total/ {s += $NF; n++} END {if (n) printf "%d\n", s; else print "-"}'
}
# PostgreSQL's scans of hub.partners so far (index and sequential): each partner lookup that reached it is one.
# Statistics reach pg_stat_user_tables when a backend goes idle, at most once a second: read after a pause.
partner_scans() {
  sleep 1.5
  sql "$db_url" "SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables
    WHERE schemaname = 'hub' AND relname = 'partners'"
}
delta() { if [ "$1" = - ] || [ "$2" = - ]; then echo -; else echo $(($1 - $2)); fi; }

# Warm-up: the real partner's key is cached and the connections are open, as in a running hub.
python3 "$load/send_orders.py" --url "$base$webhook" --count 200 --rate 200 --connections 8 --prefix WARM \
  >"$work/warm.json" || { cat "$work/warm.json" >&2; exit 1; }

rows=()
real_ok=0
run() {  # name flood(0|1)
  local name=$1 flood=$2 count=$((rate * secs))
  sql "$db_url" "CHECKPOINT" >/dev/null
  log "run $name: $rate real orders/s for ${secs} s$([ "$flood" = 1 ] && echo ", random-key flood on $flood_conns connections")"
  local h0 h1 pg0 pg1 j0 j1 s0 s1 flood_pid=
  j0=$(pool_jobs)
  s0=$(partner_scans)
  h0=$(hub_cpu)
  pg0=$(pg_cpu)
  if [ "$flood" = 1 ]; then
    python3 "$load/procstat.py" run "$work/$name-flood.cpu" -- wrk -t "$flood_threads" -c "$flood_conns" -d "${secs}s" \
      --timeout 10s -s "$load/flood.lua" "$base/" >"$work/$name-flood.out" 2>&1 &
    flood_pid=$!
    pids+=("$flood_pid")
    sleep 0.5  # the flood is at full speed before the first real order is due
  fi
  # Not fatal here: a real webhook that got anything but 200 is counted and shown in the table.
  python3 "$load/procstat.py" run "$work/$name.cpu" -- python3 "$load/send_orders.py" --url "$base$webhook" \
    --count "$count" --rate "$rate" --connections 16 --prefix "$name" >"$work/$name.json" || true
  if [ -n "$flood_pid" ]; then
    wait "$flood_pid" || { cat "$work/$name-flood.out" >&2; exit 1; }
  fi
  h1=$(hub_cpu)
  pg1=$(pg_cpu)
  j1=$(pool_jobs)
  s1=$(partner_scans)
  local r
  r=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(d["ok"], d["non200"] + d["errors"], d["rate"], d["p50_ms"], d["p99_ms"], d["max_ms"], d["sched_p50_ms"], d["sched_p99_ms"], d["max_late_ms"])' "$work/$name.json")
  local ok bad got p50 p99 max sp50 sp99 late
  read -r ok bad got p50 p99 max sp50 sp99 late <<<"$r"
  real_ok=$((real_ok + ok))
  local frate=- f404=- f503=- fother=- fp99=- ferr=- fcpu=-
  if [ "$flood" = 1 ]; then
    local result
    result=$(grep '^RESULT' "$work/$name-flood.out") || { cat "$work/$name-flood.out" >&2; exit 1; }
    val() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<" ${result#RESULT}"; }
    frate=$(python3 -c "print(f'{$(val answers) / ($(val duration_us) / 1e6):.0f}')")
    f404=$(val s404)
    f503=$(val s503)
    fother=$(($(val s429) + $(val other)))
    fp99=$(python3 -c "print(f'{$(val p99_us) / 1000:.2f}')")
    ferr=$(($(val connect) + $(val read) + $(val write) + $(val timeout)))
    fcpu=$(cat "$work/$name-flood.cpu")
  fi
  rows+=("$name|$got|$ok|$bad|$p50|$p99|$max|$sp50|$sp99|$frate|$f404|$f503|$fother|$ferr|$fp99|$(sub "$h1" "$h0")|$(sub "$pg1" "$pg0")|$(cat "$work/$name.cpu")|$fcpu|$(delta "$j1" "$j0")|$(delta "$s1" "$s0")")
  eval "jobs_$name=$(delta "$j1" "$j0"); scans_$name=$(delta "$s1" "$s0"); answers_$name=${frate}"
  eval "p99_$name=$p99; sp99_$name=$sp99; bad_$name=$bad; late_$name=$late"
}

run alone 0
run flood 1

stored=$(sql "$db_url" "SELECT count(*) FROM hub.orders WHERE external_id LIKE 'alone-%' OR external_id LIKE 'flood-%'")
hub_rss=$(python3 "$load/procstat.py" mem "$hub_pid")
kill "$hub_pid"
wait "$hub_pid" || true
elapsed=$(($(date +%s) - started_at))

# ---- the table ----
ratio=$(python3 -c "print(f'{$p99_flood / $p99_alone:.2f}')")
sratio=$(python3 -c "print(f'{$sp99_flood / $sp99_alone:.2f}')")
verdict() { if python3 -c "import sys; sys.exit(0 if $1 else 1)"; then echo met; else echo "NOT met"; fi; }

host=$(hostname -s)
day=$(date +%F)
out=$load/results/flood-$day-$host.md
mkdir -p "$load/results"
{
  echo "# Random-key flood benchmark, $day, $host"
  echo
  echo "$(date -u +%FT%TZ); $(nproc) cores ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)); load average before: $load_before;"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet -- . ':!tests/load/results' 2>/dev/null || echo ' + local changes'); $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2); PostgreSQL 15 (fsync and synchronous_commit on; tests/load/warm-wal.sh)."
  echo "orderhub serve ${hub_flags[*]} ${BENCH_HUB_ARGS:-}, $hub_threads threads, peak RSS $hub_rss MiB. Real webhooks: $rate orders/s on a fixed schedule"
  echo "(tests/load/send_orders.py, 16 connections) for ${secs} s per run; flood: wrk, $flood_threads thread(s), $flood_conns connections, a fresh random key per"
  echo "request (tests/load/flood.lua), as fast as answered. The whole benchmark took ${elapsed} s."
  echo
  echo "| run | real orders/s | real 200 | real other | real p50 ms | real p99 ms | real max ms | p50 from schedule ms | p99 from schedule ms | flood answers/s | flood 404 | flood 503 | flood other status | flood socket errors | flood p99 ms | hub CPU s | PG CPU s | real client CPU s | flood wrk CPU s | hub DB pool jobs | hub.partners scans |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
  echo
  echo "Real orders stored: $stored of $real_ok answered 200 ($([ "$stored" = "$real_ok" ] && echo exact || echo MISMATCH))."
  echo "The schedule ran late by at most $late_alone ms alone and $late_flood ms under the flood (the client shares the cores)."
  echo "Database work of the flood (same real load in both runs, so the difference is the flood's): $(delta "$jobs_flood" "$jobs_alone")"
  echo "more pool jobs and $(delta "$scans_flood" "$scans_alone") more scans of hub.partners, i.e. partner lookups that reached PostgreSQL"
  echo "(each stored order also scans hub.partners once, for its foreign key); the hub has no partner-cache metric."
  echo
  echo "| target | measured | |"
  echo "|---|---:|---|"
  echo "| real webhooks' p99 under the flood ≤ 2 × alone | $p99_flood / $p99_alone ms = $ratio × | $(verdict "$ratio <= 2") |"
  echo "| (the same, latency from each request's due time) | $sp99_flood / $sp99_alone ms = $sratio × | |"
  echo "| every real webhook answered 200 | $((bad_alone + bad_flood)) other | $(verdict "$((bad_alone + bad_flood)) == 0") |"
} >"$out"
cat "$out"
log "written to ${out#"$root"/}"

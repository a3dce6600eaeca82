#!/usr/bin/env bash
# Ingestion benchmark (issue 8), one run on this machine, in under 5 minutes:
#   1. pgbench, 64 clients: the hub's per-order inserts (tests/load/pgbench-order.sql) one order per transaction,
#      then 100 orders per transaction (the batched limit); 1 client, one order per transaction (latency); and,
#      for comparison, the same rows of 100 orders in five multi-row statements (tests/load/pgbench-order-set.sql);
#   2. `orderhub serve --role api` under wrk (tests/load/ingest.lua: the interface's example order_created with a
#      unique payload.id per request) at 1, 16, 64 and 256 connections;
#   3. for each: orders/s, p50, p99, non-200 answers, CPU seconds of the hub, of PostgreSQL (all its processes)
#      and of the load generator; peak RSS of the hub and of PostgreSQL; a reconciliation of the stored rows
#      against the 200 answers; the ratios hub/pgbench.
# Everything runs on loopback against a throwaway PostgreSQL 15 cluster (deploy/pg-local.sh, fsync and
# synchronous_commit as shipped: on) that is destroyed at the end, also on failure or Ctrl-C. Its WAL sizes are
# those recommended for a hub, and its WAL segments are written once before the runs (tests/load/warm-wal.sh),
# so that pgbench and the hub alike meet recycled segments, as on a server that has been running.
# The table is printed and written to tests/load/results/ingest-<date>-<host>.md.
#
# Environment: BENCH_SECONDS (default 20) seconds per 16/64/256-connection and 64-client run;
# BENCH_SHORT_SECONDS (default 5) for the 1-connection / 1-client latency runs; ORDERHUB_BUILD_DIR (default
# build) holds bin/orderhub (built as Release when missing); BENCH_HUB_ARGS extra `orderhub serve` flags.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

secs=${BENCH_SECONDS:-20}
short=${BENCH_SHORT_SECONDS:-5}
build=${ORDERHUB_BUILD_DIR:-build}
pgbin=/usr/lib/postgresql/15/bin
load=$root/tests/load

./deploy/install-deps.sh --bench
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target orderhub -j2 >/dev/null 2>&1 || cmake --build "$build" --target orderhub -j2 >/dev/null
hub_bin=$root/$build/bin/orderhub
[ -x "$hub_bin" ] || hub_bin=$build/bin/orderhub

work=$(mktemp -d /tmp/orderhub-ingest-bench.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do
    if kill -0 "$p" 2>/dev/null; then
      kill "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  "$root/deploy/pg-local.sh" destroy "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "[$(date +%T)] $*" >&2; }
started_at=$(date +%s)

# ---- PostgreSQL ----
log "starting a throwaway PostgreSQL cluster in $work/pg"
"$root/deploy/pg-local.sh" start "$work/pg" >/dev/null
pg_port=$(cat "$work/pg/port")
pg_pid=$(head -n 1 "$work/pg/data/postmaster.pid")
url_of() { "$root/deploy/pg-local.sh" url "$work/pg" "$1"; }
log "recycled WAL segments, as on a server that has been running (tests/load/warm-wal.sh)"
"$load/warm-wal.sh" "$(url_of postgres)"
sql() { "$pgbin/psql" -X -q -tA -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
pg_settings=$(sql "$(url_of postgres)" "SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) FROM pg_settings
  WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers', 'min_wal_size', 'max_wal_size', 'wal_sync_method')")

export ORDERHUB_SECRET_KEY=${ORDERHUB_SECRET_KEY:-$(openssl rand -hex 32)}
export ORDERHUB_LOG_FORMAT=json

# A fresh database with the hub's schema, branch DEMO-1 and one partner; sets $db_url, $partner_id, $webhook.
provision() {
  "$pgbin/createdb" -h 127.0.0.1 -p "$pg_port" -U orderhub "$1"
  db_url=$(url_of "$1")
  ORDERHUB_DATABASE_URL=$db_url "$hub_bin" migrate >/dev/null
  ORDERHUB_DATABASE_URL=$db_url "$hub_bin" branch create --id DEMO-1 --brand DEMO >/dev/null
  local p
  p=$(ORDERHUB_DATABASE_URL=$db_url ORDERHUB_PUBLIC_URL=http://127.0.0.1:1 \
    "$hub_bin" partner create --name "Bench Platform" --label bench --json)
  partner_id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <<<"$p")
  webhook=/webhooks/$(python3 -c 'import json,sys; print(json.load(sys.stdin)["webhook_url"].rsplit("/webhooks/", 1)[1])' <<<"$p")
}

pg_cpu() { python3 "$load/procstat.py" cpu "$pg_pid"; }
hub_cpu() { python3 "$load/procstat.py" cpu "$hub_pid"; }
sub() { python3 -c 'import sys; print(f"{float(sys.argv[1]) - float(sys.argv[2]):.2f}")' "$1" "$2"; }

# Peak memory of the process trees given, sampled while a stage runs: start_sampler NAME PID...; stop_sampler.
start_sampler() {
  sampler_out=$work/mem-$1
  shift
  python3 "$load/procstat.py" sample "$sampler_out" "$@" &
  sampler_pid=$!
  pids+=("$sampler_pid")
}
stop_sampler() {  # sets $mem to "rss_mib pss_mib"
  kill "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
  mem=$(cat "$sampler_out")
}

# Results, one row per run: name|orders/s|p50 ms|p99 ms|non-200|hub CPU s|PG CPU s|generator CPU s|note
rows=()

# ---- pgbench ----
# One order per transaction, and 100 per transaction; percentiles from pgbench's per-transaction log.
{ echo 'BEGIN;'; cat "$load/pgbench-order.sql"; echo 'COMMIT;'; } >"$work/tx1.sql"
{
  echo 'BEGIN;'
  for _ in $(seq 100); do grep -v '^--' "$load/pgbench-order.sql"; done
  echo 'COMMIT;'
} >"$work/tx100.sql"
cp "$load/pgbench-order-set.sql" "$work/set100.sql"

percentiles() {  # pgbench transaction logs -> "p50_ms p99_ms" of the per-transaction latency (µs, field 3)
  cat "$@" | awk '{print $3}' | sort -n | awk '{a[NR] = $1} END {
    if (NR == 0) { print "- -"; exit }
    i50 = int(NR * 0.50); if (i50 < 1) i50 = 1; i99 = int(NR * 0.99); if (i99 < 1) i99 = 1
    printf "%.2f %.2f\n", a[i50] / 1000, a[i99] / 1000 }'
}

run_pgbench() {  # name clients script orders-per-tx seconds
  local name=$1 clients=$2 script=$3 per_tx=$4 duration=$5 db
  db=pgb_$name
  provision "$db"
  sed "s/@PARTNER@/$partner_id/g" "$work/$script" >"$work/$name.sql"
  sql "$db_url" "CHECKPOINT" >/dev/null
  local threads=2
  [ "$clients" -ge 2 ] || threads=1
  log "pgbench $name: $clients clients, $per_tx order(s) per transaction, ${duration} s"
  local pg0 pg1
  pg0=$(pg_cpu)
  start_sampler "$name" "$pg_pid"
  python3 "$load/procstat.py" run "$work/$name.gencpu" -- "$pgbin/pgbench" -n -M prepared -c "$clients" \
    -j "$threads" -T "$duration" -D n=0 -f "$work/$name.sql" -l --log-prefix="$work/$name.log" \
    "$db_url" >"$work/$name.out" 2>&1 || { cat "$work/$name.out" >&2; exit 1; }
  local mem
  stop_sampler
  pg1=$(pg_cpu)
  local tps lat orders stored
  tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$work/$name.out")
  lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$work/$name.out")
  orders=$(python3 -c "print(f'{float(\"$tps\") * $per_tx:.0f}')")
  read -r p50 p99 < <(percentiles "$work/$name.log".*)
  stored=$(sql "$db_url" "SELECT count(*) FROM hub.orders")
  rows+=("$name|$orders|$p50|$p99|-|-|$(sub "$pg1" "$pg0")|$(cat "$work/$name.gencpu")|$clients clients, $per_tx/tx; tx latency avg $lat ms; $stored orders stored; PG peak RSS sum $(cut -d' ' -f1 <<<"$mem") MiB, PSS $(cut -d' ' -f2 <<<"$mem") MiB")
  eval "orders_$name=$orders; lat_$name=$lat; p50_$name=$p50"
  rm -f "$work/$name.log".*
  sql "$(url_of postgres)" "DROP DATABASE $db" >/dev/null
}

run_pgbench pgbench_1 64 tx1.sql 1 "$secs"
run_pgbench pgbench_100 64 tx100.sql 100 "$secs"
run_pgbench pgbench_1c1 1 tx1.sql 1 "$short"
# For comparison: the same rows of 100 orders in five multi-row statements (the set-based limit).
run_pgbench pgbench_set100 64 set100.sql 100 "$secs"

# ---- orderhub under wrk ----
provision orderhub_bench
hub_url=$db_url
# The benchmark measures capacity, not the per-partner rate limiter: it is raised out of the way.
hub_flags=(--role api)
# The help is read whole first: `grep -q` stops reading at its match, and under pipefail the writer's SIGPIPE would
# read as "no such flag".
if grep -q -- '--rate-limit-per-second' <<<"$("$hub_bin" serve --help 2>&1)"; then
  hub_flags+=(--rate-limit-per-second 1000000 --rate-limit-burst 1000000)
fi
log "starting orderhub serve ${hub_flags[*]} ${BENCH_HUB_ARGS:-}"
# shellcheck disable=SC2086
ORDERHUB_DATABASE_URL=$hub_url "$hub_bin" serve "${hub_flags[@]}" --listen 127.0.0.1:0 ${BENCH_HUB_ARGS:-} \
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

total_ok=0
recon_ok=yes
recon=()
run_wrk() {  # connections seconds
  local conns=$1 duration=$2 name=hub_$1 threads=2
  [ "$conns" -ge 2 ] || threads=1
  sql "$hub_url" "CHECKPOINT" >/dev/null
  log "wrk $name: $conns connections, ${duration} s"
  local h0 h1 pg0 pg1 mem
  h0=$(hub_cpu)
  pg0=$(pg_cpu)
  start_sampler "$name" "$pg_pid"
  # The script stops sending after $duration s; wrk runs 2 s longer so that every request sent is answered.
  BENCH_RUN=W$conns BENCH_SECONDS=$duration BENCH_BODY=$root/deploy/examples/order-created.json \
    python3 "$load/procstat.py" run "$work/$name.gencpu" -- wrk -t "$threads" -c "$conns" -d "$((duration + 2))s" \
    --timeout 10s --latency -s "$load/ingest.lua" "http://127.0.0.1:$hub_port$webhook" >"$work/$name.out" 2>&1 ||
    { cat "$work/$name.out" >&2; exit 1; }
  stop_sampler
  h1=$(hub_cpu)
  pg1=$(pg_cpu)
  local result ok non200 p50 p99 errs orders stored distinct inbox
  result=$(grep '^RESULT' "$work/$name.out") || { cat "$work/$name.out" >&2; exit 1; }
  val() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<" ${result#RESULT}"; }
  ok=$(val ok)
  non200=$(val non200)
  p50=$(python3 -c "print(f'{$(val p50_us) / 1000:.2f}')")
  p99=$(python3 -c "print(f'{$(val p99_us) / 1000:.2f}')")
  errs=$(($(val connect) + $(val read) + $(val write) + $(val timeout)))
  orders=$(python3 -c "print(f'{$ok / $duration:.0f}')")
  read -r stored distinct inbox < <(sql "$hub_url" "SELECT (SELECT count(*) FROM hub.orders WHERE external_id LIKE 'W$conns-%'),
    (SELECT count(DISTINCT external_id) FROM hub.orders WHERE external_id LIKE 'W$conns-%'),
    (SELECT count(*) FROM hub.inbox WHERE external_id LIKE 'W$conns-%')" | tr '|' ' ')
  total_ok=$((total_ok + ok))
  local verdict=exact
  if [ "$stored" != "$ok" ] || [ "$distinct" != "$stored" ] || [ "$errs" != 0 ]; then
    verdict=MISMATCH
    recon_ok=no
  fi
  recon+=("| $conns | $ok | $non200 | $errs | $stored | $distinct | $inbox | $verdict |")
  rows+=("$name|$orders|$p50|$p99|$non200|$(sub "$h1" "$h0")|$(sub "$pg1" "$pg0")|$(cat "$work/$name.gencpu")|$conns connections; socket errors $errs; hub peak RSS so far $(python3 "$load/procstat.py" mem "$hub_pid") MiB; PG peak RSS sum $(cut -d' ' -f1 <<<"$mem") MiB, PSS $(cut -d' ' -f2 <<<"$mem") MiB")
  eval "orders_$name=$orders; p50_$name=$p50; p99_$name=$p99; non200_$name=$non200; mean_$name=$(python3 -c "print(f'{$(val mean_us) / 1000:.2f}')")"
}

run_wrk 1 "$short"
run_wrk 16 "$secs"
run_wrk 64 "$secs"
hub_rss_64=$(python3 "$load/procstat.py" mem "$hub_pid")
run_wrk 256 "$secs"
hub_rss_256=$(python3 "$load/procstat.py" mem "$hub_pid")

read -r all_orders all_distinct < <(sql "$hub_url" "SELECT count(*), count(DISTINCT external_id) FROM hub.orders" | tr '|' ' ')
[ "$all_orders" = "$total_ok" ] && [ "$all_distinct" = "$all_orders" ] || recon_ok=no

kill "$hub_pid"
wait "$hub_pid" || true
elapsed=$(($(date +%s) - started_at))

# ---- the table ----
ratio() { python3 -c "print(f'{float(\"$1\") / float(\"$2\"):.2f}')"; }
r1=$(ratio "$orders_hub_64" "$orders_pgbench_1")
r100=$(ratio "$orders_hub_64" "$orders_pgbench_100")
rset=$(ratio "$orders_hub_64" "$orders_pgbench_set100")
# Typical latency, p50 against p50 (both from per-request records): on a shared machine the means carry the
# scheduler's tail; both means are shown too.
lat_gap=$(python3 -c "print(f'{$p50_hub_1 - $p50_pgbench_1c1:+.2f}')")
verdict() { if python3 -c "import sys; sys.exit(0 if $1 else 1)"; then echo met; else echo "NOT met"; fi; }

host=$(hostname -s)
day=$(date +%F)
out=$load/results/ingest-$day-$host.md
mkdir -p "$load/results"
{
  echo "# Ingestion benchmark, $day, $host"
  echo
  echo "$(date -u +%FT%TZ); $(nproc) cores ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)); load average before: $(cut -d' ' -f1-3 /proc/loadavg);"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet -- . ':!tests/load/results' 2>/dev/null || echo ' + local changes'); $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2);"
  echo "PostgreSQL 15 (fsync and synchronous_commit as shipped; WAL sizes and recycled segments from tests/load/warm-wal.sh): $pg_settings. orderhub serve ${hub_flags[*]} ${BENCH_HUB_ARGS:-}, $hub_threads threads."
  echo "${secs} s per run (1-connection/1-client runs ${short} s); the whole benchmark took ${elapsed} s."
  echo
  echo "| run | orders/s | p50 ms | p99 ms | non-200 | hub CPU s | PG CPU s | load gen CPU s | notes |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
  for r in "${rows[@]}"; do
    IFS='|' read -r n o a b c d e f g <<<"$r"
    echo "| $n | $o | $a | $b | $c | $d | $e | $f | $g |"
  done
  echo
  echo "Reconciliation (the 200 answers wrk received against the rows stored; inbox rows of the run):"
  echo
  echo "| connections | 200 answers | non-200 | socket errors | hub.orders rows | distinct external_id | inbox rows | |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---|"
  for r in "${recon[@]}"; do echo "$r"; done
  echo
  echo "All runs: $total_ok answers 200, $all_orders rows in hub.orders, $all_distinct distinct: $([ "$recon_ok" = yes ] && echo exact || echo MISMATCH)."
  echo
  echo "| target | measured | |"
  echo "|---|---:|---|"
  echo "| hub at 64 connections ≥ 2.5 × pgbench one order per transaction | $r1 × | $(verdict "$r1 >= 2.5") |"
  echo "| hub at 64 connections ≥ 0.5 × pgbench 100 orders per transaction | $r100 × | $(verdict "$r100 >= 0.5") |"
  echo "| (for comparison) hub at 64 connections / pgbench set-based, 100 orders per transaction | $rset × | |"
  echo "| p99 at 64 connections ≤ 25 ms | $p99_hub_64 ms | $(verdict "$p99_hub_64 <= 25") |"
  echo "| zero non-200 | $((non200_hub_1 + non200_hub_16 + non200_hub_64 + non200_hub_256)) | $(verdict "$((non200_hub_1 + non200_hub_16 + non200_hub_64 + non200_hub_256)) == 0") |"
  echo "| reconciliation exact | $recon_ok | $(verdict "'$recon_ok' == 'yes'") |"
  echo "| hub peak RSS ≤ 128 MB at 256 connections | $hub_rss_256 MiB (after 64: $hub_rss_64 MiB) | $(verdict "$hub_rss_256 * 1.048576 <= 128") |"
  echo "| latency at 1 connection within 2 ms of pgbench's single transaction (p50) | hub $p50_hub_1 ms vs pgbench $p50_pgbench_1c1 ms: $lat_gap ms (means: $mean_hub_1 vs $lat_pgbench_1c1 ms) | $(verdict "$lat_gap <= 2") |"
} >"$out"
cat "$out"
log "written to ${out#"$root"/}"

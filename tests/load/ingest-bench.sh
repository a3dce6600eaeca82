#!/usr/bin/env bash
# Ingestion benchmark (issues 8 and 23), one run on this machine, in under 10 minutes:
#   1. pgbench, 64 clients: the hub's per-order inserts (tests/load/pgbench-order.sql) one order per transaction,
#      then 100 orders per transaction (the batched limit); 1 client, one order per transaction (latency); and,
#      for comparison, the same rows of 100 orders in three multi-row statements (tests/load/pgbench-order-set.sql);
#   2. `orderhub serve --role api` under wrk (tests/load/ingest.lua: the interface's example order_created with a
#      unique payload.id per request) at 1, 16 and 256 connections;
#   3. side by side with the peer a user would pick instead (issue 23; $PEER_DIR/README.md): the Fastify peer
#      (installed with `npm ci` into a copy under the bench's temporary directory, its tables loaded from
#      $PEER_DIR/schema.sql into the hub's benchmark database, PEER_WORKERS=2 on a loopback port chosen at run
#      time), then at 64 connections, alternating, BENCH_ROUNDS times: the hub, the peer (the same wrk script and
#      body), pgbench with the peer's statement ($PEER_DIR/pgbench_order.sql); medians. If the peer cannot be
#      installed or started (no network), the table says so and the hub's runs go on;
#   4. for each: orders/s, p50, p99, non-200 answers, CPU seconds of the server (the hub; the peer's node primary
#      and workers), of PostgreSQL (all its processes) and of the load generator, and CPU per stored order; peak
#      RSS of the hub and of PostgreSQL; a reconciliation of the stored rows against the 200 answers (the peer's:
#      orders, items, status log and outbox rows); the ratios hub/pgbench and hub/peer.
# Everything runs on loopback against a throwaway PostgreSQL 15 cluster (deploy/pg-local.sh, fsync and
# synchronous_commit as shipped: on) that is destroyed at the end, also on failure or Ctrl-C. Its WAL sizes are
# those recommended for a hub, and its WAL segments are written once before the runs (tests/load/warm-wal.sh),
# so that pgbench and the hub alike meet recycled segments, as on a server that has been running.
# The table is printed and written to tests/load/results/ingest-<date>-<host>.md.
#
# Environment: BENCH_SECONDS (default 15) seconds per 16/64/256-connection and 64-client run;
# BENCH_SHORT_SECONDS (default 5) for the 1-connection / 1-client latency runs; BENCH_ROUNDS (default 3) rounds of
# hub, peer and pgbench at 64 connections; PEER_DIR (default ../shared/peers beside the repository); BENCH_PEER=0
# skips the peer; ORDERHUB_BUILD_DIR (default build) holds bin/orderhub (built as Release when missing);
# BENCH_HUB_ARGS extra `orderhub serve` flags; BENCH_RESULT the results file (default
# tests/load/results/ingest-<date>-<host>.md).
# Profiling (each slows what it watches, so read the figures of a run without them): BENCH_PG_STATS=1 loads
# pg_stat_statements and writes, statement by statement, where PostgreSQL spent the first 64-connection round of
# the hub and of the peer (calls, time, rows, shared buffers) into the results file; BENCH_PERF=FILE records
# `perf record -g` of the hub during its first 64-connection round into FILE (read it with `perf report -i FILE`;
# BENCH_PERF_CALLGRAPH=dwarf for complete call chains, which tests/load/hub-profile-groups.py groups);
# BENCH_PERF_PG=PREFIX records PostgreSQL's processes during the first round of the hub (PREFIX-hub) and of the
# peer (PREFIX-peer).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

secs=${BENCH_SECONDS:-15}
short=${BENCH_SHORT_SECONDS:-5}
build=${ORDERHUB_BUILD_DIR:-build}
rounds=${BENCH_ROUNDS:-3}
peer_dir=${PEER_DIR:-$root/../shared/peers}
# A clone without the peer beside it (PEER_DIR unset) still runs every run of the hub; the table says why not the peer.
peer_found=yes
if [ -f "$peer_dir/schema.sql" ] && [ -d "$peer_dir/fastify-peer" ]; then
  peer_dir=$(cd "$peer_dir" && pwd)
else
  peer_found=no
fi
pgbin=/usr/lib/postgresql/15/bin
load=$root/tests/load

./deploy/install-deps.sh --bench
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target orderhub -j2 >/dev/null 2>&1 || cmake --build "$build" --target orderhub -j2 >/dev/null
hub_bin=$root/$build/bin/orderhub
[ -x "$hub_bin" ] || hub_bin=$build/bin/orderhub

# shellcheck source=tests/load/bench-lib.sh
. "$root/tests/load/bench-lib.sh"
bench_work ingest-bench  # $work and $pids, both cleaned up on exit (and on Ctrl-C)

log() { echo "[$(date +%T)] $*" >&2; }
started_at=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- PostgreSQL ----
log "starting a throwaway PostgreSQL cluster in $work/pg"
"$root/deploy/pg-local.sh" start "$work/pg" >/dev/null
if [ "${BENCH_PG_STATS:-0}" = 1 ]; then
  # track = all: also the statements run inside trigger functions and the foreign-key checks.
  printf '%s\n' "shared_preload_libraries = 'pg_stat_statements'" "pg_stat_statements.track = all" \
    >>"$work/pg/data/postgresql.conf"
  "$root/deploy/pg-local.sh" restart "$work/pg" >/dev/null
fi
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
# For comparison: the same rows of 100 orders in three multi-row statements (the set-based limit).
run_pgbench pgbench_set100 64 set100.sql 100 "$secs"

# ---- orderhub under wrk ----
provision orderhub_bench
hub_url=$db_url
if [ "${BENCH_PG_STATS:-0}" = 1 ]; then sql "$hub_url" "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null; fi
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

# ---- the peer (issue 23): its tables in the same database, installed into $work, started beside the hub ----
# Its tables live in the public schema of the hub's benchmark database (the hub's are in schema hub).
peer_status="not run (BENCH_PEER=0)"
peer_pid=
if [ "$peer_found" = yes ]; then
  "$pgbin/psql" -X -q -v ON_ERROR_STOP=1 -d "$hub_url" -f "$peer_dir/schema.sql" >/dev/null
  "$pgbin/psql" -X -q -v ON_ERROR_STOP=1 -d "$hub_url" -f "$peer_dir/pgbench_setup.sql" >/dev/null
else
  peer_status="not run: no peer in $peer_dir (schema.sql and fastify-peer/ not found; set PEER_DIR)"
  log "THE PEER: $peer_status"
fi
if [ "$peer_found" = yes ] && [ "${BENCH_PEER:-1}" = 1 ]; then
  peer_status=
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    peer_status="not run: node/npm are not installed"
  else
    # A copy: npm ci writes node_modules, which must land neither in the repository nor in the shared directory.
    cp -r "$peer_dir/fastify-peer" "$work/peer"
    chmod -R u+w "$work/peer"
    rm -rf "$work/peer/node_modules"
    log "installing the peer: npm ci in $work/peer"
    if ! (cd "$work/peer" && timeout 300 npm ci --no-audit --no-fund >"$work/peer-npm.log" 2>&1); then
      peer_status="not run: \`npm ci\` of $peer_dir/fastify-peer failed (no network?): $(grep -m 1 -i 'err' "$work/peer-npm.log" || tail -n 1 "$work/peer-npm.log")"
    fi
  fi
  if [ -z "$peer_status" ]; then
    peer_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
    log "starting the peer: node server.js on 127.0.0.1:$peer_port, PEER_WORKERS=2"
    (cd "$work/peer" && exec env HOST=127.0.0.1 PORT="$peer_port" PEER_WORKERS=2 PGHOST=127.0.0.1 PGPORT="$pg_port" \
      PGUSER=orderhub PGDATABASE=orderhub_bench node server.js >"$work/peer.log" 2>&1) &
    peer_pid=$!
    pids+=("$peer_pid")
    for _ in $(seq 300); do
      grep -q 'listening on' "$work/peer.log" && break
      kill -0 "$peer_pid" 2>/dev/null || break
      sleep 0.1
    done
    if ! grep -q 'listening on' "$work/peer.log"; then
      peer_status="not run: the peer did not start: $(tail -n 3 "$work/peer.log" | tr '\n' ' ')"
      kill "$peer_pid" 2>/dev/null || true
      peer_pid=
    else
      peer_status="fastify-peer ($(node -p "const p=require('$work/peer/package.json').dependencies; 'fastify ' + p.fastify + ', pg ' + p.pg"), node $(node -v)), PEER_WORKERS=2, pool 16 per worker"
    fi
  fi
  [ -n "$peer_pid" ] || log "THE PEER: $peer_status"
fi

total_ok=0
hub_non200=0
recon_ok=yes
recon=()
peer_recon=()
# Server CPU (the hub, or the peer's primary and its workers: procstat.py sums a process tree).
server_cpu() { if [ "$1" = hub ]; then python3 "$load/procstat.py" cpu "$hub_pid"; else python3 "$load/procstat.py" cpu "$peer_pid"; fi; }
us_per() { python3 -c "import sys; n = float(sys.argv[2]); print(f'{float(sys.argv[1]) * 1e6 / n:.0f}' if n > 0 else '-')" "$1" "$2"; }
stats_url=$(url_of orderhub_bench)
pg_stats_reset() {
  if [ "${BENCH_PG_STATS:-0}" = 1 ]; then sql "$stats_url" "SELECT pg_stat_statements_reset(), pg_stat_reset()" >/dev/null; fi
}
pg_stats_dump() {  # TITLE: statement by statement, since the last reset, into $work/pgstats.md
  [ "${BENCH_PG_STATS:-0}" = 1 ] || return 0
  {
    echo
    echo "#### $1 (pg_stat_statements; per stored order: divide by $2)"
    echo
    echo "| calls | total ms | ms/call | rows | shared hit | shared read | dirtied | written | WAL bytes | statement |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    sql "$stats_url" "SELECT '| ' || calls || ' | ' || round(total_exec_time) || ' | ' ||
        round((total_exec_time / greatest(calls, 1))::numeric, 3) || ' | ' || rows || ' | ' || shared_blks_hit || ' | ' ||
        shared_blks_read || ' | ' || shared_blks_dirtied || ' | ' || shared_blks_written || ' | ' || wal_bytes || ' | \`' ||
        replace(left(regexp_replace(query, '\\s+', ' ', 'g'), 160), '|', '\\|') || '\` |'
      FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'orderhub_bench')
      ORDER BY total_exec_time DESC LIMIT 25"
    sleep 1  # the statistics collector's counters reach the views within about half a second
    echo
    echo "Rows written per table in the round, and the indexes each row updates (pg_stat_user_tables):"
    echo
    echo "| table | rows inserted | rows updated | rows deleted | indexes |"
    echo "|---|---:|---:|---:|---:|"
    sql "$stats_url" "SELECT '| ' || schemaname || '.' || relname || ' | ' || n_tup_ins || ' | ' || n_tup_upd || ' | ' ||
        n_tup_del || ' | ' || (SELECT count(*) FROM pg_index i WHERE i.indrelid = t.relid) || ' |'
      FROM pg_stat_user_tables t WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY n_tup_ins DESC"
  } >>"$work/pgstats.md"
}

# Before each measured run in the hub's database: the vacuum that the runs before it left to do, done now and charged
# to the run that left it. The hub's rows, the peer's and pgbench's share one database, and autovacuum would
# otherwise vacuum one side's rows inside the other side's window (after the peer's pgbench round, tens of µs per
# order of the hub's next round). bench_vacuum, its PostgreSQL CPU divided by the previous run's stored orders
# ($vacus_NAME, shown beside that run's CPU per order); then a checkpoint. Autovacuum that a run's own rows start
# inside its window stays in its CPU, as in production.
last_run=
last_stored=0
settle() {
  local pg0 pg1
  pg0=$(pg_cpu)
  bench_vacuum
  pg1=$(pg_cpu)
  if [ -n "$last_run" ]; then eval "vacus_$last_run=$(us_per "$(sub "$pg1" "$pg0")" "$last_stored")"; fi
  last_run=
  sql "$hub_url" "CHECKPOINT" >/dev/null
}

# TARGET (hub|peer) CONNECTIONS SECONDS [ROUND]: one wrk run against the hub or the peer.
run_wrk() {
  local target=$1 conns=$2 duration=$3 round=${4:-} threads=2 url prefix name
  [ "$conns" -ge 2 ] || threads=1
  if [ "$target" = hub ]; then
    name=hub_$conns${round:+_r$round}
    prefix=W$conns${round:+R$round}
    url=http://127.0.0.1:$hub_port$webhook
  else
    name=peer_$conns${round:+_r$round}
    prefix=P$conns${round:+R$round}
    url=http://127.0.0.1:$peer_port/webhooks/bench
  fi
  settle
  log "wrk $name: $conns connections, ${duration} s"
  [ "$round" != 1 ] || pg_stats_reset
  local perf_pid=
  if [ "$target" = hub ] && [ "$round" = 1 ] && [ -n "${BENCH_PERF:-}" ]; then
    # The Release build has no frame pointers: BENCH_PERF_CALLGRAPH=dwarf follows the chains through libc (larger files).
    perf record --call-graph "${BENCH_PERF_CALLGRAPH:-fp}" -F 499 -o "$BENCH_PERF" -p "$hub_pid" -- sleep "$duration" \
      >"$work/perf.log" 2>&1 &
    perf_pid=$!
    pids+=("$perf_pid")
  fi
  local perf_pg_pid=
  if [ "$round" = 1 ] && [ -n "${BENCH_PERF_PG:-}" ]; then
    # Every process of the cluster (the backends of the server's pool exist by now): $BENCH_PERF_PG-hub, -peer.
    perf record -g -F 499 -o "$BENCH_PERF_PG-$target" -p "$(python3 -c 'import sys
def kids(p):
    try:
        return [int(c) for c in open(f"/proc/{p}/task/{p}/children").read().split()]
    except OSError:
        return []
out, todo = [], [int(sys.argv[1])]
while todo:
    p = todo.pop()
    out.append(p)
    todo.extend(kids(p))
print(",".join(map(str, out)))' "$pg_pid")" -- sleep "$duration" >"$work/perf-pg.log" 2>&1 &
    perf_pg_pid=$!
    pids+=("$perf_pg_pid")
  fi
  local h0 h1 pg0 pg1 mem
  h0=$(server_cpu "$target")
  pg0=$(pg_cpu)
  start_sampler "$name" "$pg_pid"
  # The script stops sending after $duration s; wrk runs 2 s longer so that every request sent is answered.
  BENCH_RUN=$prefix BENCH_SECONDS=$duration BENCH_BODY=$root/deploy/examples/order-created.json \
    python3 "$load/procstat.py" run "$work/$name.gencpu" -- wrk -t "$threads" -c "$conns" -d "$((duration + 2))s" \
    --timeout 10s --latency -s "$load/ingest.lua" "$url" >"$work/$name.out" 2>&1 ||
    { cat "$work/$name.out" >&2; exit 1; }
  stop_sampler
  h1=$(server_cpu "$target")
  pg1=$(pg_cpu)
  if [ -n "$perf_pid" ]; then
    wait "$perf_pid" || log "perf record failed: $(tail -n 2 "$work/perf.log")"
  fi
  if [ -n "$perf_pg_pid" ]; then
    wait "$perf_pg_pid" || log "perf record of PostgreSQL failed: $(tail -n 2 "$work/perf-pg.log")"
  fi
  local result ok non200 p50 p99 errs orders stored distinct inbox items logs jobs scpu pcpu
  result=$(grep '^RESULT' "$work/$name.out") || { cat "$work/$name.out" >&2; exit 1; }
  val() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<" ${result#RESULT}"; }
  ok=$(val ok)
  non200=$(val non200)
  p50=$(python3 -c "print(f'{$(val p50_us) / 1000:.2f}')")
  p99=$(python3 -c "print(f'{$(val p99_us) / 1000:.2f}')")
  errs=$(($(val connect) + $(val read) + $(val write) + $(val timeout)))
  orders=$(python3 -c "print(f'{$ok / $duration:.0f}')")
  scpu=$(sub "$h1" "$h0")
  pcpu=$(sub "$pg1" "$pg0")
  local verdict=exact
  if [ "$target" = hub ]; then
    read -r stored distinct inbox < <(sql "$hub_url" "SELECT (SELECT count(*) FROM hub.orders WHERE external_id LIKE '$prefix-%'),
      (SELECT count(DISTINCT external_id) FROM hub.orders WHERE external_id LIKE '$prefix-%'),
      (SELECT count(*) FROM hub.inbox WHERE external_id LIKE '$prefix-%')" | tr '|' ' ')
    total_ok=$((total_ok + ok))
    hub_non200=$((hub_non200 + non200))
    if [ "$stored" != "$ok" ] || [ "$distinct" != "$stored" ] || [ "$errs" != 0 ]; then
      verdict=MISMATCH
      recon_ok=no
    fi
    recon+=("| $conns${round:+ (round $round)} | $ok | $non200 | $errs | $stored | $distinct | $inbox | $verdict |")
  else
    # The peer's rows: one order, two items (the example has two), one status-log row and one outbox row each.
    read -r stored distinct items logs jobs < <(sql "$hub_url" "WITH o AS (SELECT id, external_id FROM public.orders
        WHERE partner_id = 'bench' AND external_id LIKE '$prefix-%')
      SELECT (SELECT count(*) FROM o), (SELECT count(DISTINCT external_id) FROM o),
        (SELECT count(*) FROM public.order_items i JOIN o ON o.id = i.order_id),
        (SELECT count(*) FROM public.order_status_log l JOIN o ON o.id = l.order_id),
        (SELECT count(*) FROM public.pos_outbox b JOIN o ON o.id = b.order_id)" | tr '|' ' ')
    if [ "$stored" != "$ok" ] || [ "$distinct" != "$stored" ] || [ "$items" != $((2 * stored)) ] ||
      [ "$logs" != "$stored" ] || [ "$jobs" != "$stored" ] || [ "$errs" != 0 ]; then
      verdict=MISMATCH
      peer_recon_ok=no
    fi
    peer_recon+=("| $conns${round:+ (round $round)} | $ok | $non200 | $errs | $stored | $distinct | $items | $logs | $jobs | $verdict |")
  fi
  local who=hub
  [ "$target" = hub ] || who=peer
  rows+=("$name|$orders|$p50|$p99|$non200|$scpu|$pcpu|$(cat "$work/$name.gencpu")|$conns connections; socket errors $errs; per stored order: PostgreSQL $(us_per "$pcpu" "$ok") µs, $who $(us_per "$scpu" "$ok") µs$([ "$target" != hub ] || echo "; hub peak RSS so far $(python3 "$load/procstat.py" mem "$hub_pid") MiB"); PG peak RSS sum $(cut -d' ' -f1 <<<"$mem") MiB, PSS $(cut -d' ' -f2 <<<"$mem") MiB")
  eval "orders_$name=$orders; p50_$name=$p50; p99_$name=$p99; non200_$name=$non200; mean_$name=$(python3 -c "print(f'{$(val mean_us) / 1000:.2f}')")"
  eval "pgus_$name=$(us_per "$pcpu" "$ok"); srvus_$name=$(us_per "$scpu" "$ok")"
  last_run=$name
  last_stored=$stored
  [ "$round" != 1 ] || pg_stats_dump "${who} at $conns connections, round 1: $ok orders stored" "$ok"
}

# pgbench with the peer's own statement (one order per transaction), on the peer's tables: ROUND.
run_pgbench_peer() {
  local round=$1 name=pgbench_peer_r$1 pg0 pg1 tps stored
  settle
  log "pgbench $name: 64 clients, the peer's statement, ${secs} s"
  local before
  before=$(sql "$hub_url" "SELECT count(*) FROM public.orders WHERE partner_id = 'pgbench'")
  pg0=$(pg_cpu)
  python3 "$load/procstat.py" run "$work/$name.gencpu" -- "$pgbin/pgbench" -n -M prepared -c 64 -j 2 -T "$secs" \
    -f "$peer_dir/pgbench_order.sql" -l --log-prefix="$work/$name.log" "$hub_url" >"$work/$name.out" 2>&1 ||
    { cat "$work/$name.out" >&2; exit 1; }
  pg1=$(pg_cpu)
  tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$work/$name.out")
  read -r p50 p99 < <(percentiles "$work/$name.log".*)
  stored=$(($(sql "$hub_url" "SELECT count(*) FROM public.orders WHERE partner_id = 'pgbench'") - before))
  local pcpu
  pcpu=$(sub "$pg1" "$pg0")
  rows+=("$name|$(printf '%.0f' "$tps")|$p50|$p99|-|-|$pcpu|$(cat "$work/$name.gencpu")|64 clients, the peer's statement ($peer_dir/pgbench_order.sql), one order per transaction; $stored orders stored; PostgreSQL $(us_per "$pcpu" "$stored") µs per stored order")
  eval "orders_$name=$(printf '%.0f' "$tps"); p50_$name=$p50; p99_$name=$p99; pgus_$name=$(us_per "$pcpu" "$stored")"
  last_run=$name
  last_stored=$stored
  rm -f "$work/$name.log".*
}

run_wrk hub 1 "$short"
run_wrk hub 16 "$secs"
peer_recon_ok=yes
if [ -n "$peer_pid" ]; then
  # node compiles its hot paths on first use: a few seconds of the same load first, not counted (the hub is warm
  # from its 1- and 16-connection runs). Its rows (prefix PWARM) are left out of every count.
  log "warming the peer up: 64 connections, 5 s (not measured)"
  BENCH_RUN=PWARM BENCH_SECONDS=5 BENCH_BODY=$root/deploy/examples/order-created.json wrk -t 2 -c 64 -d 7s \
    --timeout 10s -s "$load/ingest.lua" "http://127.0.0.1:$peer_port/webhooks/bench" >"$work/peer-warm.out" 2>&1 || true
fi
for round in $(seq "$rounds"); do
  run_wrk hub 64 "$secs" "$round"
  [ -z "$peer_pid" ] || run_wrk peer 64 "$secs" "$round"
  [ "$peer_found" = no ] || run_pgbench_peer "$round"
done
hub_rss_64=$(python3 "$load/procstat.py" mem "$hub_pid")
run_wrk hub 256 "$secs"
hub_rss_256=$(python3 "$load/procstat.py" mem "$hub_pid")
settle  # the last run's vacuum

read -r all_orders all_distinct < <(sql "$hub_url" "SELECT count(*), count(DISTINCT external_id) FROM hub.orders" | tr '|' ' ')
[ "$all_orders" = "$total_ok" ] && [ "$all_distinct" = "$all_orders" ] || recon_ok=no

kill "$hub_pid"
wait "$hub_pid" || true
if [ -n "$peer_pid" ]; then
  kill "$peer_pid" 2>/dev/null || true
  wait "$peer_pid" 2>/dev/null || true
fi
elapsed=$(($(date +%s) - started_at))

# Medians over the rounds: median VAR_PREFIX NAME_PREFIX (e.g. median orders hub_64) -> the median of
# $orders_hub_64_r1.., or "-" when there is none.
median() {
  local vals=() r v
  for r in $(seq "$rounds"); do
    v=$(eval "echo \${$1_$2_r$r:-}")
    [ -z "$v" ] || [ "$v" = - ] || vals+=("$v")
  done
  [ ${#vals[@]} -gt 0 ] || { echo -; return; }
  python3 -c 'import statistics, sys; m = statistics.median(float(x) for x in sys.argv[1:]); print(f"{m:.2f}".rstrip("0").rstrip("."))' "${vals[@]}"
}
for m in orders p50 p99 non200 pgus srvus vacus; do
  for t in hub_64 peer_64 pgbench_peer; do eval "${m}_$t=$(median "$m" "$t")"; done
done

# ---- the table ----
ratio() { python3 -c "print(f'{float(\"$1\") / float(\"$2\"):.2f}')"; }
ratio_or_dash() { if [ "$1" = - ] || [ "$2" = - ]; then echo -; else ratio "$1" "$2"; fi; }
rpeer=$(ratio_or_dash "$orders_hub_64" "$orders_peer_64")
rpgpeer=$(ratio_or_dash "$orders_hub_64" "$orders_pgbench_peer")
r1=$(ratio "$orders_hub_64" "$orders_pgbench_1")
r100=$(ratio "$orders_hub_64" "$orders_pgbench_100")
rset=$(ratio "$orders_hub_64" "$orders_pgbench_set100")
# Typical latency, p50 against p50 (both from per-request records): on a shared machine the means carry the
# scheduler's tail; both means are shown too.
lat_gap=$(python3 -c "print(f'{$p50_hub_1 - $p50_pgbench_1c1:+.2f}')")
verdict() { if python3 -c "import sys; sys.exit(0 if $1 else 1)"; then echo met; else echo "NOT met"; fi; }

host=$(hostname -s)
day=$(date +%F)
out=${BENCH_RESULT:-$load/results/ingest-$day-$host.md}
mkdir -p "$(dirname "$out")"
{
  echo "# Ingestion benchmark, $day, $host"
  echo
  echo "$(date -u +%FT%TZ); $(nproc) cores ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)); load average before: $load_before, at the end: $(cut -d' ' -f1-3 /proc/loadavg);"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet -- . ':!tests/load/results' 2>/dev/null || echo ' + local changes'); $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2);"
  echo "PostgreSQL 15 (fsync and synchronous_commit as shipped; WAL sizes and recycled segments from tests/load/warm-wal.sh): $pg_settings. orderhub serve ${hub_flags[*]} ${BENCH_HUB_ARGS:-}, $hub_threads threads."
  echo "${secs} s per run (1-connection/1-client runs ${short} s); the whole benchmark took ${elapsed} s."
  echo
  echo "## Side by side at 64 connections: OrderHub and the peer (issue 23)"
  echo
  echo "Medians of $rounds rounds of ${secs} s, alternating hub, peer, pgbench within each round; the peer: $peer_status."
  echo "CPU per stored order: CPU seconds over the run (from /proc: PostgreSQL's processes; the hub's process; the peer's node primary and workers) divided by the orders stored in it. \"+ N vacuum\": PostgreSQL's CPU per order of the vacuum the run left to do, done before the next run (vacuumdb --all --analyze), so that no run's window holds another's."
  echo
  echo "| 64 connections | orders/s | p50 ms | p99 ms | non-200 | PostgreSQL CPU per order | server CPU per order | reconciliation |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|"
  echo "| OrderHub \`serve ${hub_flags[*]}\` | $orders_hub_64 | $p50_hub_64 | $p99_hub_64 | $non200_hub_64 | $pgus_hub_64 µs (+ $vacus_hub_64 vacuum) | $srvus_hub_64 µs | $([ "$recon_ok" = yes ] && echo exact || echo MISMATCH) |"
  if [ -n "$peer_pid" ]; then
    echo "| the peer: Fastify 5 + pg, one transaction per order | $orders_peer_64 | $p50_peer_64 | $p99_peer_64 | $non200_peer_64 | $pgus_peer_64 µs (+ $vacus_peer_64 vacuum) | $srvus_peer_64 µs | $([ "$peer_recon_ok" = yes ] && echo exact || echo MISMATCH) |"
  else
    echo "| the peer | $peer_status | | | | | | |"
  fi
  [ "$peer_found" = no ] || echo "| pgbench, the peer's statement, one order per transaction, 64 clients | $orders_pgbench_peer | $p50_pgbench_peer | $p99_pgbench_peer | - | $pgus_pgbench_peer µs (+ $vacus_pgbench_peer vacuum) | - | |"
  echo "| **ratio OrderHub / peer** | **$rpeer ×** | | | | | | |"
  echo "| ratio OrderHub / pgbench with the peer's statement | $rpgpeer × | | | | | | |"
  echo
  echo "## Every run"
  echo
  echo "| run | orders/s | p50 ms | p99 ms | non-200 | server CPU s |  PG CPU s | PG vacuum after, µs per order | load gen CPU s | notes |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  for r in "${rows[@]}"; do
    IFS='|' read -r n o a b c d e f g <<<"$r"
    echo "| $n | $o | $a | $b | $c | $d | $e | $(eval "echo \${vacus_$n:--}") | $f | $g |"
  done
  echo
  echo "Reconciliation (the 200 answers wrk received against the rows stored; inbox rows of the run):"
  echo
  echo "| connections | 200 answers | non-200 | socket errors | hub.orders rows | distinct external_id | inbox rows | |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---|"
  for r in "${recon[@]}"; do echo "$r"; done
  echo
  if [ ${#peer_recon[@]} -gt 0 ]; then
    echo "The peer's reconciliation (its rows of the run: orders, items, status-log and outbox rows; two items per order):"
    echo
    echo "| connections | 200 answers | non-200 | socket errors | orders | distinct external_id | items | status log | outbox | |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    for r in "${peer_recon[@]}"; do echo "$r"; done
    echo
  fi
  echo "All runs: $total_ok answers 200, $all_orders rows in hub.orders, $all_distinct distinct: $([ "$recon_ok" = yes ] && echo exact || echo MISMATCH)."
  echo
  echo "| target | measured | |"
  echo "|---|---:|---|"
  echo "| hub at 64 connections ≥ 2.5 × pgbench one order per transaction | $r1 × | $(verdict "$r1 >= 2.5") |"
  echo "| hub at 64 connections ≥ 0.5 × pgbench 100 orders per transaction | $r100 × | $(verdict "$r100 >= 0.5") |"
  echo "| (for comparison) hub at 64 connections / pgbench set-based, 100 orders per transaction | $rset × | |"
  echo "| p99 at 64 connections ≤ 25 ms (median of the rounds) | $p99_hub_64 ms | $(verdict "$p99_hub_64 <= 25") |"
  echo "| zero non-200 (every hub run) | $hub_non200 | $(verdict "$hub_non200 == 0") |"
  if [ "$rpeer" != - ]; then
    echo "| hub at 64 connections ≥ 2.5 × the peer (issue 23; moonshot 4 ×) | $rpeer × | $(verdict "$rpeer >= 2.5") |"
    echo "| PostgreSQL CPU per stored order ≤ 90 µs at 64 connections (issue 23) | $pgus_hub_64 µs (peer $pgus_peer_64 µs) | $(verdict "$pgus_hub_64 <= 90") |"
    echo "| orderhub CPU per stored order ≤ 25 µs at 64 connections (issue 23) | $srvus_hub_64 µs (peer $srvus_peer_64 µs) | $(verdict "$srvus_hub_64 <= 25") |"
  fi
  echo "| reconciliation exact | $recon_ok | $(verdict "'$recon_ok' == 'yes'") |"
  echo "| hub peak RSS ≤ 128 MB at 256 connections | $hub_rss_256 MiB (after 64: $hub_rss_64 MiB) | $(verdict "$hub_rss_256 * 1.048576 <= 128") |"
  echo "| latency at 1 connection within 2 ms of pgbench's single transaction (p50) | hub $p50_hub_1 ms vs pgbench $p50_pgbench_1c1 ms: $lat_gap ms (means: $mean_hub_1 vs $lat_pgbench_1c1 ms) | $(verdict "$lat_gap <= 2") |"
  if [ -f "$work/pgstats.md" ]; then
    echo
    echo "## Where PostgreSQL spent the first round (BENCH_PG_STATS=1: pg_stat_statements was loaded for this run)"
    cat "$work/pgstats.md"
  fi
} >"$out"
cat "$out"
log "written to ${out#"$root"/}"

#!/usr/bin/env bash
# A/B benchmark (issue 23): two builds of `orderhub serve --role api`, or one build on two schemas, run alternately
# at 64 connections against two databases of one throwaway PostgreSQL 15 cluster, so that both meet the same
# machine, round by round. This is how the cuts in docs/performance.md were measured: on these VMs the speed
# swings by ±15 % between rounds, so a change counts only when the pairs agree.
#
#   HUB_A=path/to/orderhub HUB_B=path/to/other/orderhub tests/load/ab-bench.sh
#   HUB_B_SQL="DROP INDEX hub.some_idx" tests/load/ab-bench.sh          # the same build, database b changed
#
# Each round: wrk (tests/load/ingest.lua, the interface's example order_created with a unique payload.id per
# request) for BENCH_SECONDS against a, then the same against b (b first in even rounds), each after a vacuum of
# what the runs before left (which autovacuum would otherwise do inside the next window) and a checkpoint. Per
# round and side: orders/s, p99, CPU per stored order of the hub and of PostgreSQL (from /proc over the round),
# stored orders against the 200 answers; then b / a per pair for the PostgreSQL and hub CPU per order, and their
# medians.
#
# Environment: HUB_A, HUB_B (default build/bin/orderhub for both); HUB_B_SQL, SQL run on database b after its
# migration; BENCH_SECONDS (default 10); BENCH_ROUNDS (default 5); BENCH_CONNECTIONS (default 64);
# BENCH_PG_STATS=1 loads pg_stat_statements (track = top, track_planning = on) and prints, per database, the
# execution and planning time, buffer hits and WAL of insert_orders per order (execution time includes waiting for
# the CPU). Results go to stdout; nothing is written to the repository.
set -euo pipefail
# Paths given are taken from where the script is called; the default from the repository.
hub_a=${HUB_A:+$(realpath -m "$HUB_A")}
hub_b=${HUB_B:+$(realpath -m "$HUB_B")}
cd "$(dirname "$0")/../.."
root=$PWD
load=$root/tests/load
pgbin=/usr/lib/postgresql/15/bin
secs=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-5}
conns=${BENCH_CONNECTIONS:-64}
threads=$((conns < 2 ? 1 : 2))  # wrk wants at least one connection per thread
declare -A bin url port hpid wh
# shellcheck source=tests/load/bench-lib.sh
. "$load/bench-lib.sh"
bench_ab_builds "$hub_a" "$hub_b"
bench_work ab-bench

"$root/deploy/pg-local.sh" start "$work/pg" >/dev/null
if [ "${BENCH_PG_STATS:-0}" = 1 ]; then
  printf '%s\n' "shared_preload_libraries = 'pg_stat_statements'" "pg_stat_statements.track = top" \
    "pg_stat_statements.track_planning = on" >>"$work/pg/data/postgresql.conf"
  "$root/deploy/pg-local.sh" restart "$work/pg" >/dev/null
fi
pg_pid=$(head -n 1 "$work/pg/data/postmaster.pid")
url_of() { "$root/deploy/pg-local.sh" url "$work/pg" "$1"; }
"$load/warm-wal.sh" "$(url_of postgres)" >/dev/null 2>&1
sql() { "$pgbin/psql" -X -q -tA -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
export ORDERHUB_SECRET_KEY=${ORDERHUB_SECRET_KEY:-$(openssl rand -hex 32)}
export ORDERHUB_LOG_FORMAT=json

for v in a b; do
  bench_provision "${bin[$v]}" "ab_$v"
  url[$v]=$bench_url
  wh[$v]=$bench_webhook
  if [ "$v" = b ] && [ -n "${HUB_B_SQL:-}" ]; then sql "${url[b]}" "$HUB_B_SQL"; fi
  if [ "${BENCH_PG_STATS:-0}" = 1 ]; then sql "${url[$v]}" "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"; fi
  bench_serve "${bin[$v]}" "${url[$v]}" "$work/hub-$v.log"
  hpid[$v]=$bench_pid
  port[$v]=$bench_port
done

cpu() { python3 "$load/procstat.py" cpu "$1"; }
echo "a: ${bin[a]}"
echo "b: ${bin[b]}${HUB_B_SQL:+ with: $HUB_B_SQL}"
echo "$conns connections, $rounds rounds of $secs s, alternating (commit $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| round | side | orders/s | p99 ms | hub µs/order | PostgreSQL µs/order | stored / 200s |"
echo "|---:|---|---:|---:|---:|---:|---|"
: >"$work/rows"
for r in $(seq "$rounds"); do
  # a then b in odd rounds, b then a in even ones: a side that always ran second would meet the tables, WAL and
  # checkpoints the first left behind in every pair.
  order="a b"
  [ $((r % 2)) = 0 ] && order="b a"
  for v in $order; do
    # The vacuum the last run left to do, done now, or one side's rows are charged to the other's CPU per order
    # (more in each round as the tables grow). Then a checkpoint.
    bench_vacuum
    sql "${url[$v]}" CHECKPOINT >/dev/null
    h0=$(cpu "${hpid[$v]}")
    g0=$(cpu "$pg_pid")
    BENCH_RUN=R$r$v BENCH_SECONDS=$secs BENCH_BODY=$root/deploy/examples/order-created.json \
      wrk -t "$threads" -c "$conns" -d "$((secs + 2))s" --timeout 10s --latency -s "$load/ingest.lua" \
      "http://127.0.0.1:${port[$v]}${wh[$v]}" >"$work/wrk.out" 2>&1 || { cat "$work/wrk.out" >&2; exit 1; }
    h1=$(cpu "${hpid[$v]}")
    g1=$(cpu "$pg_pid")
    result=$(grep '^RESULT' "$work/wrk.out" || true)
    [ -n "$result" ] || { cat "$work/wrk.out" >&2; exit 1; }
    ok=$(sed -n 's/.* ok=\([0-9]*\).*/\1/p' <<<" ${result#RESULT}")
    p99=$(sed -n 's/.* p99_us=\([0-9]*\).*/\1/p' <<<" ${result#RESULT}")
    stored=$(sql "${url[$v]}" "SELECT count(*) FROM hub.orders WHERE external_id LIKE 'R$r$v-%'")
    python3 - "$r" "$v" "$ok" "$p99" "$h0" "$h1" "$g0" "$g1" "$stored" "$secs" >>"$work/rows" <<'EOF'
import sys
r, v, ok, p99, h0, h1, g0, g1, stored, secs = sys.argv[1:]
ok = int(ok)
hub = (float(h1) - float(h0)) * 1e6 / max(ok, 1)
pg = (float(g1) - float(g0)) * 1e6 / max(ok, 1)
print(f"{r} {v} {ok / int(secs):.0f} {int(p99) / 1000:.1f} {hub:.0f} {pg:.0f} {stored} {ok}")
EOF
    tail -n 1 "$work/rows" | awk '{printf "| %s | %s | %s | %s | %s | %s | %s / %s |\n", $1, $2, $3, $4, $5, $6, $7, $8}'
  done
done
python3 - "$work/rows" <<'EOF'
import statistics
import sys
rows = {}
for line in open(sys.argv[1]):
    r, v, rate, p99, hub, pg, stored, ok = line.split()
    rows[(r, v)] = (float(rate), float(hub), float(pg), int(stored), int(ok))
pairs = sorted({r for r, _ in rows}, key=int)
pg = [rows[(r, "b")][2] / rows[(r, "a")][2] for r in pairs]
hub = [rows[(r, "b")][1] / rows[(r, "a")][1] for r in pairs]
rate = [rows[(r, "b")][0] / rows[(r, "a")][0] for r in pairs]
print()
print("b / a per pair, PostgreSQL CPU per order: " + ", ".join(f"{x:.2f}" for x in pg) +
      f" (median {statistics.median(pg):.3f})")
print("b / a per pair, hub CPU per order: " + ", ".join(f"{x:.2f}" for x in hub) +
      f" (median {statistics.median(hub):.3f})")
print("b / a per pair, orders/s: " + ", ".join(f"{x:.2f}" for x in rate) + f" (median {statistics.median(rate):.3f})")
bad = [k for k, x in rows.items() if x[3] != x[4]]
if bad:
    print("RECONCILIATION FAILED for " + ", ".join(f"round {r} {v}" for r, v in sorted(bad)))
    sys.exit(1)
EOF
if [ "${BENCH_PG_STATS:-0}" = 1 ]; then
  echo
  echo "insert_orders per database (per order: execution µs, planning µs; per call: orders; buffer hits and WAL bytes per order):"
  sql "${url[a]}" "SELECT d.datname || ': ' || round((s.total_exec_time * 1000 / s.rows)::numeric, 1) || ' µs exec, '
      || round((s.total_plan_time * 1000 / s.rows)::numeric, 2) || ' µs plan, ' || round(s.rows::numeric / s.calls, 1)
      || ' orders per call, ' || round(s.shared_blks_hit::numeric / s.rows, 1) || ' hits, '
      || round(s.wal_bytes / s.rows) || ' B WAL'
    FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
    WHERE (s.query LIKE '%to_recordset(\$1%' OR s.query LIKE '%FROM unnest(\$1::text[]%') AND s.rows > 0
    ORDER BY d.datname"
fi

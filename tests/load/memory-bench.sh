#!/usr/bin/env bash
# Memory benchmark (issue 23, target 4): `orderhub serve --role api` under wrk at 256 connections for 10 minutes
# (tests/load/ingest.lua: the interface's example order_created, a unique payload.id per request, the rate limit
# out of reach), its RSS, open descriptors and threads sampled every 10 s from /proc. It reports the peak RSS
# (target ≤ 128 MB) and whether memory grows: the median RSS of the last minute against that of the second minute
# (the first is warm-up: pools, caches and the allocator's arenas fill), and the least-squares slope from the
# second minute on. Growth is "none" when the last minute is within 5 % (and 2 MiB) of the second and the slope
# is under 1 MiB per 10 minutes; descriptors and threads must end where they were after the first minute. The slope
# needs the full length: over a 3-minute run the allocator's ±0.3 MiB alone reads as about 2 MiB per 10 minutes.
# Every answer must be 200 and the stored orders must match them exactly.
# Everything runs on loopback against a throwaway PostgreSQL 15 cluster (deploy/pg-local.sh), destroyed at the
# end, also on failure or Ctrl-C. The table is printed and written to tests/load/results/memory-<date>-<host>.md.
#
# Environment: BENCH_SECONDS (default 600), BENCH_CONNECTIONS (default 256), BENCH_SAMPLE_SECONDS (default 10);
# ORDERHUB_BUILD_DIR (default build) holds bin/orderhub (built as Release when missing); BENCH_HUB_ARGS extra
# `orderhub serve` flags; BENCH_RESULT the results file.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

secs=${BENCH_SECONDS:-600}
conns=${BENCH_CONNECTIONS:-256}
every=${BENCH_SAMPLE_SECONDS:-10}
build=${ORDERHUB_BUILD_DIR:-build}
pgbin=/usr/lib/postgresql/15/bin
load=$root/tests/load
if [ "$secs" -lt 180 ] || [ "$every" -lt 1 ] || [ "$every" -gt 30 ]; then
  echo "BENCH_SECONDS must be at least 180 (the second minute and the last one are compared) and" \
    "BENCH_SAMPLE_SECONDS between 1 and 30 (each minute needs samples)" >&2
  exit 2
fi

./deploy/install-deps.sh --bench
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target orderhub -j2 >/dev/null 2>&1 || cmake --build "$build" --target orderhub -j2 >/dev/null
hub_bin=$root/$build/bin/orderhub
[ -x "$hub_bin" ] || hub_bin=$build/bin/orderhub

# shellcheck source=tests/load/bench-lib.sh
. "$load/bench-lib.sh"
bench_work memory-bench
log() { echo "[$(date +%T)] $*" >&2; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

log "starting a throwaway PostgreSQL cluster in $work/pg"
"$root/deploy/pg-local.sh" start "$work/pg" >/dev/null
export ORDERHUB_SECRET_KEY=${ORDERHUB_SECRET_KEY:-$(openssl rand -hex 32)}
export ORDERHUB_LOG_FORMAT=json
bench_provision "$hub_bin" memory_bench
db_url=$bench_url
webhook=$bench_webhook
sql() { "$pgbin/psql" -X -q -tA -v ON_ERROR_STOP=1 -d "$db_url" -c "$1"; }

log "starting orderhub serve --role api (rate limit out of reach) ${BENCH_HUB_ARGS:-}"
# shellcheck disable=SC2086
bench_serve "$hub_bin" "$db_url" "$work/hub.log" ${BENCH_HUB_ARGS:-}
hub_pid=$bench_pid
hub_port=$bench_port

python3 "$load/procstat.py" series "$work/series" "$every" "$hub_pid" &
sampler_pid=$!
pids+=("$sampler_pid")
log "wrk: $conns connections for $secs s against the hub (pid $hub_pid), RSS every $every s"
BENCH_RUN=MEM BENCH_SECONDS=$secs BENCH_BODY=$root/deploy/examples/order-created.json \
  wrk -t 2 -c "$conns" -d "$((secs + 5))s" --timeout 10s --latency -s "$load/ingest.lua" \
  "http://127.0.0.1:$hub_port$webhook" >"$work/wrk.out" 2>&1 || { cat "$work/wrk.out" >&2; exit 1; }
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
kill -0 "$hub_pid" 2>/dev/null || { echo "orderhub exited during the run" >&2; tail -n 20 "$work/hub.log" >&2; exit 1; }
peak=$(python3 "$load/procstat.py" mem "$hub_pid")

result=$(grep '^RESULT' "$work/wrk.out" || true)
[ -n "$result" ] || { echo "wrk printed no RESULT line" >&2; cat "$work/wrk.out" >&2; exit 1; }
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<" ${result#RESULT}"; }
ok=$(field ok)
non200=$(field non200)
p99_us=$(field p99_us)
stored=$(sql "SELECT count(*) FROM hub.orders WHERE external_id LIKE 'MEM-%'")
errors=$(grep -m 1 '^  Socket errors' "$work/wrk.out" || echo "none")

out=${BENCH_RESULT:-$root/tests/load/results/memory-$(date +%F)-$(hostname -s).md}
mkdir -p "$(dirname "$out")"
status=0
python3 - "$work/series" "$secs" "$peak" "$ok" "$non200" "$stored" "$p99_us" "$conns" "$every" \
  "$load_before" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(git rev-parse --short HEAD)" "$errors" >"$out" <<'EOF' || status=$?
import statistics
import sys

(path, secs, peak, ok, non200, stored, p99_us, conns, every, load_before, load_after, commit,
 errors) = sys.argv[1:]
secs, peak, ok, non200, stored = int(secs), float(peak), int(ok), int(non200 or 0), int(stored)
rows = [tuple(float(x) for x in line.split()) for line in open(path) if line.strip()]
window = [r for r in rows if r[0] <= secs]


def within(lo, hi):
    return [r for r in window if lo <= r[0] < hi]


second = within(60, 120)
last = within(secs - 60, secs + 1)
mib = lambda kib: kib / 1024
rss2 = mib(statistics.median(r[1] for r in second))
rss_last = mib(statistics.median(r[1] for r in last))
after = [r for r in window if r[0] >= 60]
ts = [r[0] for r in after]
ys = [mib(r[1]) for r in after]
mt, my = statistics.fmean(ts), statistics.fmean(ys)
slope = sum((t - mt) * (y - my) for t, y in zip(ts, ys)) / sum((t - mt) ** 2 for t in ts)  # MiB per second
per10 = slope * 600
fds2, fds_last = max(r[2] for r in second), max(r[2] for r in last)
th2, th_last = max(r[3] for r in second), max(r[3] for r in last)
growth = rss_last - rss2
flat = growth <= max(2.0, 0.05 * rss2) and per10 < 1.0
fds_flat = fds_last <= fds2 and th_last <= th2
cpu = window[-1][4] - window[0][4]
verdict = lambda good: "met" if good else "**not met**"

print(f"# Memory over a {secs // 60}-minute run ({commit})\n")
print(f"`tests/load/memory-bench.sh`: `orderhub serve --role api` (rate limit out of reach) under wrk, {conns} "
      f"connections for {secs} s, the example order_created with a unique payload.id per request; RSS, open "
      f"descriptors and threads of the hub from /proc every {every} s. Load average before {load_before}, "
      f"after {load_after}.\n")
print("| target | measured | |")
print("|---|---|---|")
print(f"| hub peak RSS ≤ 128 MB at {conns} connections | {peak:.1f} MiB (VmHWM) | {verdict(peak * 1.048576 <= 128)} |")
print(f"| no growth over the run | median RSS {rss2:.1f} MiB in minute 2, {rss_last:.1f} MiB in the last minute "
      f"({growth:+.1f} MiB); slope from minute 2 on {per10:+.2f} MiB per 10 minutes | {verdict(flat)} |")
print(f"| descriptors and threads flat | descriptors {fds2:.0f} → {fds_last:.0f}, threads {th2:.0f} → "
      f"{th_last:.0f} (largest in minute 2 → in the last minute) | {verdict(fds_flat)} |")
print(f"| every answer 200, exact reconciliation | {ok} answered 200 ({ok / secs:.0f} orders/s), {non200} other, "
      f"{stored} stored; p99 {float(p99_us or 0) / 1000:.1f} ms; wrk socket errors: {errors.strip()} | "
      f"{verdict(non200 == 0 and stored == ok)} |")
print(f"\nThe hub used {cpu:.0f} s of CPU ({cpu * 1e6 / max(ok, 1):.0f} µs per stored order; wrk and PostgreSQL share "
      "the same two cores, so read rates from tests/load/ingest-bench.sh).\n")
print("| minute | RSS MiB (median) | RSS MiB (max) | descriptors (max) | threads (max) |")
print("|---:|---:|---:|---:|---:|")
for m in range(secs // 60):
    part = within(60 * m, 60 * (m + 1))
    if part:
        print(f"| {m + 1} | {mib(statistics.median(r[1] for r in part)):.1f} | {mib(max(r[1] for r in part)):.1f} "
              f"| {max(r[2] for r in part):.0f} | {max(r[3] for r in part):.0f} |")
if not (flat and fds_flat and non200 == 0 and stored == ok):
    sys.exit(1)
EOF
cat "$out"
log "written to $out"
exit "$status"

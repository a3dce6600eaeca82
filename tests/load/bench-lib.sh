# shellcheck shell=bash disable=SC2034,SC2154  # sets variables for the script that sources it, reads its $root
# Shared by the benchmarks of tests/load (sourced; needs $root set to the repository):
# a temporary directory with the processes to stop by PID and a throwaway PostgreSQL cluster, both removed on
# exit; a hub database provisioned as the benchmarks need it; the cluster vacuumed between runs; an `orderhub serve`
# started and its port read.

# bench_work NAME: makes $work (/tmp/orderhub-NAME.XXXXXX) and $pids; on exit, stops every PID in $pids,
# destroys the cluster in $work/pg and removes $work.
bench_work() {
  work=$(mktemp -d "/tmp/orderhub-$1.XXXXXX")
  pids=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

bench_cleanup() {
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

# bench_ab_builds A B: the two orderhub builds of an A/B benchmark into bin[a] and bin[b] (an associative array the
# caller declared): A and B as given (absolute paths), each by default the repository's build/bin/orderhub; exits
# when one is not there.
bench_ab_builds() {
  bin[a]=${1:-$root/build/bin/orderhub}
  bin[b]=${2:-$root/build/bin/orderhub}
  local v
  for v in a b; do
    [ -x "${bin[$v]}" ] || { echo "no orderhub at ${bin[$v]} (build it, or set HUB_A / HUB_B)" >&2; exit 2; }
  done
}

# bench_provision HUB_BIN DB: creates database DB on the cluster in $work/pg, migrates it, adds branch DEMO-1 of
# brand DEMO and one partner; sets $bench_url (the database) and $bench_webhook (the partner's webhook path).
bench_provision() {
  "/usr/lib/postgresql/15/bin/createdb" -h 127.0.0.1 -p "$(cat "$work/pg/port")" -U orderhub "$2"
  bench_url=$("$root/deploy/pg-local.sh" url "$work/pg" "$2")
  ORDERHUB_DATABASE_URL=$bench_url "$1" migrate >/dev/null
  ORDERHUB_DATABASE_URL=$bench_url "$1" branch create --id DEMO-1 --brand DEMO >/dev/null
  local partner
  partner=$(ORDERHUB_DATABASE_URL=$bench_url ORDERHUB_PUBLIC_URL=http://127.0.0.1:1 \
    "$1" partner create --name "Bench Platform" --label bench --json)
  bench_webhook=/webhooks/$(python3 -c 'import json,sys; print(json.load(sys.stdin)["webhook_url"].rsplit("/webhooks/", 1)[1])' <<<"$partner")
}

# bench_vacuum: vacuums and analyzes every database of the cluster in $work/pg (vacuumdb --all --analyze; a running
# autovacuum yields to it): before a measured run, the work the runs before it left, which autovacuum would otherwise
# do inside the run's window.
bench_vacuum() {
  "/usr/lib/postgresql/15/bin/vacuumdb" -h 127.0.0.1 -p "$(cat "$work/pg/port")" -U orderhub --all --analyze --quiet
}

# bench_serve HUB_BIN URL LOG [FLAG...]: starts `orderhub serve --role api` with the rate limit out of reach on a
# loopback port of its choosing, logging to LOG; sets $bench_pid (added to $pids) and $bench_port, or exits.
bench_serve() {
  local hub_bin=$1 url=$2 log=$3
  shift 3
  ORDERHUB_DATABASE_URL=$url "$hub_bin" serve --role api --rate-limit-per-second 1000000 --rate-limit-burst 1000000 \
    --listen 127.0.0.1:0 "$@" 2>"$log" &
  bench_pid=$!
  pids+=("$bench_pid")
  bench_port=
  for _ in $(seq 300); do
    bench_port=$(sed -n 's/.*"msg":"listening".*"address":"127\.0\.0\.1:\([0-9]*\)".*/\1/p' "$log" | head -n 1)
    [ -n "$bench_port" ] && return 0
    kill -0 "$bench_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
  done
  echo "orderhub did not start" >&2
  cat "$log" >&2
  exit 1
}

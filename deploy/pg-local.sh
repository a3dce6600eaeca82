#!/usr/bin/env bash
# An embedded PostgreSQL 15 cluster in a folder: no system service, loopback and a Unix socket only.
#   deploy/pg-local.sh start DIR     initdb if needed, start on a free port, create databases orderhub and orderpos
#   deploy/pg-local.sh stop DIR      fast shutdown (no-op when not running)
#   deploy/pg-local.sh restart DIR   fast restart on the same port
#   deploy/pg-local.sh url DIR [DB]  the libpq URI of database DB (default orderhub)
#   deploy/pg-local.sh status DIR    exit 0 when running
#   deploy/pg-local.sh destroy DIR   stop and remove the cluster's files (throwaway clusters of the tests)
# Authentication is `trust` for loopback and the socket: this cluster is for a developer's machine and for tests,
# never for production. As root, the server runs as the `postgres` user (PostgreSQL refuses to run as root).
set -euo pipefail

usage() { echo "usage: $0 start|stop|restart|status|destroy|url DIR [DB]" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1
dir=$2
db=${3:-orderhub}

pgbin=/usr/lib/postgresql/15/bin
[ -x "$pgbin/pg_ctl" ] || { echo "PostgreSQL 15 is not installed: apt-get install postgresql-15 (or run deploy/install-deps.sh)" >&2; exit 1; }

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# Who runs the server: the caller, or `postgres` when the caller is root.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The data folder. As root, a folder that `postgres` cannot reach (a checkout under /root) is replaced by one
# under /var/tmp, named after DIR, and linked from DIR.
data_dir() {
  if [ -L "$dir/data" ]; then
    readlink "$dir/data"
    return
  fi
  if [ -e "$dir/data" ]; then
    echo "$dir/data"
    return
  fi
  if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$dir"; then
    local alt
    alt=/var/tmp/orderhub-pg-$(echo -n "$dir" | sha256sum | cut -c1-16)
    mkdir -p "$alt"
    chown postgres "$alt"
    ln -s "$alt/data" "$dir/data"
    echo "$alt/data"
    return
  fi
  echo "$dir/data"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

port_free() {
  # SO_REUSEADDR as PostgreSQL itself uses: connections in TIME_WAIT from a stopped server do not block the port.
  python3 -c 'import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1",int(sys.argv[1]))); s.close()' "$1" 2>/dev/null
}

data=$(data_dir)
sock=$(dirname "$data")/socket

running() { [ -f "$data/PG_VERSION" ] && as_owner "$pgbin/pg_ctl" -D "$data" status >/dev/null 2>&1; }

url() { echo "postgresql://orderhub@127.0.0.1:$(cat "$dir/port")/$1"; }

start() {
  if [ ! -f "$data/PG_VERSION" ]; then
    mkdir -p "$data"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres "$data"; fi
    as_owner "$pgbin/initdb" -D "$data" -U orderhub --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
      { echo "initdb failed; see $dir/initdb.log" >&2; exit 1; }
  fi
  mkdir -p "$sock"
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$sock"; fi
  if running; then
    url "$db"
    return
  fi
  local port
  port=$(cat "$dir/port" 2>/dev/null || true)
  if [ -z "$port" ] || ! port_free "$port"; then port=$(free_port); fi
  echo "$port" >"$dir/port"
  local log
  log=$(dirname "$data")/postgresql.log
  touch "$log"
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$log"; fi
  as_owner "$pgbin/pg_ctl" -D "$data" -l "$log" -w -t 60 \
    -o "-p $port -k $sock -c listen_addresses=127.0.0.1 -c max_connections=200 -c unix_socket_permissions=0700" \
    start >/dev/null || { echo "PostgreSQL did not start; see $log" >&2; tail -n 20 "$log" >&2; exit 1; }
  for name in orderhub orderpos; do
    "$pgbin/psql" -X -q -h 127.0.0.1 -p "$port" -U orderhub -d postgres -v ON_ERROR_STOP=1 -tA \
      -c "SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1 ||
      "$pgbin/createdb" -h 127.0.0.1 -p "$port" -U orderhub "$name"
  done
  url "$db"
}

case "$cmd" in
  start) start ;;
  stop) if running; then as_owner "$pgbin/pg_ctl" -D "$data" -m fast -w stop >/dev/null; fi ;;
  restart)
    running || { echo "not running" >&2; exit 1; }
    # -l as at start: without it the restarted server writes its log to pg_ctl's discarded output.
    as_owner "$pgbin/pg_ctl" -D "$data" -l "$(dirname "$data")/postgresql.log" -m fast -w -t 60 restart >/dev/null ;;
  status) running ;;
  destroy)
    if running; then as_owner "$pgbin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null || true; fi
    case "$data" in /var/tmp/orderhub-pg-*) rm -rf "$(dirname "$data")" ;; esac
    rm -rf "$dir" ;;
  url) [ -f "$dir/port" ] || { echo "no cluster in $dir: run '$0 start $dir' first" >&2; exit 1; }; url "$db" ;;
  *) usage ;;
esac

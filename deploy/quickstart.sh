#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a running hub and reference POS:
# installs what is missing, builds, starts an embedded PostgreSQL under ./.orderhub/, migrates, provisions a demo
# setup, starts orderpos and orderhub, and prints where they listen. Ctrl-C stops all of it.
# Listen addresses: ORDERHUB_LISTEN (default 127.0.0.1:8080), ORDERPOS_LISTEN (default 127.0.0.1:9090).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
state=$root/.orderhub
mkdir -p "$state"

./deploy/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DORDERHUB_TESTS=OFF >/dev/null
cmake --build build -j"${ORDERHUB_BUILD_JOBS:-2}" --target orderhub orderpos

# Leftovers of a run that crashed or was killed: stop them by their recorded PIDs.
for f in "$state"/*.pid; do
  [ -e "$f" ] || continue
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; sleep 1; kill -KILL "$pid" 2>/dev/null || true; fi
  rm -f "$f"
done

export ORDERHUB_DATABASE_URL
export ORDERPOS_DATABASE_URL
ORDERHUB_DATABASE_URL=$(./deploy/pg-local.sh start "$state/pg" orderhub)
ORDERPOS_DATABASE_URL=$(./deploy/pg-local.sh url "$state/pg" orderpos)
export ORDERHUB_LISTEN=${ORDERHUB_LISTEN:-127.0.0.1:8080}
export ORDERPOS_LISTEN=${ORDERPOS_LISTEN:-127.0.0.1:9090}
export ORDERHUB_PUBLIC_URL=${ORDERHUB_PUBLIC_URL:-http://$ORDERHUB_LISTEN}
# The key that seals stored secrets: made once, kept (mode 600) with the cluster it belongs to.
if [ -z "${ORDERHUB_SECRET_KEY:-}" ]; then
  if [ ! -s "$state/secret-key" ]; then (umask 077 && openssl rand -hex 32 >"$state/secret-key"); fi
  ORDERHUB_SECRET_KEY=$(cat "$state/secret-key")
fi
export ORDERHUB_SECRET_KEY

stop_all() {
  trap - INT TERM EXIT
  for name in orderhub orderpos; do
    f=$state/$name.pid
    [ -e "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null || true
  done
  for name in orderhub orderpos; do
    f=$state/$name.pid
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$f"
  done
  ./deploy/pg-local.sh stop "$state/pg" || true
  echo "stopped"
}
trap stop_all INT TERM EXIT

build/bin/orderhub migrate
build/bin/orderpos migrate
# `serve` runs with a login that owns nothing (the cluster's superuser `orderhub` only migrates and provisions):
# orderhub_serve, a member of the hub's serving role orderhub_app (docs/security.md).
/usr/lib/postgresql/15/bin/psql -X -q -v ON_ERROR_STOP=1 -d "$ORDERHUB_DATABASE_URL" <<'SQL'
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'orderhub_serve') THEN CREATE ROLE orderhub_serve LOGIN; END IF;
END $$;
GRANT orderhub_app TO orderhub_serve;
SQL
serve_url=${ORDERHUB_DATABASE_URL/orderhub@/orderhub_serve@}
if [ -x deploy/demo-provision.sh ]; then ./deploy/demo-provision.sh "$state"; fi

build/bin/orderpos serve >"$state/orderpos.log" 2>&1 &
echo $! >"$state/orderpos.pid"
ORDERHUB_DATABASE_URL=$serve_url build/bin/orderhub serve >"$state/orderhub.log" 2>&1 &
echo $! >"$state/orderhub.pid"

wait_ready() {
  for _ in $(seq 1 100); do
    if python3 - "$1" <<'PY' 2>/dev/null; then return 0; fi
import sys, urllib.request
urllib.request.urlopen(f"http://{sys.argv[1]}/readyz", timeout=1)
PY
    sleep 0.1
  done
  echo "$2 did not become ready; see $state/$2.log" >&2
  tail -n 20 "$state/$2.log" >&2
  exit 1
}
wait_ready "$ORDERPOS_LISTEN" orderpos
wait_ready "$ORDERHUB_LISTEN" orderhub

cat <<EOT

OrderHub is running (logs in $state/).
  hub:            http://$ORDERHUB_LISTEN   (health: /healthz, readiness: /readyz)
  reference POS:  http://$ORDERPOS_LISTEN
  database:       $ORDERHUB_DATABASE_URL
EOT
if [ -f "$state/demo.txt" ]; then cat "$state/demo.txt"; fi
echo
echo "Press Ctrl-C to stop everything."
wait

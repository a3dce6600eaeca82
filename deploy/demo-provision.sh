#!/usr/bin/env bash
# Provisions the quickstart's demo: the reference POS gets the demo menu (brand DEMO, branch DEMO-1) and a user;
# the hub gets branch DEMO-1, the POS connection of brand DEMO (the user's credentials: the forwarder logs in by
# itself) and a demo partner (label `demo`). Safe to run again: what exists is kept, and the partner gets a fresh
# webhook URL (URLs are shown once, never stored); the dashboard gets a demo user (demo@orderhub.local, branch
# DEMO-1) whose password, like the POS user's, lives only in STATE_DIR (dashboard-password, mode 600). Writes the URL,
# a ready-to-paste curl command and the board's address and login to STATE_DIR/demo.txt (never a password). Needs
# ORDERHUB_DATABASE_URL, ORDERPOS_DATABASE_URL, ORDERPOS_LISTEN, ORDERHUB_SECRET_KEY; ORDERHUB_PUBLIC_URL (default
# http://ORDERHUB_LISTEN) is the board's address; ORDERHUB_BIN and ORDERPOS_BIN default to build/bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
state=${1:?usage: deploy/demo-provision.sh STATE_DIR}
hub=${ORDERHUB_BIN:-build/bin/orderhub}
pos=${ORDERPOS_BIN:-build/bin/orderpos}

json_field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

# The POS side: menu (idempotent) and one user whose password lives only in the state folder.
$pos menu load deploy/demo-menu.json >/dev/null
if [ ! -s "$state/pos-password" ]; then
  (umask 077 && python3 -c 'import secrets; print(secrets.token_urlsafe(24))' >"$state/pos-password")
  $pos user add --email demo@orderhub.local --password - --brand DEMO <"$state/pos-password" >/dev/null
fi

if ! $hub branch list --json | python3 -c 'import json,sys; sys.exit(0 if any(b["id"]=="DEMO-1" for b in json.load(sys.stdin)) else 1)'; then
  $hub branch create --id DEMO-1 --brand DEMO --name "Demo Branch" >/dev/null
fi

# The demo POS runs on this machine: a wildcard listen address is reached over loopback (http:// is taken only to
# this machine: `pos set` refuses plain HTTP to another host).
pos_addr=${ORDERPOS_LISTEN/#0.0.0.0:/127.0.0.1:}
$hub pos set --brand DEMO --base-url "http://$pos_addr" --email demo@orderhub.local --password - \
  <"$state/pos-password" >/dev/null

# The board: one demo user whose password lives only in the state folder (as the POS user's).
board_email=demo@orderhub.local
if [ ! -s "$state/dashboard-password" ]; then
  (umask 077 && python3 -c 'import secrets; print(secrets.token_urlsafe(18))' >"$state/dashboard-password")
fi
if ! $hub user list --json | python3 -c 'import json,sys; sys.exit(0 if any(u["email"]==sys.argv[1] for u in json.load(sys.stdin)) else 1)' "$board_email"; then
  $hub user add --email "$board_email" --brand DEMO --branch DEMO-1 <"$state/dashboard-password" >/dev/null
fi
board_url=${ORDERHUB_PUBLIC_URL:-http://${ORDERHUB_LISTEN:-127.0.0.1:8080}}
board_url=${board_url%/}/dashboard/

partner_id=$($hub partner list --json | python3 -c 'import json,sys; print(next((p["id"] for p in json.load(sys.stdin) if p["label"]=="demo"), ""))')
if [ -n "$partner_id" ]; then
  url=$($hub partner rotate "$partner_id" --json | json_field webhook_url)
else
  url=$($hub partner create --name "Demo Platform" --label demo --json | json_field webhook_url)
fi

cat >"$state/demo.txt" <<EOT

Demo partner webhook URL (shown once; a new one is issued at every quickstart):
  $url

Send the interface's example order_created:
  curl -sS -X POST '$url' -H 'Content-Type: application/json' --data-binary @$PWD/deploy/examples/order-created.json

Watch it arrive on the board (kitchen wall screen: add ?view=kitchen):
  $board_url
  log in as $board_email with the password in $state/dashboard-password

Then see it in the hub and at the POS:
  ORDERHUB_DATABASE_URL=$ORDERHUB_DATABASE_URL build/bin/orderhub order list
  ORDERPOS_DATABASE_URL=$ORDERPOS_DATABASE_URL build/bin/orderpos orders list
EOT

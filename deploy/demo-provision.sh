#!/usr/bin/env bash
# Provisions the quickstart's demo: brand DEMO with branch DEMO-1 and a demo partner (label `demo`). Safe to run
# again: the branch is kept, and the partner gets a fresh webhook URL (URLs are shown once, never stored).
# Writes the URL and a ready-to-paste curl command to STATE_DIR/demo.txt.
# Needs ORDERHUB_DATABASE_URL (and ORDERHUB_PUBLIC_URL for the printed URL).
set -euo pipefail
cd "$(dirname "$0")/.."
state=${1:?usage: deploy/demo-provision.sh STATE_DIR}
hub=build/bin/orderhub

json_field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

if ! $hub branch list --json | python3 -c 'import json,sys; sys.exit(0 if any(b["id"]=="DEMO-1" for b in json.load(sys.stdin)) else 1)'; then
  $hub branch create --id DEMO-1 --brand DEMO --name "Demo Branch" >/dev/null
fi

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

Then: build/bin/orderhub order list   (with ORDERHUB_DATABASE_URL=$ORDERHUB_DATABASE_URL)
EOT

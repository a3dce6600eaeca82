"""Browser test of a manual-accept branch's board: real orderhub, orderpos and PostgreSQL on loopback, and
accept.mjs driving Debian's Chromium through Playwright: the countdown, Accept (the order reaches the POS as
ACCEPTED), Reject with a reason (never sent, logged with the user) and the hub's time-out on the card.
Screenshots go to ORDERHUB_BROWSER_ARTIFACTS."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

from harness import (HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env, psql,  # noqa: E402
                     run)

if not os.path.isdir(os.path.join(HERE, "node_modules", "playwright-core")):
    sys.exit("tests/browser/node_modules is missing: run `npm ci` in tests/browser (tests/run.sh does)")
if not os.access("/usr/bin/chromium", os.X_OK):
    sys.exit("/usr/bin/chromium is missing: deploy/install-deps.sh installs it")

hub_url = create_database()
pos_url = create_database()
henv = hub_env(hub_url)
penv = {"ORDERPOS_DATABASE_URL": pos_url}
eq(run(HUB, "migrate", env=henv).returncode, 0, "hub migrate")
eq(run(POS, "migrate", env=penv).returncode, 0, "pos migrate")
eq(run(POS, "menu", "load", os.path.join(SOURCE, "deploy", "demo-menu.json"), env=penv).returncode, 0, "menu")
eq(run(POS, "user", "add", "--email", "hub@demo.test", "--password", "s3cret-pass", "--brand", "DEMO",
       env=penv).returncode, 0, "pos user")
eq(run(HUB, "branch", "create", "--id", "MAN-1", "--brand", "DEMO", "--pos-branch-id", "DEMO-1", "--manual-accept",
       "--accept-timeout-minutes", "2", env=henv).returncode, 0, "manual-accept branch")
partner = json.loads(run(HUB, "partner", "create", "--name", "Platform", "--label", "plat", "--json",
                         env=henv).stdout)
password = "kitchen tablet pass"
r = run(HUB, "user", "add", "--email", "alice@demo.test", "--brand", "DEMO", "--branch", "MAN-1", "--json",
        env=henv, input=password + "\n")
eq(r.returncode, 0, f"user add: {r.stderr}")
alice_id = json.loads(r.stdout)["id"]

pos = Service(POS, env=penv)
r = run(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{pos.port}", "--email",
        "hub@demo.test", "--password", "-", env=henv, input="s3cret-pass\n")
eq(r.returncode, 0, f"pos set: {r.stderr}")
hub = Service(HUB, env=henv)

artifacts = os.environ.get("ORDERHUB_BROWSER_ARTIFACTS", os.path.join(SOURCE, "build", "browser-artifacts-accept"))
env = dict(os.environ)
env.update({"HUB_URL": f"http://127.0.0.1:{hub.port}",
            "WEBHOOK_PATH": "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1],
            "ORDERHUB_BROWSER_ARTIFACTS": artifacts, "BOARD_USER": "alice@demo.test", "BOARD_PASSWORD": password})
node = subprocess.Popen(["node", os.path.join(HERE, "accept.mjs")], env=env, cwd=HERE, stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, text=True)
for line in node.stdout:
    print(line, end="", flush=True)
    if not line.startswith("CONTROL expire "):
        continue
    ext = line.split()[2]
    # The deadline moves into the past instead of waiting the branch's minutes; the hub's sweep does the rest.
    psql(hub_url, "UPDATE hub.forward_jobs j SET accept_deadline = now() - interval '1 second' FROM hub.orders o "
                  f"WHERE o.id = j.order_id AND o.external_id = '{ext}'")
    node.stdin.write("ok\n")
    node.stdin.flush()
eq(node.wait(timeout=240), 0, "accept.mjs")

eq(psql(pos_url, "SELECT string_agg(partner_reference || '|' || status, ',') FROM pos.orders"), "plat:M-1|ACCEPTED",
   "only the accepted order reached the POS, as ACCEPTED")
eq(psql(hub_url, "SELECT l.actor || '|' || l.detail FROM hub.order_status_log l JOIN hub.orders o "
                 "ON o.id = l.order_id WHERE o.external_id = 'M-2' AND l.status = 'merchant_rejected'"),
   f"{alice_id}|Too busy: kitchen full", "the reject is logged with the user and the reason")
eq(psql(hub_url, "SELECT count(*) FROM hub.order_status_log l JOIN hub.orders o ON o.id = l.order_id "
                 "WHERE o.external_id = 'M-3' AND l.status = 'time_out' AND l.source = 'hub'"), "1",
   "the time-out is logged once by the hub")
check(os.path.exists(os.path.join(artifacts, "accept-01-waiting.png")), f"screenshots saved in {artifacts}")
eq(hub.stop(), 0, "hub stops")
eq(pos.stop(), 0, "pos stops")
finish()

"""Browser test of the merchant dashboard: real orderhub, orderpos and PostgreSQL on loopback, and board.mjs
driving Debian's Chromium through Playwright (tests/browser/node_modules, installed by tests/run.sh with npm ci).
Screenshots go to ORDERHUB_BROWSER_ARTIFACTS (build/browser-artifacts)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

from harness import (HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env, psql, run)  # noqa: E402

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
for branch in ("DEMO-1", "DEMO-2"):
    eq(run(HUB, "branch", "create", "--id", branch, "--brand", "DEMO", env=henv).returncode, 0, f"branch {branch}")
partner = json.loads(run(HUB, "partner", "create", "--name", "Platform", "--label", "plat", "--json",
                         env=henv).stdout)
password = "kitchen tablet pass"
for email, branch in (("alice@demo.test", "DEMO-1"), ("bob@demo.test", "DEMO-2")):
    r = run(HUB, "user", "add", "--email", email, "--brand", "DEMO", "--branch", branch, "--json", env=henv,
            input=password + "\n")
    eq(r.returncode, 0, f"user add {email}: {r.stderr}")
alice_id = psql(hub_url, "SELECT id FROM hub.dashboard_users WHERE email = 'alice@demo.test'")

pos = Service(POS, env=penv)
r = run(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{pos.port}", "--email",
        "hub@demo.test", "--password", "-", env=henv, input="s3cret-pass\n")
eq(r.returncode, 0, f"pos set: {r.stderr}")
hub = Service(HUB, env=henv)

artifacts = os.environ.get("ORDERHUB_BROWSER_ARTIFACTS", os.path.join(SOURCE, "build", "browser-artifacts"))
env = dict(os.environ)
env.update(henv)
env.update({"HUB_URL": f"http://127.0.0.1:{hub.port}",
            "WEBHOOK_PATH": "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1],
            "PARTNER_ID": partner["id"], "ORDERHUB_BIN": HUB, "ORDERHUB_BROWSER_ARTIFACTS": artifacts,
            "BOARD_USER_A": "alice@demo.test", "BOARD_USER_B": "bob@demo.test", "BOARD_PASSWORD": password})
out = subprocess.run(["node", os.path.join(HERE, "board.mjs")], env=env, cwd=HERE, timeout=240)
eq(out.returncode, 0, "board.mjs")

# What the browser did is in the database too: the resend's audit row names the user.
eq(psql(hub_url, "SELECT count(*) FROM hub.order_status_log l JOIN hub.orders o ON o.id = l.order_id "
                 f"WHERE o.external_id = 'B-3' AND l.status = 'forward_requeued' AND l.source = 'operator' "
                 f"AND l.actor = '{alice_id}'"), "1", "the resend's audit row: operator, alice's id")
check(all(os.path.exists(os.path.join(artifacts, f"{n}.png")) for n in ("01-login", "03-new-order",
                                                                       "06-pos-rejected", "08-resent")),
      f"screenshots saved in {artifacts}")
eq(hub.stop(), 0, "hub stops")
eq(pos.stop(), 0, "pos stops")
check(password not in hub.log(), "the password is not in the log")
finish()

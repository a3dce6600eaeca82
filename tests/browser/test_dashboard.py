"""Browser test of the merchant dashboard: real orderhub, orderpos and PostgreSQL on loopback, and board.mjs
driving Debian's Chromium through Playwright (tests/browser/node_modules, installed by tests/run.sh with npm ci).
Screenshots go to ORDERHUB_BROWSER_ARTIFACTS (build/browser-artifacts)."""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

from harness import (HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env,  # noqa: E402
                     pos_health, psql, run)

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
# Two hub processes on one database: the board's (api role, restarted below to cut the browser's stream) and
# the one that takes the webhooks and forwards to the POS.
board = Service(HUB, "--role", "api", env=henv)
ingest = Service(HUB, env=henv)

artifacts = os.environ.get("ORDERHUB_BROWSER_ARTIFACTS", os.path.join(SOURCE, "build", "browser-artifacts"))
env = dict(os.environ)
env.update(henv)
env.update({"HUB_URL": f"http://127.0.0.1:{board.port}", "INGEST_URL": f"http://127.0.0.1:{ingest.port}",
            "WEBHOOK_PATH": "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1],
            "PARTNER_ID": partner["id"], "ORDERHUB_BIN": HUB, "ORDERHUB_BROWSER_ARTIFACTS": artifacts,
            "BOARD_USER_A": "alice@demo.test", "BOARD_USER_B": "bob@demo.test", "BOARD_PASSWORD": password})
shutil.rmtree(artifacts, ignore_errors=True)  # only this run's screenshots
# board.mjs asks for the board's hub to be stopped and started again (same port) with CONTROL lines.
node = subprocess.Popen(["node", os.path.join(HERE, "board.mjs")], env=env, cwd=HERE, stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, text=True)
logs = []
for line in node.stdout:
    print(line, end="", flush=True)
    if line.startswith("CONTROL stop-hub"):
        eq(board.stop(), 0, "the board's hub stops")
        logs.append(board.log())
    elif line.startswith("CONTROL start-hub"):
        board = Service(HUB, "--role", "api", env=henv, listen=f"127.0.0.1:{board.port}")
    elif line.startswith("CONTROL stop-pos"):
        eq(pos.stop(), 0, "the POS stops")
    elif line.startswith("CONTROL start-pos"):
        pos = Service(POS, env=penv, listen=f"127.0.0.1:{pos.port}")
    elif line.startswith("CONTROL pos-health"):
        words = line.split()  # CONTROL pos-health open ISO-TIME, or CONTROL pos-health closed
        since = words[3] if words[2] == "open" else None
        pos_health(hub_url, "DEMO", "production", since, host=f"http://127.0.0.1:{pos.port}")
    else:
        continue
    node.stdin.write("ok\n")
    node.stdin.flush()
eq(node.wait(timeout=240), 0, "board.mjs")
resumed = [json.loads(x) for x in board.log().splitlines() if '"dashboard stream"' in x]
check(any(isinstance(x.get("resume_after"), int) and x["resume_after"] > 0 for x in resumed),
      f"after the restart the board resumed with Last-Event-ID: {resumed}")

# What the browser did is in the database too: the resend's audit row names the user.
eq(psql(hub_url, "SELECT count(*) FROM hub.order_status_log l JOIN hub.orders o ON o.id = l.order_id "
                 f"WHERE o.external_id = 'B-3' AND l.status = 'forward_requeued' AND l.source = 'operator' "
                 f"AND l.actor = '{alice_id}'"), "1", "the resend's audit row: operator, alice's id")
check(all(os.path.exists(os.path.join(artifacts, f"{n}.png")) for n in ("01-login", "03-new-order",
                                                                       "06-pos-rejected", "08-resent")),
      f"screenshots saved in {artifacts}")
eq(board.stop(), 0, "the board's hub stops")
eq(ingest.stop(), 0, "the ingesting hub stops")
eq(pos.stop(), 0, "pos stops")
check(all(password not in x for x in logs + [board.log(), ingest.log()]), "the password is not in the logs")
finish()

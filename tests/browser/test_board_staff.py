"""Browser test of what the board tells restaurant staff (issue 22): a POS rejection in plain words, the banners and
their sounds (cancelled after the POS had the order, driver at pick-up, POS unreachable and back), the kitchen view
and a phone-sized screen. Real orderhub, orderpos and PostgreSQL on loopback; staff.mjs drives Debian's Chromium
through Playwright (tests/browser/node_modules, installed by tests/run.sh with npm ci). Screenshots go to
ORDERHUB_BROWSER_ARTIFACTS/staff (build/browser-artifacts/staff)."""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

from harness import (HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env,  # noqa: E402
                     pos_health, run)
from openapi_check import answer_valid  # noqa: E402

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
eq(run(HUB, "branch", "create", "--id", "DEMO-1", "--brand", "DEMO", env=henv).returncode, 0, "branch")
partner = json.loads(run(HUB, "partner", "create", "--name", "Platform", "--label", "plat", "--json",
                         env=henv).stdout)
password = "kitchen wall pass"
r = run(HUB, "user", "add", "--email", "cook@demo.test", "--brand", "DEMO", "--branch", "DEMO-1", "--json",
        env=henv, input=password + "\n")
eq(r.returncode, 0, f"user add: {r.stderr}")

pos = Service(POS, env=penv)
r = run(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{pos.port}", "--email",
        "hub@demo.test", "--password", "-", env=henv, input="s3cret-pass\n")
eq(r.returncode, 0, f"pos set: {r.stderr}")
hub = Service(HUB, env=henv)

artifacts = os.path.join(os.environ.get("ORDERHUB_BROWSER_ARTIFACTS",
                                        os.path.join(SOURCE, "build", "browser-artifacts")), "staff")
shutil.rmtree(artifacts, ignore_errors=True)  # only this run's screenshots
env = dict(os.environ)
env.update({"HUB_URL": f"http://127.0.0.1:{hub.port}",
            "WEBHOOK_PATH": "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1],
            "PARTNER_ID": partner["id"], "ORDERHUB_BROWSER_ARTIFACTS": artifacts,
            "BOARD_USER": "cook@demo.test", "BOARD_PASSWORD": password})
# staff.mjs asks for the POS connection's health to change with CONTROL lines.
node = subprocess.Popen(["node", os.path.join(HERE, "staff.mjs")], env=env, cwd=HERE, stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, text=True)
for line in node.stdout:
    print(line, end="", flush=True)
    if not line.startswith("CONTROL pos-health"):
        continue
    words = line.split()  # CONTROL pos-health open ISO-TIME, or CONTROL pos-health closed
    pos_health(hub_url, "DEMO", "production", words[3] if words[2] == "open" else None,
               host=f"http://127.0.0.1:{pos.port}")
    node.stdin.write("ok\n")
    node.stdin.flush()
eq(node.wait(timeout=240), 0, "staff.mjs")
names = ("01-rejection-plain-words", "02-banners", "03-kitchen-view", "04-phone-board", "05-phone-kitchen")
check(all(os.path.exists(os.path.join(artifacts, f"{n}.png")) for n in names), f"screenshots saved in {artifacts}")

# The plain-words problems as the JSON API gives them (openapi.yaml: pos_problems of GET orders/{id}).
status, headers, body = hub.request("POST", "/api/dashboard/login", {"email": "cook@demo.test", "password": password})
eq(status, 200, "login over the API")
cookie = headers["set-cookie"].split(";", 1)[0]
status, _, listed = hub.request("GET", "/api/dashboard/orders?branch=DEMO-1&filter=all", headers={"Cookie": cookie})
ids = {o["external_id"]: o["id"] for o in listed["orders"]}
for ext in ("S-1", "S-5"):
    path = f"/api/dashboard/orders/{ids[ext]}"
    status, _, detail = hub.request("GET", path, headers={"Cookie": cookie})
    answer_valid("GET", path, status, detail, f"the detail of {ext}")
    problems = detail["order"]["pos_problems"]
    if ext == "S-1":
        eq([(p["kind"], p["line"], p["option"], p["external_id"]) for p in problems],
           [("item", 1, None, "NOT-ON-MENU"), ("option", 1, 1, "M-NOPE")], "S-1's problems: the item and the option")
    else:
        eq(problems, [], "an order in the POS has no problems")
eq(hub.stop(), 0, "the hub stops")
eq(pos.stop(), 0, "pos stops")
check(password not in hub.log(), "the password is not in the log")
finish()

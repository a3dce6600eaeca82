"""docs/operator-guide.md onboards a platform and a brand with the CLI and with the HTTP API: its marked command
blocks, run exactly as written (`sh -eu`, in order), against a real orderhub and orderpos on loopback ports, get
the test order to the POS both ways. The blocks read their ports, URLs and credentials from variables ($HUB,
$POS_URL, ...) that the test sets."""
import os
import re
import shutil
import socket
import subprocess
import time

from harness import (HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env, psql, run)

GUIDE = os.path.join(SOURCE, "docs", "operator-guide.md")
with open(GUIDE, encoding="utf-8") as f:
    text = f.read()


def blocks(way):
    """The ```sh blocks that follow a `<!-- operator-guide: WAY -->` line, in order."""
    return re.findall(r"^<!-- operator-guide: " + way + r" -->\n```sh\n(.*?)^```$", text, re.M | re.S)


cli, api = blocks("cli"), blocks("api")
check(len(cli) >= 5 and len(api) >= 6, f"the guide has marked blocks for both ways: {len(cli)} cli, {len(api)} api")
eq(len(re.findall(r"^<!-- operator-guide:", text, re.M)), len(cli) + len(api), "every marker is followed by a sh block")
for tool in ("curl", "jq", "sh"):
    check(shutil.which(tool) is not None, f"{tool} is installed (the guide's commands use it)")

pos_url = create_database()
penv = {"ORDERPOS_DATABASE_URL": pos_url}
eq(run(POS, "migrate", env=penv).returncode, 0, "pos migrate")
eq(run(POS, "menu", "load", os.path.join(SOURCE, "deploy", "demo-menu.json"), env=penv).returncode, 0, "menu load")
POS_EMAIL, POS_PASSWORD = "hub@demo.test", "onboarding-pass-1"
r = run(POS, "user", "add", "--email", POS_EMAIL, "--password", POS_PASSWORD, "--brand", "DEMO", env=penv)
eq(r.returncode, 0, f"pos user add: {r.stderr}")
pos = Service(POS, env=penv)


def free_port():
    """A loopback port free right now: the hub's public URL (in its webhook URLs) must name its port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def at_pos(reference):
    return int(psql(pos_url, f"SELECT count(*) FROM pos.orders WHERE partner_reference = '{reference}'"))


bin_dir = os.path.dirname(os.path.abspath(HUB))
for way, script, order_id in (("cli", cli, "CLI-1001"), ("api", api, "API-1001")):
    hub_url = create_database()
    port = free_port()
    public = f"http://127.0.0.1:{port}"
    henv = hub_env(hub_url, ORDERHUB_PUBLIC_URL=public)
    eq(run(HUB, "migrate", env=henv).returncode, 0, f"{way}: hub migrate")
    hub = Service(HUB, env=henv, listen=f"127.0.0.1:{port}")
    env = dict(os.environ, **henv, HUB=public, POS_URL=f"http://127.0.0.1:{pos.port}", POS_EMAIL=POS_EMAIL,
               POS_PASSWORD=POS_PASSWORD, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    done = subprocess.run(["sh", "-eu", "-c", "".join(script)], capture_output=True, text=True, env=env,
                             timeout=120, cwd=SOURCE)
    eq(done.returncode, 0, f"{way}: the guide's commands succeed\n{done.stdout}\n{done.stderr}")
    check("delivered" in done.stdout, f"{way}: the last command shows the order delivered:\n{done.stdout}")
    eq(at_pos(f"eats:{order_id}"), 1, f"{way}: the test order {order_id} is at the POS, once")
    lines = psql(pos_url, "SELECT p.product_id || ':' || coalesce(m.modifier_id, '') FROM pos.orders o "
                          "JOIN pos.order_products p ON p.order_id = o.id LEFT JOIN pos.order_modifiers m "
                          "ON m.order_id = p.order_id AND m.line_no = p.line_no "
                          f"WHERE o.partner_reference = 'eats:{order_id}'")
    eq(lines, "P-BURGER:M-CHEESE", f"{way}: the mappings turned the platform's ids into the POS's")
    eq(hub.stop(), 0, f"{way}: hub stops cleanly")
    check(POS_PASSWORD not in hub.log(), f"{way}: the POS password is not in the hub's log")

eq(pos.stop(), 0, "POS stops cleanly")
finish()

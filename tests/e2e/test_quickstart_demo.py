"""The quickstart's demo provisioning (deploy/demo-provision.sh, run by deploy/quickstart.sh) for real, against
throwaway databases and the built binaries: the reference POS and the hub get the demo setup, the board gets a demo
user whose password lives only in the state folder (mode 600, like the POS user's), and demo.txt shows the board's
address and login beside the curl command, never a password. Running it again keeps the user and its password."""
import os
import re
import stat
import subprocess
import tempfile

from harness import HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env

hub_url = create_database()
pos_url = create_database()
state = tempfile.mkdtemp(prefix="quickstart-state-")
env = dict(os.environ)
env.update(hub_env(hub_url))
env.update({"ORDERPOS_DATABASE_URL": pos_url, "ORDERPOS_LISTEN": "127.0.0.1:9", "ORDERHUB_BIN": HUB,
            "ORDERPOS_BIN": POS, "ORDERHUB_PUBLIC_URL": "http://127.0.0.1:8080"})
eq(subprocess.run([HUB, "migrate"], env=env, capture_output=True, timeout=120).returncode, 0, "hub migrate")
eq(subprocess.run([POS, "migrate"], env=env, capture_output=True, timeout=120).returncode, 0, "pos migrate")

with open(os.path.join(SOURCE, "deploy", "quickstart.sh")) as f:
    quickstart = f.read()
check("demo-provision.sh" in quickstart and 'cat "$state/demo.txt"' in quickstart,
      "quickstart provisions the demo and prints demo.txt")


def provision():
    r = subprocess.run([os.path.join(SOURCE, "deploy", "demo-provision.sh"), state], env=env, cwd=SOURCE,
                       capture_output=True, text=True, timeout=120)
    eq(r.returncode, 0, f"demo-provision.sh: {r.stderr}")
    return r


first = provision()
pw_file = os.path.join(state, "dashboard-password")
check(os.path.isfile(pw_file) and stat.S_IMODE(os.stat(pw_file).st_mode) == 0o600,
      "the board's password is in the state folder, mode 600")
with open(pw_file) as f:
    password = f.read().strip()
check(len(password) >= 20, "a long random password")
with open(os.path.join(state, "demo.txt")) as f:
    demo = f.read()
check("curl -sS -X POST" in demo, "demo.txt has the curl command")
check("  http://127.0.0.1:8080/dashboard/\n" in demo, f"demo.txt has the board's URL: {demo}")
check(f"log in as demo@orderhub.local with the password in {pw_file}" in demo, "demo.txt has the board's login")
check(password not in demo and password not in first.stdout + first.stderr, "the password is never printed")

# The board takes the login; the demo order (deploy/examples/order-created.json, branch DEMO-1) is in its scope.
hub = Service(HUB, env=hub_env(hub_url))
status, _, body = hub.request("POST", "/api/dashboard/login", {"email": "demo@orderhub.local", "password": password})
eq(status, 200, f"the demo user logs in to the board: {body}")
check([b["id"] for b in body["user"]["branches"]] == ["DEMO-1"], f"the demo user sees DEMO-1: {body}")

# Again (the quickstart runs it at every start): the same user and password, no error.
second = provision()
with open(pw_file) as f:
    eq(f.read().strip(), password, "the password is kept")
status, _, _ = hub.request("POST", "/api/dashboard/login", {"email": "demo@orderhub.local", "password": password})
eq(status, 200, "the same login works after a second run")
check(password not in second.stdout + second.stderr, "the password is not printed on the second run")
check(not re.search(re.escape(password), hub.log()), "the password is not in the hub's log")
eq(hub.stop(), 0, "the hub stops")
finish()

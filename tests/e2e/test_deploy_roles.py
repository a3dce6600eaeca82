"""The shipped configurations keep the migrating owner and the serving login apart, and no service of the compose
file connects as the PostgreSQL superuser or with a default password. The compose file's role script
(deploy/postgres-init/10-orderhub-roles.sh) runs against a real cluster, as the postgres image runs it; then
`orderhub migrate` runs as the owner it made and `orderhub serve` as its serving login, which stores a webhook;
that login cannot undo the status log's append-only rule. The systemd units and quickstart are read for the same
separation."""
import atexit
import json
import os
import re
import subprocess
import tempfile

import yaml

from harness import HUB, SOURCE, Service, check, eq, finish, hub_env, psql, run

DEPLOY = os.path.join(SOURCE, "deploy")
PG_LOCAL = os.path.join(DEPLOY, "pg-local.sh")

# compose.yaml: every database URL names a role that is not the superuser; no password has a default.
with open(os.path.join(DEPLOY, "compose.yaml")) as f:
    text = f.read()
compose = yaml.safe_load(text)
superuser = compose["services"]["db"]["environment"]["POSTGRES_USER"]
users = {}
for name, service in compose["services"].items():
    for key, value in (service.get("environment") or {}).items():
        if key.endswith("_DATABASE_URL"):
            users[name] = re.match(r"postgresql://([^:@]+)", value).group(1)
check(users and superuser not in users.values(), f"no service connects as the superuser {superuser}: {users}")
check(users["migrate"] != users["hub-api"] and users["hub-api"] == users["hub-forwarder"],
      f"the hub migrates as one role and serves as another: {users}")
check(not re.search(r"PASSWORD:-", text), "no password in compose.yaml has a default value")

# systemd: the serving URL (orderhub.env) and the migrating URL (orderhub-migrate.env) name different roles.
def url_user(path):
    with open(path) as f:
        m = re.search(r"^ORDERHUB_DATABASE_URL=postgresql://([^:@/]+)", f.read(), re.M)
    return m.group(1) if m else None


serve_user = url_user(os.path.join(DEPLOY, "systemd", "orderhub.env.example"))
migrate_user = url_user(os.path.join(DEPLOY, "systemd", "orderhub-migrate.env.example"))
check(serve_user and migrate_user and serve_user != migrate_user,
      f"systemd: serve as {serve_user}, migrate as {migrate_user}")
with open(os.path.join(DEPLOY, "quickstart.sh")) as f:
    check("orderhub_serve@" in f.read(), "quickstart serves with the orderhub_serve login")

# The role script against a fresh cluster, as the postgres image runs it: psql on PATH, the superuser's name.
pgdir = tempfile.mkdtemp(prefix="pg-deploy-")
atexit.register(lambda: subprocess.run([PG_LOCAL, "destroy", pgdir], capture_output=True, timeout=120))
out = subprocess.run([PG_LOCAL, "start", pgdir, "postgres"], capture_output=True, text=True, timeout=120)
if out.returncode != 0:
    raise RuntimeError(f"pg-local.sh start failed: {out.stderr}")
root = out.stdout.strip()
# The postgres image starts with the database `postgres` only (POSTGRES_DB unset); pg-local.sh made two more.
psql(root, "DROP DATABASE orderhub")
psql(root, "DROP DATABASE orderpos")
host, port = re.match(r"postgresql://[^@]+@([^:/]+):(\d+)/", root).groups()
env = dict(os.environ, PATH="/usr/lib/postgresql/15/bin:" + os.environ["PATH"], PGHOST=host, PGPORT=port,
           POSTGRES_USER="orderhub", ORDERHUB_OWNER_PASSWORD=os.urandom(16).hex(),
           ORDERHUB_SERVE_PASSWORD=os.urandom(16).hex(), ORDERPOS_PASSWORD=os.urandom(16).hex())
r = subprocess.run([os.path.join(DEPLOY, "postgres-init", "10-orderhub-roles.sh")], env=env, capture_output=True,
                   text=True, timeout=60)
eq(r.returncode, 0, f"the role script runs: {r.stderr}")


def url(user, db="orderhub"):
    return f"postgresql://{user}@{host}:{port}/{db}"


eq(psql(root, "SELECT string_agg(rolname || ':' || rolsuper, ',' ORDER BY rolname) FROM pg_roles WHERE rolname "
              "IN ('orderhub_owner', 'orderhub_serve', 'orderpos')"),
   "orderhub_owner:false,orderhub_serve:false,orderpos:false", "the roles exist, none a superuser")
owner_env = hub_env(url("orderhub_owner"))
for attempt in (1, 2):
    r = run(HUB, "migrate", env=owner_env)
    eq(r.returncode, 0, f"migrate #{attempt} as orderhub_owner: {r.stderr.strip()}")
eq(run(HUB, "branch", "create", "--id", "B-1", "--brand", "BR", env=owner_env).returncode, 0, "branch create")
r = run(HUB, "partner", "create", "--name", "P", "--json", env=owner_env)
eq(r.returncode, 0, f"partner create: {r.stderr}")
hook = "/webhooks/" + json.loads(r.stdout)["webhook_url"].rsplit("/webhooks/", 1)[1]
hub = Service(HUB, env=hub_env(url("orderhub_serve")))
body = {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "B-1",
        "payload": {"id": "D-1", "payment_method": "card", "order_type": "DELIVERY", "note": "",
                    "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                    "schedule_date": None, "car_data": None,
                    "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                    "items": [{"id": "P-1", "quantity": 1, "price": 24, "options": []}]}}
status, _, answer = hub.request("POST", hook, body)
eq(status, 200, f"serve as orderhub_serve stores a webhook ({answer})")
hub.stop()
rows = psql(url("orderhub_owner"), "SELECT count(*) FROM hub.order_status_log")
for sql in ("ALTER TABLE hub.order_status_log DISABLE TRIGGER USER",
            "RESET ROLE; DELETE FROM hub.order_status_log"):
    try:
        psql(url("orderhub_serve"), sql)
        check(False, f"orderhub_serve may not: {sql}")
    except RuntimeError:
        check(True, "")
eq(psql(url("orderhub_owner"), "SELECT count(*) FROM hub.order_status_log"), rows, "the status log is intact")
r = subprocess.run(["/usr/lib/postgresql/15/bin/psql", "-X", "-d", url("orderpos", "orderpos"), "-tAc",
                    "SELECT current_user"], capture_output=True, text=True, timeout=30)
eq(r.stdout.strip(), "orderpos", "the POS's login reaches its own database")
finish()

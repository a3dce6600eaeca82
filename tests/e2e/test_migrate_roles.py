"""Database roles in the shape every shipped configuration uses: `orderhub migrate` runs as a database owner that
is not a superuser (CREATEROLE only) and may itself be called orderhub_app or orderhub_auditor, the names the
hub's own roles are written with; it works, twice (idempotent); then `orderhub serve` runs with a login that owns
nothing and is a member of the hub's serving role, and stores a webhook. That login can neither switch off the
status log's append-only triggers nor change the log. Each case gets its own PostgreSQL cluster (roles are
cluster-wide, and the shared test cluster already has the hub's roles)."""
import atexit
import json
import os
import subprocess
import tempfile

from harness import HUB, SOURCE, Service, check, eq, finish, hub_env, psql, run

PG_LOCAL = os.path.join(SOURCE, "deploy", "pg-local.sh")


def cluster():
    """A throwaway cluster; returns its superuser's URL (database postgres)."""
    pgdir = tempfile.mkdtemp(prefix="pg-roles-")
    atexit.register(lambda: subprocess.run([PG_LOCAL, "destroy", pgdir], capture_output=True, timeout=120))
    out = subprocess.run([PG_LOCAL, "start", pgdir, "postgres"], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"pg-local.sh start failed: {out.stderr}")
    return out.stdout.strip()


def as_user(url, user, db):
    scheme, rest = url.split("://", 1)
    host = rest.split("@", 1)[1].split("/", 1)[0]
    return f"{scheme}://{user}@{host}/{db}"


def order(order_id):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "B-1",
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-1", "quantity": 1, "price": 24, "options": []}]}}


def refused(url, sql):
    try:
        psql(url, sql)
        return False
    except RuntimeError:
        return True


for owner, app_role in (("orderhub_app", "orderhub_app_role"), ("orderhub_auditor", "orderhub_app")):
    what = f"owner {owner}"
    root = cluster()
    psql(root, f"CREATE ROLE {owner} LOGIN CREATEROLE NOSUPERUSER")
    psql(root, f"CREATE DATABASE hub OWNER {owner}")
    owner_url = as_user(root, owner, "hub")
    env = hub_env(owner_url)
    for attempt in (1, 2):
        r = run(HUB, "migrate", "--json", env=env)
        eq(r.returncode, 0, f"{what}: migrate #{attempt}: {r.stderr.strip()}")
        if r.returncode == 0 and attempt == 2:
            eq(json.loads(r.stdout)["applied"], [], f"{what}: the second migrate applies nothing")
    eq(psql(root, f"SELECT rolcanlogin FROM pg_roles WHERE rolname = '{app_role}'"), "f",
       f"{what}: the serving role {app_role} exists and cannot log in")
    eq(psql(owner_url, "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'hub'"), owner,
       f"{what}: the schema belongs to the owner")

    # The serving login: owns nothing, is a member of the serving role.
    psql(owner_url, f"CREATE ROLE hub_serve LOGIN IN ROLE {app_role}")
    serve_url = as_user(root, "hub_serve", "hub")
    r = run(HUB, "branch", "create", "--id", "B-1", "--brand", "BR", env=env)
    eq(r.returncode, 0, f"{what}: branch create as the owner: {r.stderr.strip()}")
    r = run(HUB, "partner", "create", "--name", "P", "--json", env=env)
    eq(r.returncode, 0, f"{what}: partner create as the owner: {r.stderr.strip()}")
    hook = "/webhooks/" + json.loads(r.stdout)["webhook_url"].rsplit("/webhooks/", 1)[1]
    hub = Service(HUB, env=hub_env(serve_url))
    eq(hub.request("GET", "/readyz")[0], 200, f"{what}: ready as the serving login")
    status, _, answer = hub.request("POST", hook, order("R-1"))
    eq(status, 200, f"{what}: webhook stored by serve as the serving login ({answer})")
    eq(psql(owner_url, "SELECT count(*) FROM hub.orders WHERE external_id = 'R-1'"), "1",
       f"{what}: the order is in the database")
    eq(psql(owner_url, "SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = 'hub' AND "
                       "application_name = '' AND usename = 'hub_serve'"), "hub_serve",
       f"{what}: serve's connections log in as hub_serve")
    hub.stop()

    # The serving login cannot undo the append-only rule: it does not own the table.
    rows = psql(owner_url, "SELECT count(*) FROM hub.order_status_log")
    check(refused(serve_url, "ALTER TABLE hub.order_status_log DISABLE TRIGGER order_status_log_no_update_delete"),
          f"{what}: the serving login cannot disable the append-only trigger")
    check(refused(serve_url, "RESET ROLE; UPDATE hub.order_status_log SET applied = NOT applied"),
          f"{what}: the serving login cannot change the status log")
    eq(psql(owner_url, "SELECT count(*) FROM hub.order_status_log"), rows, f"{what}: the status log is intact")

finish()

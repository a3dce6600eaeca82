"""Forwarding with the real orderhub, the real orderpos and PostgreSQL: every stored order reaches its branch's
POS exactly once; rejections, outages, authentication failures, cancellations and schedules follow the answer
table of product.md section 6."""
import datetime
import json
import os
import time

from harness import (HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env, psql, run)

hub_url = create_database()
pos_url = create_database()
henv = hub_env(hub_url)
penv = {"ORDERPOS_DATABASE_URL": pos_url}

eq(run(HUB, "migrate", env=henv).returncode, 0, "hub migrate")
eq(run(POS, "migrate", env=penv).returncode, 0, "pos migrate")
eq(run(POS, "menu", "load", os.path.join(SOURCE, "deploy", "demo-menu.json"), env=penv).returncode, 0, "menu load")
r = run(POS, "user", "add", "--email", "hub@demo.test", "--password", "s3cret-pass", "--brand", "DEMO", env=penv)
eq(r.returncode, 0, f"pos user add: {r.stderr}")
eq(run(HUB, "branch", "create", "--id", "DEMO-1", "--brand", "DEMO", env=henv).returncode, 0, "branch create")
partner = json.loads(run(HUB, "partner", "create", "--name", "Platform", "--label", "plat", "--json",
                         env=henv).stdout)
webhook = "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1]

pos = Service(POS, env=penv)
pos_base = f"http://127.0.0.1:{pos.port}"
status, _, body = pos.request("POST", "/api/login", {"email": "hub@demo.test", "password": "s3cret-pass"})
eq(status, 200, "POS login")
token = body["access_token"]


def pos_set(*extra, input=None):
    r = run(HUB, "pos", "set", "--brand", "DEMO", "--base-url", pos_base, *extra, env=henv, input=input)
    eq(r.returncode, 0, f"pos set: {r.stderr}")
    check(token not in r.stdout + r.stderr, "pos set never prints the token")


def order(order_id, item="P-BURGER", schedule=None):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "DEMO-1",
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6,
                        "is_schedule": 1 if schedule else 0, "schedule_date": schedule, "car_data": None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": item, "quantity": 1, "price": 24,
                                   "options": [{"id": "M-CHEESE", "price": 3, "quantity": 1}]}]}}


def job(hub_id):
    return psql(hub_url, f"SELECT state || '|' || attempts FROM hub.forward_jobs WHERE order_id = '{hub_id}'")


def wait_state(hub_id, states, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        s = job(hub_id).split("|")[0]
        if s in states:
            return s
        time.sleep(0.1)
    return job(hub_id)


def at_pos(ref):
    return int(psql(pos_url, f"SELECT count(*) FROM pos.orders WHERE partner_reference = '{ref}'"))


# Orders are stored by an api-only hub, so each test decides when a forwarder runs.
api = Service(HUB, "--role", "api", env=henv)


def send(order_id, **kw):
    status, _, body = api.request("POST", webhook, order(order_id, **kw))
    eq(status, 200, f"stored {order_id}")
    return body.get("order_id", "")


pos_set("--token", token)
fwd = Service(HUB, "--role", "forwarder", env=henv)

# Delivered: the POS order id is stored, the status log has a pos row.
started = time.time()
first = send("F-1")
eq(wait_state(first, {"delivered"}), "delivered", "delivered")
print(f"measured: stored-to-delivered {time.time() - started:.3f} s")
eq(at_pos("plat:F-1"), 1, "the order is at the POS once")
check(psql(hub_url, f"SELECT pos_order_id IS NOT NULL FROM hub.forward_jobs WHERE order_id = '{first}'") == "t",
      "POS order id stored")
eq(psql(hub_url, f"SELECT source || ':' || status FROM hub.order_status_log WHERE order_id = '{first}' "
                 "AND source = 'pos'"), "pos:pos_accepted", "status-log row from the POS")
pos_row = psql(pos_url, "SELECT total::text || '|' || branch_id || '|' || brand_id || '|' || status "
                        "FROM pos.orders WHERE partner_reference = 'plat:F-1'")
eq(pos_row, "27.600|DEMO-1|DEMO|PENDING", "the POS got the mapped order")

# An item unknown to the POS: rejected, not retried, the reason kept.
bad = send("F-2", item="NOT-ON-MENU")
eq(wait_state(bad, {"rejected"}), "rejected", "unknown item: rejected")
time.sleep(1.5)
eq(job(bad), "rejected|1", "rejected is not retried")
check("products.0.id" in psql(hub_url, f"SELECT last_error FROM hub.forward_jobs WHERE order_id = '{bad}'"),
      "the POS's reason is kept")
# The operator maps the item and resends it.
eq(run(HUB, "map", "set", "--partner", partner["id"], "--kind", "item", "--external", "NOT-ON-MENU", "--pos",
       "P-FRIES", env=henv).returncode, 0, "map set")
eq(run(HUB, "order", "resend", bad, env=henv).returncode, 0, "order resend")
eq(wait_state(bad, {"delivered"}), "delivered", "mapped and resent: delivered")
eq(psql(pos_url, "SELECT p.product_id FROM pos.orders o JOIN pos.order_products p ON p.order_id = o.id "
                 "WHERE o.partner_reference = 'plat:F-2'"), "P-FRIES", "the mapped id reached the POS")
eq(run(HUB, "order", "resend", bad, env=henv).returncode, 0, "resend a delivered order")
eq(wait_state(bad, {"delivered"}), "delivered", "resent again")
eq(at_pos("plat:F-2"), 1, "a resend does not double the order at the POS")

# POS stopped: retried with back-off, delivered once it is back.
eq(pos.stop(), 0, "POS stops")
down = send("F-3")
deadline = time.time() + 15
while time.time() < deadline and int(job(down).split("|")[1]) < 2:
    time.sleep(0.2)
state, attempts = job(down).split("|")
check(state in ("pending", "in_flight") and int(attempts) >= 2, f"retried while the POS is down: {state} {attempts}")
check("connect" in psql(hub_url, f"SELECT error FROM hub.pos_delivery_attempts WHERE order_id = '{down}' LIMIT 1"),
      "the attempt log says why")
pos = Service(POS, env=penv, listen=f"127.0.0.1:{pos_base.rsplit(':', 1)[1]}")
eq(wait_state(down, {"delivered"}, timeout=40), "delivered", "delivered after the POS is back")
eq(at_pos("plat:F-3"), 1, "once")

# A wrong token with stored credentials: one login, the new token stored, delivered.
pos_set("--token", "wrong-token", "--email", "hub@demo.test", "--password", "-", input="s3cret-pass\n")
relog = send("F-4")
eq(wait_state(relog, {"delivered"}), "delivered", "re-login and delivery")
outcomes = psql(hub_url, f"SELECT string_agg(outcome, ',' ORDER BY id) FROM hub.pos_delivery_attempts "
                         f"WHERE order_id = '{relog}'")
eq(outcomes, "unauthorized,logged_in,delivered", "attempts: 401, login, retry")
sealed = psql(hub_url, "SELECT token_sealed FROM hub.pos_connections WHERE brand_id = 'DEMO'")
check(sealed.startswith("v1:") and "wrong-token" not in sealed, "the new token is stored sealed")

# A wrong token and no credentials: auth_failed until `pos set` gives a good token.
pos_set("--token", "wrong-token")
stuck = send("F-5")
eq(wait_state(stuck, {"auth_failed"}), "auth_failed", "auth_failed")
time.sleep(1.5)
eq(job(stuck).split("|")[0], "auth_failed", "auth_failed waits for the operator")
pos_set("--token", token)
eq(wait_state(stuck, {"delivered"}), "delivered", "pos set re-queues and it is delivered")

# Cancelled before it was sent: never sent.
fwd.stop()
cancelled = send("F-6")
status, _, _ = api.request("POST", webhook, {"event": "order_updated", "event_time": "2024-05-01 18:01:00",
                                             "branch_id": "DEMO-1", "payload": {"order_id": "F-6",
                                                                                "status": "cancelled"}})
eq(status, 200, "cancel")
fwd = Service(HUB, "--role", "forwarder", env=henv)
eq(wait_state(cancelled, {"cancelled"}), "cancelled", "the job is cancelled")
time.sleep(1.5)
eq(at_pos("plat:F-6"), 0, "a cancelled order never reaches the POS")

# A scheduled order is held until schedule_date minus the lead time (0 minutes here).
eq(run(HUB, "branch", "create", "--id", "LATER", "--brand", "DEMO", "--pos-branch-id", "DEMO-1",
       "--schedule-lead-minutes", "0", env=henv).returncode, 0, "branch with no lead time")
when = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=4)).strftime("%Y-%m-%dT%H:%M:%SZ")
o = order("F-7", schedule=when)
o["branch_id"] = "LATER"
status, _, body = api.request("POST", webhook, o)
eq(status, 200, "scheduled order stored")
held = body["order_id"]
time.sleep(1.5)
eq(job(held).split("|")[0], "pending", "held before its time")
eq(at_pos("plat:F-7"), 0, "not at the POS before its time")
eq(wait_state(held, {"delivered"}, timeout=20), "delivered", "sent at its time")
check(psql(hub_url, f"SELECT min(attempted_at) >= '{when}'::timestamptz FROM hub.pos_delivery_attempts "
                    f"WHERE order_id = '{held}'") == "t", "not sent before schedule_date minus the lead time")

# Two forwarders drain 2,000 jobs: every order at the POS exactly once.
fwd.stop()
for i in range(2000):
    status, _, _ = api.request("POST", webhook, order(f"BULK-{i}"))
    if status != 200:
        check(False, f"bulk order {i}: {status}")
        break
fwds = [Service(HUB, "--role", "forwarder", env=henv) for _ in range(2)]
deadline = time.time() + 180
while time.time() < deadline:
    left = int(psql(hub_url, "SELECT count(*) FROM hub.forward_jobs j JOIN hub.orders o ON o.id = j.order_id "
                             "WHERE o.external_id LIKE 'BULK-%' AND j.state <> 'delivered'"))
    if left == 0:
        break
    time.sleep(0.5)
eq(left, 0, "all 2,000 delivered")
eq(psql(pos_url, "SELECT count(*) || '|' || count(DISTINCT partner_reference) FROM pos.orders "
                 "WHERE partner_reference LIKE 'plat:BULK-%'"), "2000|2000", "each exactly once at the POS")
eq(psql(hub_url, "SELECT count(*) FROM hub.pos_delivery_attempts a JOIN hub.orders o ON o.id = a.order_id "
                 "WHERE o.external_id LIKE 'BULK-%' AND a.outcome = 'delivered'"), "2000", "no job was sent twice")
both = psql(hub_url, "SELECT count(DISTINCT forwarder) FROM hub.pos_delivery_attempts a JOIN hub.orders o "
                     "ON o.id = a.order_id WHERE o.external_id LIKE 'BULK-%'")
print(f"measured: forwarders that took part: {both}")

# HTTPS to the POS: verified against --ca-file; refused without it and when the host name does not match.
import subprocess
import tempfile
certs = tempfile.mkdtemp(prefix="forward-certs-")
subprocess.run([os.path.join(SOURCE, "deploy", "make-cert.sh"), certs], check=True, capture_output=True)
eq(pos.stop(), 0, "plain POS stops")
for f in fwds[1:]:
    f.stop()
fwds = fwds[:1]


def tls_pos(cert):
    return Service(POS, env={**penv, "ORDERPOS_TLS_CERT": f"{certs}/{cert}.pem",
                             "ORDERPOS_TLS_KEY": f"{certs}/{cert}.key"})


def https_set(port, *extra):
    r = run(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"https://127.0.0.1:{port}", "--token", token,
            *extra, env=henv)
    eq(r.returncode, 0, f"pos set https: {r.stderr}")


def last_error(hub_id):
    return psql(hub_url, f"SELECT coalesce(error, '') FROM hub.pos_delivery_attempts WHERE order_id = '{hub_id}' "
                         "ORDER BY id DESC LIMIT 1")


pos = tls_pos("server")
https_set(pos.port, "--ca-file", f"{certs}/ca.pem")
secure = send("TLS-1")
eq(wait_state(secure, {"delivered"}), "delivered", "HTTPS with --ca-file: delivered")
https_set(pos.port)
untrusted = send("TLS-2")
time.sleep(2)
check(job(untrusted).split("|")[0] in ("pending", "in_flight"), "HTTPS without the CA: not delivered")
check("tls" in last_error(untrusted).lower(), f"the attempt says why: {last_error(untrusted)}")
eq(at_pos("plat:TLS-2"), 0, "nothing reached the untrusted POS")
eq(pos.stop(), 0, "TLS POS stops")
pos = tls_pos("wrong")
https_set(pos.port, "--ca-file", f"{certs}/ca.pem")
mismatch = send("TLS-3")
time.sleep(2)
check(job(mismatch).split("|")[0] in ("pending", "in_flight"), "host name mismatch: not delivered")
check("hostname" in last_error(mismatch).lower() or "tls" in last_error(mismatch).lower(),
      f"mismatch reason: {last_error(mismatch)}")
eq(at_pos("plat:TLS-3"), 0, "nothing reached the mismatched POS")

for f in fwds:
    eq(f.stop(), 0, "forwarder exits 0 on SIGTERM")
eq(psql(hub_url, "SELECT count(*) FROM hub.forward_jobs WHERE state = 'in_flight'"), "0", "no claim left behind")
check(token not in "".join(f.log() for f in fwds), "the token never reaches the log")
eq(api.stop(), 0, "api exits 0")
eq(pos.stop(), 0, "POS exits 0")
finish()

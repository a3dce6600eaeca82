"""Manual-accept branches (product.md section 11) with the real orderhub, the real orderpos and PostgreSQL: a new
order waits in the hub until a user of its branch accepts it (sent with ACCEPTED) or rejects it (never sent,
merchant_rejected with the user as actor); without a decision it times out in the hub (never sent, one time_out row)
also across a restart and with two hubs sweeping; a platform cancellation ends the wait; the dashboard calls keep the
session, CSRF and branch-scope rules of resend; a branch without the flag is sent as before.

The time-out is made due by moving the held job's deadline in the database (no test waits a real minute)."""
import json
import os
import time

from harness import HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env, psql, run

hub_url = create_database()
pos_url = create_database()
henv = hub_env(hub_url)
penv = {"ORDERPOS_DATABASE_URL": pos_url}

eq(run(HUB, "migrate", env=henv).returncode, 0, "hub migrate")
eq(run(POS, "migrate", env=penv).returncode, 0, "pos migrate")
eq(run(POS, "menu", "load", os.path.join(SOURCE, "deploy", "demo-menu.json"), env=penv).returncode, 0, "menu load")
r = run(POS, "user", "add", "--email", "hub@demo.test", "--password", "s3cret-pass", "--brand", "DEMO", env=penv)
eq(r.returncode, 0, f"pos user add: {r.stderr}")
for branch, extra in (("MAN-1", ["--manual-accept", "--accept-timeout-minutes", "1"]),
                      ("MAN-2", ["--manual-accept"]), ("PLAIN", [])):
    r = run(HUB, "branch", "create", "--id", branch, "--brand", "DEMO", "--pos-branch-id", "DEMO-1", *extra, env=henv)
    eq(r.returncode, 0, f"branch create {branch}: {r.stderr}")
partner = json.loads(run(HUB, "partner", "create", "--name", "Platform", "--label", "plat", "--json",
                         env=henv).stdout)
webhook = "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1]

PASSWORD = "correct horse battery"


def user_add(email, *branches):
    args = ["user", "add", "--email", email, "--brand", "DEMO", "--json"]
    for b in branches:
        args += ["--branch", b]
    r = run(HUB, *args, env=henv, input=PASSWORD + "\n")
    eq(r.returncode, 0, f"user add {email}: {r.stderr}")
    return json.loads(r.stdout)["id"]


alice_id = user_add("alice@demo.test", "MAN-1")
bob_id = user_add("bob@demo.test", "MAN-2")
user_add("carol@demo.test")  # every branch of the brand

pos = Service(POS, env=penv)
status, _, body = pos.request("POST", "/api/login", {"email": "hub@demo.test", "password": "s3cret-pass"})
eq(status, 200, "POS login")
r = run(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{pos.port}", "--token",
        body["access_token"], env=henv)
eq(r.returncode, 0, f"pos set: {r.stderr}")

# Orders and the dashboard go through an api-only hub; forwarders (which also run the time-out sweep) come and go.
api = Service(HUB, "--role", "api", env=henv)
fwd = Service(HUB, "--role", "forwarder", env=henv)


def order(order_id, branch):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": branch,
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-BURGER", "quantity": 1, "price": 24,
                                   "options": [{"id": "M-CHEESE", "price": 3, "quantity": 1}]}]}}


def send(order_id, branch="MAN-1"):
    status, _, body = api.request("POST", webhook, order(order_id, branch))
    eq(status, 200, f"stored {order_id}")
    return body.get("order_id", "")


def state(hub_id):
    return psql(hub_url, f"SELECT state FROM hub.forward_jobs WHERE order_id = '{hub_id}'")


def wait_state(hub_id, states, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        s = state(hub_id)
        if s in states:
            return s
        time.sleep(0.1)
    return state(hub_id)


def at_pos(ref):
    return int(psql(pos_url, f"SELECT count(*) FROM pos.orders WHERE partner_reference = '{ref}'"))


def log_rows(hub_id, status_name):
    return psql(hub_url, f"SELECT string_agg(source || '|' || coalesce(actor, '') || '|' || coalesce(detail, ''), "
                         f"',' ORDER BY id) FROM hub.order_status_log WHERE order_id = '{hub_id}' "
                         f"AND status = '{status_name}'")


def expire(hub_id):
    """Moves a held job's deadline into the past: the next sweep times it out."""
    psql(hub_url, "UPDATE hub.forward_jobs SET accept_deadline = now() - interval '1 second' "
                  f"WHERE order_id = '{hub_id}'")


def login(email):
    status, headers, body = api.request("POST", "/api/dashboard/login", {"email": email, "password": PASSWORD})
    eq(status, 200, f"{email} logs in")
    return headers["set-cookie"].split(";", 1)[0].split("=", 1)[1], body["csrf_token"]


alice, alice_csrf = login("alice@demo.test")
bob, bob_csrf = login("bob@demo.test")
carol = login("carol@demo.test")


def call(path, who=None, body=None, csrf=True):
    cookie, token = who or (alice, alice_csrf)
    headers = {"Cookie": f"orderhub_session={cookie}"}
    if csrf:
        headers["X-CSRF-Token"] = token
    status, _, answer = api.request("POST", f"/api/dashboard/orders/{path}", body, headers=headers)
    return status, answer


def code(answer):
    return answer.get("error", {}).get("code") if isinstance(answer, dict) else None


# ---- a branch without the flag: sent at once as PENDING, as before ----
plain = send("P-1", "PLAIN")
eq(wait_state(plain, {"delivered"}), "delivered", "a branch without manual accept: delivered")
eq(psql(pos_url, "SELECT status FROM pos.orders WHERE partner_reference = 'plat:P-1'"), "PENDING",
   "sent as PENDING")
eq(call(f"{plain}/accept")[0], 404, "accept of another branch's order: 404")
eq(call(f"{plain}/accept", who=carol)[0], 409, "accept of an order that never waited: 409")

# ---- held, then accepted: sent with ACCEPTED ----
held = send("A-1")
eq(state(held), "awaiting_acceptance", "a manual-accept branch's order is held")
status, _, listed = api.request("GET", "/api/dashboard/orders?branch=MAN-1",
                                headers={"Cookie": f"orderhub_session={alice}"})
summary = [o for o in listed["orders"] if o["id"] == held][0]
eq(summary["forwarding"], "awaiting_acceptance", "the board sees it waiting")
check(summary["accept_deadline"] is not None and 0 < summary["accept_seconds_left"] <= 60,
      f"the board gets the deadline for a countdown: {summary}")
eq(psql(hub_url, f"SELECT accept_deadline - created_at BETWEEN interval '59 seconds' AND interval '61 seconds' "
                 f"FROM hub.forward_jobs WHERE order_id = '{held}'"), "t", "deadline: the branch's 1 minute")
time.sleep(1.5)  # the forwarder's claims run meanwhile (it was woken by the insert)
eq(at_pos("plat:A-1"), 0, "a held order is not sent")
status, answer = call(f"{held}/accept", csrf=False)
eq(status, 403, "accept without the CSRF token: refused")
status, answer = call(f"{held}/accept", who=(bob, bob_csrf))
eq(status, 404, "accept by another branch's user: 404")
eq(state(held), "awaiting_acceptance", "refused accepts changed nothing")
status, answer = call(f"{held}/accept")
eq((status, answer.get("state")), (200, "pending"), f"alice accepts: {answer}")
eq(wait_state(held, {"delivered"}), "delivered", "an accepted order is delivered")
eq(psql(pos_url, "SELECT status FROM pos.orders WHERE partner_reference = 'plat:A-1'"), "ACCEPTED",
   "the POS stored it as ACCEPTED")
eq(log_rows(held, "merchant_accepted"), f"operator|{alice_id}|", "the accept is logged with its user")
status, answer = call(f"{held}/accept")
eq((status, code(answer)), (409, "not_waiting"), "a second accept: 409")
eq(call(f"{held}/reject", body={"reason": "too late"})[0], 409, "reject after accept: 409")

# ---- rejected: never sent, logged with the user ----
rejected = send("A-2")
for bad, what in ((None, "no body"), ("not json", "not JSON"), ({}, "no reason"), ({"reason": 5}, "not a string"),
                  ({"reason": "  "}, "blank"), ({"reason": "x" * 201}, "too long"),
                  ({"reason": "bad\u0001char"}, "a control character")):
    status, answer = call(f"{rejected}/reject", body=bad)
    check(status == 422 and code(answer) == "invalid_reason", f"reject with {what}: 422 JSON, got {status} {answer}")
eq(state(rejected), "awaiting_acceptance", "bad reasons changed nothing")
eq(log_rows(rejected, "merchant_rejected"), "", "bad reasons logged nothing")
eq(call(f"{rejected}/reject", body={"reason": "closed"}, csrf=False)[0], 403, "reject without CSRF: refused")
eq(call(f"{rejected}/reject", who=(bob, bob_csrf), body={"reason": "closed"})[0], 404,
   "reject by another branch's user: 404")
status, answer = call(f"{rejected}/reject", body={"reason": "Out of stock: fries"})
eq((status, answer.get("state")), (200, "merchant_rejected"), f"alice rejects: {answer}")
eq(log_rows(rejected, "merchant_rejected"), f"operator|{alice_id}|Out of stock: fries",
   "merchant_rejected: operator, the user, the reason")
eq(call(f"{rejected}/accept")[0], 409, "accept after reject: 409")
eq(call(f"{rejected}/resend")[0], 409, "a rejected order cannot be resent from the board")
check(run(HUB, "order", "resend", rejected, env=henv).returncode != 0, "nor with `order resend`")
time.sleep(1.5)
eq((state(rejected), at_pos("plat:A-2")), ("merchant_rejected", 0), "a rejected order is never sent")

# ---- time-out: never sent, logged once, a later accept is refused ----
fwd.stop()
late = send("A-3")
expire(late)
status, answer = call(f"{late}/accept")
eq((status, code(answer)), (409, "not_waiting"), "accept after the deadline (before the sweep): 409")
fwd = Service(HUB, "--role", "forwarder", env=henv)
eq(wait_state(late, {"timed_out"}), "timed_out", "the hub times the order out")
eq(log_rows(late, "time_out").split("|")[0], "hub", "time_out logged by the hub")
eq(call(f"{late}/accept")[0], 409, "accept after the time-out: 409")
time.sleep(1.5)
eq(at_pos("plat:A-3"), 0, "a timed-out order is never sent")

# ---- the hub restarts during the wait ----
waiting = send("A-4")
fwd.stop()
api.stop()
expire(waiting)
api = Service(HUB, "--role", "all", env=henv)
eq(wait_state(waiting, {"timed_out"}), "timed_out", "timed out by the restarted hub")
eq(psql(hub_url, f"SELECT count(*) FROM hub.order_status_log WHERE order_id = '{waiting}' AND status = 'time_out'"),
   "1", "one time_out row after the restart")
eq(at_pos("plat:A-4"), 0, "not sent after the restart")

# ---- two hubs sweep the same database: each order times out once ----
api.stop()
api = Service(HUB, "--role", "api", env=henv)
many = [send(f"T-{i}") for i in range(40)]
for hub_id in many:
    expire(hub_id)
hubs = [Service(HUB, "--role", "forwarder", env=henv) for _ in range(2)]
deadline = time.time() + 60
while time.time() < deadline and psql(hub_url, "SELECT count(*) FROM hub.forward_jobs j JOIN hub.orders o ON "
                                               "o.id = j.order_id WHERE o.external_id LIKE 'T-%' "
                                               "AND j.state = 'awaiting_acceptance'") != "0":
    time.sleep(0.2)
eq(psql(hub_url, "SELECT count(*) || '|' || count(DISTINCT l.order_id) FROM hub.order_status_log l JOIN hub.orders o "
                 "ON o.id = l.order_id WHERE o.external_id LIKE 'T-%' AND l.status = 'time_out'"), "40|40",
   "two hubs: exactly one time_out row per order")
eq(psql(pos_url, "SELECT count(*) FROM pos.orders WHERE partner_reference LIKE 'plat:T-%'"), "0",
   "none of them sent")

# ---- a platform cancellation during the wait ends it ----
cancelled = send("A-5")
status, _, _ = api.request("POST", webhook, {"event": "order_updated", "event_time": "2024-05-01 18:01:00",
                                             "branch_id": "MAN-1",
                                             "payload": {"order_id": "A-5", "status": "cancelled"}})
eq(status, 200, "the platform cancels")
eq(state(cancelled), "cancelled", "the wait ends: cancelled")
eq(call(f"{cancelled}/accept")[0], 409, "accept after the cancellation: 409")
expire(cancelled)
time.sleep(1.5)
eq((state(cancelled), at_pos("plat:A-5"), log_rows(cancelled, "time_out")), ("cancelled", 0, ""),
   "a cancelled order is never sent nor timed out")

# ---- `branch update` switches the mode ----
r = run(HUB, "branch", "update", "--id", "MAN-2", "--pending-accept", env=henv)
eq(r.returncode, 0, f"branch update: {r.stderr}")
switched = send("B-1", "MAN-2")
eq(wait_state(switched, {"delivered"}), "delivered", "after --pending-accept: sent at once")
eq(psql(pos_url, "SELECT status FROM pos.orders WHERE partner_reference = 'plat:B-1'"), "PENDING", "as PENDING")

for h in hubs:
    eq(h.stop(), 0, "forwarder exits 0")
eq(api.stop(), 0, "hub exits 0")
pos.stop()
finish()

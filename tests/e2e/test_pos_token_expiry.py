"""The reference POS's tokens expire (`orderpos serve --token-lifetime`), and the hub copes end to end: an order
is delivered with the stored token; once that token has expired the POS answers it 401, and the next order is
delivered after exactly one re-login through /api/login. Also: when the password checks are full the POS
answers a login 503 `busy` with a JSON body at once, instead of queueing without bound."""
import concurrent.futures
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
eq(run(POS, "user", "add", "--email", "hub@demo.test", "--password", "s3cret-pass", "--brand", "DEMO",
       env=penv).returncode, 0, "pos user add")
eq(run(HUB, "branch", "create", "--id", "DEMO-1", "--brand", "DEMO", env=henv).returncode, 0, "branch create")
partner = json.loads(run(HUB, "partner", "create", "--name", "Platform", "--json", env=henv).stdout)
webhook = "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1]

# A short lifetime, so that the test sees a token expire.
pos = Service(POS, "--token-lifetime", "3s", env=penv)
credentials = {"email": "hub@demo.test", "password": "s3cret-pass"}
status, _, body = pos.request("POST", "/api/login", credentials)
eq(status, 200, "POS login")
token = body["access_token"]
r = run(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{pos.port}", "--token", "-",
        "--email", "hub@demo.test", "--password", "-", env=henv, input=f"{token}\ns3cret-pass\n")
eq(r.returncode, 0, f"pos set: {r.stderr}")
hub = Service(HUB, env=henv)


def order(order_id):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "DEMO-1",
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-BURGER", "quantity": 1, "price": 24,
                                   "options": [{"id": "M-CHEESE", "price": 3, "quantity": 1}]}]}}


def send(order_id):
    status, _, answer = hub.request("POST", webhook, order(order_id))
    eq(status, 200, f"webhook {order_id} stored")
    return answer["order_id"]


def outcomes(hub_id, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if psql(hub_url, f"SELECT state FROM hub.forward_jobs WHERE order_id = '{hub_id}'") == "delivered":
            break
        time.sleep(0.1)
    return psql(hub_url, "SELECT string_agg(outcome, ',' ORDER BY id) FROM hub.pos_delivery_attempts "
                         f"WHERE order_id = '{hub_id}'")


def pos_answer_to(tok):
    return pos.request("POST", "/api/orders", {}, headers={"Authorization": f"Bearer {tok}"})[0]


first = send("T-1")
eq(outcomes(first), "delivered", "delivered with the stored token, no login")

# Wait (bounded) until the POS refuses the token: it has expired.
deadline = time.time() + 30
while time.time() < deadline and pos_answer_to(token) != 401:
    time.sleep(0.2)
eq(pos_answer_to(token), 401, "the expired token is refused with 401")

second = send("T-2")
eq(outcomes(second), "unauthorized,logged_in,delivered", "after expiry: 401, one re-login, delivered")
logins = [ln for ln in pos.lines if '"/api/login"' in ln]
eq(len(logins), 2, "two logins in the POS's log: the test's and the hub's one re-login")
hub.stop()
pos.stop()

# The password-check cap: one hash thread, one place; a burst of logins gets 503 busy for the rest, as JSON.
pos = Service(POS, "--hash-threads", "1", "--max-pending-logins", "1", env=penv)
with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
    answers = list(pool.map(lambda _: pos.request("POST", "/api/login", credentials), range(16)))
statuses = sorted(a[0] for a in answers)
check(set(statuses) <= {200, 503}, f"every login answered 200 or 503: {statuses}")
busy = [a for a in answers if a[0] == 503]
check(len(busy) >= 1 and 200 in statuses, f"some logins checked, the rest refused as busy: {statuses}")
check(all(isinstance(a[2], dict) and a[2].get("code") == "busy" for a in busy), "503 answers carry code busy")
check(all("retry-after" in a[1] for a in busy), "503 answers carry Retry-After")
pos.stop()
finish()

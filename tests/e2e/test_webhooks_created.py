"""The real orderhub answers every order_created row of product.md section 4's status table with the documented
body, records every request to a known key in the inbox, and recovers from a database outage without a restart."""
import copy
import json
from concurrent.futures import ThreadPoolExecutor

from harness import HUB, Service, check, create_database, eq, finish, hub_env, pg_ctl, psql, run

url = create_database()
env = hub_env(url)
eq(run(HUB, "migrate", env=env).returncode, 0, "migrate")
eq(run(HUB, "branch", "create", "--id", "riyadh-olaya-01", "--brand", "BR-A", env=env).returncode, 0, "branch create")


def partner(name):
    r = run(HUB, "partner", "create", "--name", name, "--json", env=env)
    eq(r.returncode, 0, f"partner create {name}: {r.stderr}")
    p = json.loads(r.stdout)
    p["path"] = "/webhooks/" + p["webhook_url"].rsplit("/webhooks/", 1)[1]
    return p


p1 = partner("Platform One")
p2 = partner("Platform Two")
gone = partner("Gone Platform")
rotated = partner("Rotated Platform")

ORDER = {
    "event": "order_created", "event_time": "2024-05-01 18:02:11", "branch_id": "riyadh-olaya-01",
    "payload": {
        "id": "ORD-1", "payment_method": "card", "order_type": "DELIVERY", "note": "ring twice",
        "subtotal": 41.5, "tax": 6.225, "discount": 5, "total": 42.725, "is_schedule": 0, "schedule_date": None,
        "car_data": None, "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
        "items": [{"id": "burger", "quantity": 2, "price": 18.25, "note": "",
                   "options": [{"id": "cheese", "price": 2.5, "quantity": 1}]}],
        "extra_field": {"kept": True},
    },
}


def order(**changes):
    o = copy.deepcopy(ORDER)
    for k, v in changes.items():
        if k in o:
            o[k] = v
        else:
            o["payload"][k] = v
    return o


def is_failure(body, with_order_id=True):
    ok = isinstance(body, dict) and body.get("status") == "failed" and isinstance(body.get("error"), dict)
    ok = ok and isinstance(body["error"].get("code"), str) and isinstance(body["error"].get("message"), str)
    ok = ok and isinstance(body["error"].get("details"), list)
    return ok and (body.get("order_id") == "" if with_order_id else "order_id" not in body)


svc = Service(HUB, "--role", "api", "--max-body-bytes", "65536", env=env)

# 200: stored, and an exact repeat answers the same id.
status, _, body = svc.request("POST", p1["path"], order())
eq(status, 200, "200 stored")
eq(set(body), {"order_id", "status"}, "200 body fields")
eq(body.get("status"), "success", "200 status")
first_id = body.get("order_id")
check(isinstance(first_id, str) and len(first_id) > 0, "200 has the hub order id")
status, _, body = svc.request("POST", p1["path"], order())
eq((status, body.get("order_id")), (200, first_id), "exact repeat: same id")
# Re-serialized JSON with another key order is still the same order.
reordered = json.dumps(dict(reversed(list(order().items()))))
eq(svc.request("POST", p1["path"], reordered)[2].get("order_id"), first_id, "re-serialized repeat: same id")
# Another platform may use the same order id.
status, _, body = svc.request("POST", p2["path"], order())
check(status == 200 and body.get("order_id") not in ("", first_id), "same platform id, other partner: new order")

# 409: the same payload.id with another payload.
status, _, body = svc.request("POST", p1["path"], order(total=50))
eq(status, 409, "409 conflict")
check(is_failure(body), f"409 body: {body}")

# 400: not a JSON object.
for label, raw in (("syntax", b'{"event": '), ("invalid UTF-8", b'{"event": "\xff\xfe"}'), ("array", b"[1,2]"),
                   ("duplicate keys", b'{"event":"order_created","event":"order_created"}'),
                   ("too deep", b"[" * 70 + b"]" * 70), ("number overflow", b'{"x": 1e400}'), ("empty", b"")):
    status, _, body = svc.request("POST", p1["path"], raw)
    eq(status, 400, f"400 for {label}")
    check(is_failure(body), f"400 body for {label}: {body}")

# 404: unknown, disabled and rotated-away keys.
status, _, body = svc.request("POST", "/webhooks/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", order())
eq(status, 404, "404 unknown key")
check(is_failure(body), "404 body")
eq(run(HUB, "partner", "disable", gone["id"], env=env).returncode, 0, "partner disable")
r = run(HUB, "partner", "rotate", rotated["id"], "--json", env=env)
eq(r.returncode, 0, "partner rotate")
new_path = "/webhooks/" + json.loads(r.stdout)["webhook_url"].rsplit("/webhooks/", 1)[1]
import time
time.sleep(2.5)  # the partner cache lives 2 s
eq(svc.request("POST", gone["path"], order(id="G-1"))[0], 404, "404 disabled partner")
eq(svc.request("POST", rotated["path"], order(id="R-1"))[0], 404, "404 old key after rotate")
eq(svc.request("POST", new_path, order(id="R-1"))[0], 200, "200 with the new key")

# 405: any other method, with Allow.
status, headers, body = svc.request("GET", p1["path"])
eq(status, 405, "405 GET")
eq(headers.get("allow"), "POST", "405 Allow header")
check(is_failure(body), "405 body")

# 413: larger than the limit.
status, _, body = svc.request("POST", p1["path"], b"{" + b" " * 70000 + b"}")
eq(status, 413, "413")
check(is_failure(body), "413 body")

# 422: every kind of rule, with JSON pointers.
cases = [
    ("unknown event", order(event="order_deleted"), "/event", "unknown_event"),
    ("missing field", {k: v for k, v in order().items() if k != "event_time"}, "/event_time", "validation_failed"),
    ("bad enum", order(order_type="DRIVE-THRU"), "/payload/order_type", "validation_failed"),
    ("schedule without date", order(is_schedule=1), "/payload/schedule_date", "validation_failed"),
    ("date without schedule", order(schedule_date="2024-05-01 20:00:00"), "/payload/schedule_date",
     "validation_failed"),
    ("bad colour", order(car_data={"color": "red", "plate_number": "1", "plate_letters": "A", "car_brand": "K"}),
     "/payload/car_data/color", "validation_failed"),
    ("bad phone", order(customer={"name": "S", "phone": "0500", "address": None}), "/payload/customer/phone",
     "validation_failed"),
    ("zero quantity", order(items=[{"id": "x", "quantity": 0, "price": 1, "options": []}]),
     "/payload/items/0/quantity", "validation_failed"),
    ("negative money", order(total=-1), "/payload/total", "validation_failed"),
    ("no items", order(items=[]), "/payload/items", "validation_failed"),
    ("bad timestamp", order(event_time="2024-02-30 10:00:00"), "/event_time", "validation_failed"),
    ("unknown branch", order(id="UB-1", branch_id="nowhere"), "/branch_id", "validation_failed"),
]
for label, body_in, path, code in cases:
    status, _, body = svc.request("POST", p1["path"], body_in)
    eq(status, 422, f"422 for {label}")
    check(is_failure(body), f"422 body for {label}: {body}")
    check(code == body.get("error", {}).get("code"), f"422 code for {label}: {body}")
    paths = [d.get("path") for d in body.get("error", {}).get("details", [])]
    check(path in paths, f"422 details for {label} name {path}: {paths}")
# An order_created with a schedule in both formats is accepted.
eq(svc.request("POST", p1["path"], order(id="S-1", is_schedule=1, schedule_date="2024-05-01T19:30:00+03:00"))[0],
   200, "scheduled, ISO with offset")
eq(svc.request("POST", p1["path"], order(id="S-2", is_schedule=1, schedule_date="2024-05-01 19:30:00"))[0], 200,
   "scheduled, space format")

# The inbox holds every request that reached a known key, failed ones included, with its raw body.
# 4 accepted + 1 conflict + 7 bad JSON + 1 with the rotated key + 12 refused + 2 scheduled; not the requests to
# unknown, disabled or rotated-away keys, nor the 405 and 413 that never reached a key.
eq(psql(url, "SELECT count(*) FROM hub.inbox"), "27", "inbox rows")
eq(psql(url, "SELECT count(*) FROM hub.inbox WHERE http_status = 400"), "7", "inbox keeps the 400s")
eq(psql(url, "SELECT count(*) FROM hub.inbox WHERE http_status = 422"), "12", "inbox keeps the 422s")
eq(psql(url, "SELECT count(*) FROM hub.inbox WHERE http_status = 409 AND error_code = 'order_id_conflict'"), "1",
   "inbox keeps the 409")
check("extra_field" in psql(url, "SELECT convert_from(body, 'UTF8') FROM hub.inbox WHERE outcome = 'stored' LIMIT 1"),
      "unknown extra fields are kept in the raw body")
eq(psql(url, "SELECT count(*) FROM hub.orders"), "5", "orders stored: ORD-1 twice (two partners), R-1, S-1, S-2")

# 503: the store goes away; nothing is half-stored; it recovers without a restart.
pg_ctl("stop")
try:
    status, headers, body = svc.request("POST", p1["path"], order(id="OUT-1"))
    eq(status, 503, "503 while the database is down")
    check(is_failure(body), f"503 body: {body}")
    check(headers.get("retry-after", "").isdigit(), "503 has Retry-After")
    eq(svc.request("GET", "/readyz")[0], 503, "/readyz reflects the outage")
    eq(svc.request("GET", "/healthz")[0], 200, "/healthz stays up")
finally:
    pg_ctl("start")
for attempt in range(20):
    status, _, body = svc.request("POST", p1["path"], order(id="OUT-1"))
    if status == 200:
        break
    time.sleep(0.5)
eq(status, 200, "the platform's retry succeeds after the outage")
eq(psql(url, "SELECT count(*) FROM hub.orders WHERE external_id = 'OUT-1'"), "1", "one order after the outage")
# /readyz reads the database at most once a second: its 503 of the outage may still be the answer for a moment.
for attempt in range(20):
    if svc.request("GET", "/readyz")[0] == 200:
        break
    time.sleep(0.25)
eq(svc.request("GET", "/readyz")[0], 200, "/readyz back")

# Header values are bytes (HTTP allows any above 0x7F): a Latin-1 User-Agent, or one cut inside a character where the
# inbox keeps 256 bytes, is stored readable, and the order with it (it was a 500 on every retry).
status, _, body = svc.request("POST", p1["path"], order(id="HDR-1"), headers={"User-Agent": "Caf\xe9 Platform/1.0"})
eq(status, 200, "an order whose User-Agent is Latin-1 is stored")
status, _, body = svc.request("POST", p1["path"], order(id="HDR-2"),
                              headers={"User-Agent": ("x" + "é" * 200).encode().decode("latin-1")})
eq(status, 200, "an order whose User-Agent is cut inside a character is stored")
agents = psql(url, "SELECT string_agg(headers->>'user-agent', '|' ORDER BY id) FROM hub.inbox "
                   "WHERE external_id IN ('HDR-1', 'HDR-2')").split("|")
eq(agents[0], "Caf\ufffd Platform/1.0", "a byte that is not UTF-8 is kept as U+FFFD")
eq(agents[1], "x" + "é" * 127, "256 bytes at most, cut between characters")

eq(svc.stop(), 0, "SIGTERM exit 0")
log = svc.log()
for p in (p1, p2, rotated):
    check(p["path"].rsplit("/", 1)[1] not in log, "webhook keys never reach the log")

# --ingest-batches: group commits at once. Each holds a database worker and one worker stays free for lookups, so
# a count that leaves none is refused before anything starts. With two allowed at once, a concurrent wave is stored
# whole (how two batches share waiting jobs is tests/pg/batcher_test.cpp's).
r = run(HUB, "serve", "--role", "api", "--listen", "127.0.0.1:0", "--db-workers", "3", "--ingest-batches", "3",
        env=env, timeout=30)
eq(r.returncode, 1, f"no worker left for lookups: exit 1 ({r.stderr})")
check("--ingest-batches (3) must be below --db-workers (3)" in r.stderr, f"says why: {r.stderr}")
eq(run(HUB, "serve", "--listen", "127.0.0.1:0", "--ingest-batches", "0", env=env, timeout=30).returncode, 1,
   "--ingest-batches 0: exit 1")
eq(run(HUB, "branch", "create", "--id", "wave-01", "--brand", "BR-A", env=env).returncode, 0, "branch wave-01")
svc = Service(HUB, "--role", "api", "--db-workers", "4", "--ingest-batches", "2", env=env)
with ThreadPoolExecutor(max_workers=16) as pool:
    wave = list(pool.map(lambda i: svc.request("POST", p1["path"], order(id=f"WAVE-{i}", branch_id="wave-01")), range(64)))
eq(sorted({s for s, _, _ in wave}), [200], "two group commits at once: every order answered 200")
eq(len({b.get("order_id") for _, _, b in wave}), 64, "64 orders, 64 ids")
eq(psql(url, "SELECT count(*) FROM hub.orders WHERE external_id LIKE 'WAVE-%'"), "64", "64 orders stored")
eq(svc.stop(), 0, "SIGTERM exit 0 (two batches)")

# --ingest-gather-ms: how long a webhook that finds the group commit idle waits for company (0 to 100).
r = run(HUB, "serve", "--listen", "127.0.0.1:0", "--ingest-gather-ms", "101", env=env, timeout=30)
eq(r.returncode, 1, f"--ingest-gather-ms 101: exit 1 ({r.stderr})")
check("--ingest-gather-ms" in r.stderr, f"names the setting: {r.stderr}")
svc = Service(HUB, "--role", "api", "--ingest-gather-ms", "50", env=env)
with ThreadPoolExecutor(max_workers=16) as pool:
    wave = list(pool.map(lambda i: svc.request("POST", p1["path"], order(id=f"GATHER-{i}", branch_id="wave-01")),
                         range(32)))
eq(sorted({s for s, _, _ in wave}), [200], "gathering: every order answered 200")
eq(psql(url, "SELECT count(*) FROM hub.orders WHERE external_id LIKE 'GATHER-%'"), "32", "32 orders stored")
eq(svc.stop(), 0, "SIGTERM exit 0 (gathering)")

# CLI: exit codes and no keys in listings.
listing = run(HUB, "partner", "list", "--json", env=env)
eq(listing.returncode, 0, "partner list")
check(p1["path"].rsplit("/", 1)[1] not in listing.stdout, "partner list shows no key")
eq(len(json.loads(listing.stdout)), 4, "partner list --json lists all")
eq(run(HUB, "partner", "rotate", "no-such-id", env=env).returncode, 1, "rotate unknown partner: 1")
eq(run(HUB, "partner", "create", env=env).returncode, 2, "partner create without --name: 2")
eq(run(HUB, "partner", "create", "--name", "Platform One", env=env).returncode, 1, "duplicate label: 1")
eq(run(HUB, "branch", "create", "--id", "riyadh-olaya-01", "--brand", "BR-A", env=env).returncode, 1,
   "duplicate branch: 1")
shown = run(HUB, "order", "show", first_id, "--json", env=env)
eq(shown.returncode, 0, "order show")
o = json.loads(shown.stdout)
eq((o["external_id"], o["total"], o["items"][0]["options"][0]["id"]), ("ORD-1", "42.725", "cheese"), "order show body")
eq(o["forwarding"]["state"], "pending", "a forwarding job exists")
eq(run(HUB, "order", "show", "nope", env=env).returncode, 1, "order show unknown: 1")
listed = json.loads(run(HUB, "order", "list", "--branch", "riyadh-olaya-01", "--json", env=env).stdout)
eq(len(listed), 8, "order list --branch")

finish()

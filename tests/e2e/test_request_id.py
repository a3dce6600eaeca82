"""One request id end to end: the platform's X-Request-Id (or the trace-id of its W3C traceparent) is the id of
the webhook's request line, the inbox row, the order (`orderhub order show`), the forwarder's log lines, every
row of hub.pos_delivery_attempts, and reaches the POS as X-Request-Id (its request line for /api/orders) with a
traceparent of the same trace. An unusable X-Request-Id (too long, control characters) is replaced by a new id."""
import hashlib
import json
import os
import re
import time

from harness import HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env, psql, run

hub_url = create_database()
pos_url = create_database()
henv = hub_env(hub_url)
penv = {"ORDERPOS_DATABASE_URL": pos_url}


def cli(binary, *args, env, input=None):
    r = run(binary, *args, env=env, input=input)
    eq(r.returncode, 0, f"{' '.join(args[:2])}: {r.stderr.strip()}")
    return r


cli(HUB, "migrate", env=henv)
cli(POS, "migrate", env=penv)
cli(POS, "menu", "load", os.path.join(SOURCE, "deploy", "demo-menu.json"), env=penv)
cli(POS, "user", "add", "--email", "hub@demo.test", "--password", "s3cret-pass", "--brand", "DEMO", env=penv)
cli(HUB, "branch", "create", "--id", "DEMO-1", "--brand", "DEMO", env=henv)
partner = json.loads(cli(HUB, "partner", "create", "--name", "Platform", "--json", env=henv).stdout)
hook = "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1]

pos = Service(POS, env=penv)
# The hub logs in itself (credentials, not a token): the login call carries the request id too.
cli(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{pos.port}", "--email", "hub@demo.test",
    "--password", "-", env=henv, input="s3cret-pass\n")
hub = Service(HUB, env=henv)


def order(order_id):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "DEMO-1",
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-BURGER", "quantity": 1, "price": 24, "options": []}]}}


def send(external_id, headers, expected=200):
    status, answer_headers, answer = hub.request("POST", hook, order(external_id), headers=headers)
    eq(status, expected, f"webhook {external_id} answered {expected}")
    return answer_headers.get("x-request-id"), answer.get("order_id") if isinstance(answer, dict) else None


def delivered(hub_id):
    deadline = time.time() + 30
    while time.time() < deadline:
        if psql(hub_url, f"SELECT state FROM hub.forward_jobs WHERE order_id = '{hub_id}'") == "delivered":
            return True
        time.sleep(0.1)
    return False


def logs(svc):
    out = []
    for line in list(svc.lines):
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def follow(rid, hub_id, what):
    """Everything that must carry `rid` for the order `hub_id`."""
    check(delivered(hub_id), f"{what}: the order was delivered")
    eq(psql(hub_url, f"SELECT request_id FROM hub.inbox WHERE order_id = '{hub_id}' ORDER BY id LIMIT 1"), rid,
       f"{what}: the inbox row")
    eq(psql(hub_url, f"SELECT request_id FROM hub.orders WHERE id = '{hub_id}'"), rid, f"{what}: the order row")
    attempts = psql(hub_url, "SELECT string_agg(DISTINCT coalesce(request_id, 'NULL'), ',') "
                             f"FROM hub.pos_delivery_attempts WHERE order_id = '{hub_id}'")
    eq(attempts, rid, f"{what}: every delivery attempt")
    shown = json.loads(cli(HUB, "order", "show", hub_id, "--json", env=henv).stdout)
    eq(shown.get("request_id"), rid, f"{what}: `order show`")
    deadline = time.time() + 10
    while time.time() < deadline and not [l for l in logs(hub) if l.get("msg") == "forward"
                                          and l.get("order_id") == hub_id]:
        time.sleep(0.05)
    hub_lines = logs(hub)
    for msg in ("request", "forward attempt", "forward"):
        mine = [l for l in hub_lines if l.get("msg") == msg and l.get("order_id") == hub_id]
        check(mine and all(l.get("request_id") == rid for l in mine),
              f"{what}: the hub's '{msg}' lines of the order carry the id ({mine})")
    pos_lines = [l for l in logs(pos) if l.get("msg") == "request" and l.get("route") == "/api/orders"
                 and l.get("request_id") == rid]
    eq(len(pos_lines), 1, f"{what}: the POS's request line for /api/orders carries the id")


# The platform's X-Request-Id.
rid, hub_id = send("R-1", {"X-Request-Id": "plat-req-123"})
eq(rid, "plat-req-123", "the answer echoes the platform's X-Request-Id")
follow("plat-req-123", hub_id, "X-Request-Id")
login = [l for l in logs(pos) if l.get("route") == "/api/login" and l.get("request_id") == "plat-req-123"]
eq(len(login), 1, "the hub's login to the POS, made for that order, carries its id")

# A W3C traceparent: its trace-id is the request id.
trace = "4bf92f3577b34da6a3ce929d0e0e4736"
rid, hub_id = send("R-2", {"traceparent": f"00-{trace}-00f067aa0ba902b7-01"})
eq(rid, trace, "the traceparent's trace-id is the request id")
follow(trace, hub_id, "traceparent")

# Both: X-Request-Id is the id.
rid, _ = send("R-3", {"X-Request-Id": "plat-req-456", "traceparent": f"00-{trace}-00f067aa0ba902b7-01"})
eq(rid, "plat-req-456", "X-Request-Id wins over a traceparent")

# Unusable ids are replaced by a generated one (16 hex), and the order carries that one.
for label, headers in (("too long", {"X-Request-Id": "x" * 129}),
                       ("a tab", {"X-Request-Id": "plat\treq"}),
                       ("a byte above 0x7e", {"X-Request-Id": "plat-r\xe9q"}),
                       ("a space", {"X-Request-Id": "plat req"}),
                       ("a bad traceparent", {"traceparent": "00-" + "0" * 32 + "-00f067aa0ba902b7-01"}),
                       ("a short traceparent", {"traceparent": f"00-{trace}-00f067aa0ba902b7"}),
                       ("uppercase traceparent", {"traceparent": f"00-{trace.upper()}-00f067aa0ba902b7-01"})):
    rid, hub_id = send("R-" + label, headers)
    check(rid is not None and re.fullmatch(r"[0-9a-f]{16}", rid), f"{label}: a generated id instead ({rid!r})")
    eq(psql(hub_url, f"SELECT request_id FROM hub.orders WHERE id = '{hub_id}'"), rid, f"{label}: the order's id")
# A control character HTTP itself forbids: the request is refused (400), under a generated id too.
rid, _ = send("R-ctl", {"X-Request-Id": "plat\x01req"}, expected=400)
check(rid is not None and re.fullmatch(r"[0-9a-f]{16}", rid), f"a control character: a generated id ({rid!r})")
rid, _ = send("R-128", {"X-Request-Id": "y" * 128})
eq(rid, "y" * 128, "an X-Request-Id of 128 bytes is kept")

# The POS received a traceparent of the same trace with each call for that order: the trace-id of an id that is
# not one is the first 128 bits of its SHA-256 (docs/webhooks.md), that of a traceparent's trace-id itself.
for rid, trace_id in (("plat-req-123", hashlib.sha256(b"plat-req-123").hexdigest()[:32]), (trace, trace)):
    mine = [l for l in logs(pos) if l.get("msg") == "request" and l.get("request_id") == rid]
    check(mine and all(l.get("trace_id") == trace_id for l in mine),
          f"the POS's lines for {rid} name the trace {trace_id} ({mine})")

hub.stop()
pos.stop()
finish()

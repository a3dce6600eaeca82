"""A log reader that stalls never stalls the service. Both binaries write their lines to stderr; when whatever
reads it (a pipe to a log shipper, journald, a terminal on hold) stops reading, the pipe fills after a few hundred
lines. The services must keep answering every request and storing every order: lines go through a bounded buffer
written by a thread of its own, and what does not fit is counted and dropped, never waited for. When the reader
comes back, the lines it missed are summed up in one `log lines dropped` line (the unit test of common::log checks
the count on a small buffer)."""
import http.client
import json

from harness import HUB, POS, Service, check, create_database, demo_hub, eq, finish, psql, run
from metrics_text import parse, value

REQUESTS = 3000  # about 600 KB of access-log lines: nine times what a Linux pipe holds


def hammer(svc, path, body=None, headers=None):
    """REQUESTS requests on one keep-alive connection, each allowed 10 s: how many were answered 200, and what
    came instead of the first that was not."""
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=10)
    statuses = []
    try:
        for i in range(REQUESTS):
            conn.request("POST" if body else "GET", path, body=body(i) if body else None, headers=headers or {})
            r = conn.getresponse()
            r.read()
            statuses.append(r.status)
    except OSError as e:  # a time-out: the service stopped answering
        statuses.append(f"no answer after {len(statuses)} requests: {e}")
    conn.close()
    answered = sum(s == 200 for s in statuses)
    return answered, next((s for s in statuses if s != 200), None)


hub_url, henv, key = demo_hub()
hook = "/webhooks/" + key


def order(i):
    return json.dumps({"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "DEMO-1",
                       "payload": {"id": f"LOG-{i}", "payment_method": "card", "order_type": "DELIVERY", "note": "",
                                   "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                                   "schedule_date": None, "car_data": None,
                                   "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                                   "items": [{"id": "P-BURGER", "quantity": 1, "price": 24, "options": []}]}}).encode()


hub = Service(HUB, "--role", "api", "--rate-limit-per-second", "100000", "--rate-limit-burst", "100000", env=henv,
              read_log=False)
statuses = hammer(hub, "/healthz")
eq(statuses, (REQUESTS, None), "orderhub: every /healthz answered while nobody reads its log")
statuses = hammer(hub, hook, body=order, headers={"Content-Type": "application/json"})
eq(statuses, (REQUESTS, None), "orderhub: every order answered while nobody reads its log")
eq(psql(hub_url, "SELECT count(*) FROM hub.orders WHERE external_id LIKE 'LOG-%'"), str(REQUESTS),
   "orderhub: every order stored")
hub.read_log_now()
# 6,000 lines fit the buffer (8 MiB): none was dropped, all are written once the reader is back.
eq(value(parse(hub.request("GET", "/metrics")[2])[1], "orderhub_log_lines_dropped_total"), 0,
   "orderhub: no line dropped")
eq(hub.stop(), 0, "orderhub stops on SIGTERM")
requests = [json.loads(ln) for ln in hub.lines if '"msg":"request"' in ln]
eq(len(requests), 2 * REQUESTS + 1, "orderhub: every request's line is written once the reader is back")
check("log lines dropped" not in hub.log(), "orderhub: no drop reported")
check('"msg":"stopped"' in hub.log(), "orderhub: its last line is written before it exits")

pos_url = create_database()
penv = {"ORDERPOS_DATABASE_URL": pos_url}
eq(run(POS, "migrate", env=penv).returncode, 0, "orderpos migrate")
pos = Service(POS, env=penv, read_log=False)
statuses = hammer(pos, "/healthz")
eq(statuses, (REQUESTS, None), "orderpos: every /healthz answered while nobody reads its log")
pos.read_log_now()
eq(value(parse(pos.request("GET", "/metrics")[2])[1], "orderpos_log_lines_dropped_total"), 0,
   "orderpos: no line dropped")
eq(pos.stop(), 0, "orderpos stops on SIGTERM")
check('"msg":"stopped"' in pos.log(), "orderpos: its last line is written before it exits")
finish()

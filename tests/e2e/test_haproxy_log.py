"""HAProxy with the shipped configuration (deploy/haproxy/haproxy.cfg, only its addresses changed) in front of a
real hub: a webhook through it is logged (method, path, status) and its key is not, nor the key of a request to
an unknown key: a webhook's path is its secret (`/webhooks/<key>`)."""
import http.client
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reliability"))
from lib import free_port, start_haproxy  # noqa: E402

from harness import HUB, Service, check, create_database, eq, finish, hub_env, run  # noqa: E402

url = create_database()
env = hub_env(url)
eq(run(HUB, "migrate", env=env).returncode, 0, "migrate")
eq(run(HUB, "branch", "create", "--id", "B-1", "--brand", "BR", env=env).returncode, 0, "branch create")
r = run(HUB, "partner", "create", "--name", "P", "--json", env=env)
eq(r.returncode, 0, f"partner create: {r.stderr}")
key = json.loads(r.stdout)["webhook_url"].rsplit("/webhooks/", 1)[1]
unknown_key = os.urandom(24).hex()
hub = Service(HUB, env=env)
front = free_port()
proxy = start_haproxy(tempfile.mkdtemp(prefix="e2e-haproxy-"), front, [hub.port])

body = {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "B-1",
        "payload": {"id": "H-1", "payment_method": "card", "order_type": "DELIVERY", "note": "",
                    "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                    "schedule_date": None, "car_data": None,
                    "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                    "items": [{"id": "P-1", "quantity": 1, "price": 24, "options": []}]}}


def post(path):
    conn = http.client.HTTPConnection("127.0.0.1", front, timeout=30)
    conn.request("POST", path, body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    status = conn.getresponse().status
    conn.close()
    return status


eq(post(f"/webhooks/{key}"), 200, "webhook through HAProxy stored")
eq(post(f"/webhooks/{unknown_key}?x=1"), 404, "unknown key through HAProxy: 404")

# HAProxy writes a request's line when the request ends: wait for both, then stop it (by PID).
text = ""
deadline = time.time() + 10
while time.time() < deadline:
    with open(proxy.log_path) as f:
        text = f.read()
    if text.count("POST /webhooks/") >= 2:
        break
    time.sleep(0.1)
proxy.stop()
hub.stop()
with open(proxy.log_path) as f:
    text = f.read()
lines = [ln for ln in text.splitlines() if "POST /webhooks/" in ln]
eq(len(lines), 2, f"both webhook requests are logged: {text!r}")
check(any(" 200 " in ln for ln in lines) and any(" 404 " in ln for ln in lines),
      f"the log lines carry the statuses: {lines!r}")
check(all('"POST /webhooks/- HTTP/1.1"' in ln for ln in lines), f"the path is logged with the key left out: {lines!r}")
check(key not in text, "the partner's webhook key is not in HAProxy's log")
check(unknown_key not in text and "x=1" not in text, "an unknown key and the query string are not in the log")
finish()

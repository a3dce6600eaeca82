"""The real orderhub answers every order_updated row of the status table, keeps the status log for auditors, and
replays a refused request after the operator fixed its cause."""
import json

from harness import HUB, Service, check, create_database, eq, finish, hub_env, psql, run

url = create_database()
env = hub_env(url)
eq(run(HUB, "migrate", env=env).returncode, 0, "migrate")
for branch in ("B1", "B2"):
    eq(run(HUB, "branch", "create", "--id", branch, "--brand", "BR", env=env).returncode, 0, f"branch {branch}")


def partner(name):
    p = json.loads(run(HUB, "partner", "create", "--name", name, "--json", env=env).stdout)
    return "/webhooks/" + p["webhook_url"].rsplit("/webhooks/", 1)[1]


p1, p2 = partner("One"), partner("Two")


def created(order_id, branch="B1"):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": branch,
            "payload": {"id": order_id, "payment_method": "cash", "order_type": "PICK-UP", "subtotal": 10,
                        "tax": 1, "discount": 0, "total": 11, "is_schedule": 0, "schedule_date": None,
                        "car_data": None, "customer": None,
                        "items": [{"id": "i", "quantity": 1, "price": 10, "options": []}]}}


def updated(order_id, status, time, branch="B1"):
    return {"event": "order_updated", "event_time": time, "branch_id": branch,
            "payload": {"order_id": order_id, "status": status}}


def failure(body):
    """An order_updated failure: no order_id member."""
    return (isinstance(body, dict) and body.get("status") == "failed" and "order_id" not in body
            and isinstance(body.get("error", {}).get("details"), list))


def log_rows(order_id):
    return int(psql(url, f"SELECT count(*) FROM hub.order_status_log WHERE order_id = '{order_id}'"))


svc = Service(HUB, "--role", "api", env=env)

# An update that overtakes its order_created: 404 order_not_found; the platform's retry succeeds later.
status, _, body = svc.request("POST", p1, updated("ORD-1", "assigned", "2024-05-01 18:05:00"))
eq(status, 404, "update before create: 404")
check(failure(body) and body["error"]["code"] == "order_not_found", f"404 body: {body}")
status, _, body = svc.request("POST", p1, created("ORD-1"))
eq(status, 200, "order_created")
hub_id = body["order_id"]
status, _, body = svc.request("POST", p1, updated("ORD-1", "assigned", "2024-05-01 18:05:00"))
eq((status, body), (200, {"status": "success"}), "the retried update succeeds")

# The hub order id names the order too.
eq(svc.request("POST", p1, updated(hub_id, "at_pick_up", "2024-05-01 18:10:00"))[:3:2],
   (200, {"status": "success"}), "update by hub order id")

# Exact retry: 200, no new row.
before = log_rows(hub_id)
eq(svc.request("POST", p1, updated("ORD-1", "at_pick_up", "2024-05-01 18:10:00"))[0], 200, "exact retry: 200")
eq(log_rows(hub_id), before, "exact retry adds no row")

# Another partner's order: 404; another branch: 422.
status, _, body = svc.request("POST", p2, updated("ORD-1", "on_the_way", "2024-05-01 18:15:00"))
eq(status, 404, "other partner: 404")
check(failure(body), "other partner: body")
status, _, body = svc.request("POST", p1, updated("ORD-1", "on_the_way", "2024-05-01 18:15:00", branch="B2"))
eq(status, 422, "branch differs: 422")
check(failure(body) and "/branch_id" in [d["path"] for d in body["error"]["details"]], f"branch 422 body: {body}")

# Validation, with JSON pointers and no order_id.
for label, body_in, path in (
        ("bad status", updated("ORD-1", "lost", "2024-05-01 18:15:00"), "/payload/status"),
        ("missing order id", {"event": "order_updated", "event_time": "2024-05-01 18:15:00", "branch_id": "B1",
                              "payload": {"status": "assigned"}}, "/payload/order_id"),
        ("bad time", updated("ORD-1", "assigned", "yesterday"), "/event_time")):
    status, _, body = svc.request("POST", p1, body_in)
    eq(status, 422, f"422 for {label}")
    check(failure(body) and path in [d["path"] for d in body["error"]["details"]], f"422 body for {label}: {body}")

# Out of order, then final.
eq(svc.request("POST", p1, updated("ORD-1", "delivered", "2024-05-01 18:40:00"))[0], 200, "delivered")
eq(svc.request("POST", p1, updated("ORD-1", "on_the_way", "2024-05-01 18:30:00"))[0], 200, "late on_the_way: 200")
eq(svc.request("POST", p1, updated("ORD-1", "cancelled", "2024-05-01 18:50:00"))[0], 200, "after final: 200")
shown = json.loads(run(HUB, "order", "show", hub_id, "--json", env=env).stdout)
eq(shown["delivery_status"], "delivered", "delivered is final")

audit = run(HUB, "audit", hub_id, "--json", env=env)
eq(audit.returncode, 0, "audit")
rows = json.loads(audit.stdout)
eq([(r["status"], r["applied"]) for r in rows],
   [("received", True), ("assigned", True), ("at_pick_up", True), ("on_the_way", False), ("delivered", True),
    ("cancelled", False)], "audit: the whole log, oldest first, with what was applied")
check(all(r["source"] == "platform" for r in rows), "audit: sources")
eq(run(HUB, "audit", "no-such-order", env=env).returncode, 1, "audit of an unknown order: exit 1")
check("on_the_way" in run(HUB, "audit", hub_id, env=env).stdout, "audit text output")

# Replay: an order refused for an unknown branch is stored once the operator creates the branch.
status, _, body = svc.request("POST", p1, created("ORD-2", branch="NEW-BRANCH"))
eq(status, 422, "unknown branch: 422")
failed = json.loads(run(HUB, "events", "list", "--failed", "--json", env=env).stdout)
event = next(e for e in failed if e["external_id"] == "ORD-2")
eq((event["http_status"], event["error_code"]), (422, "unknown_branch"), "events list --failed shows it")
check(all(e["http_status"] >= 300 for e in failed), "--failed lists only failures")
r = run(HUB, "events", "replay", str(event["id"]), "--json", env=env)
eq(r.returncode, 1, "replay before the fix still fails: exit 1")
eq(json.loads(r.stdout)["http_status"], 422, "replay before the fix: 422")
eq(run(HUB, "branch", "create", "--id", "NEW-BRANCH", "--brand", "BR", env=env).returncode, 0, "operator fix")
r = run(HUB, "events", "replay", str(event["id"]), "--json", env=env)
eq(r.returncode, 0, f"replay after the fix: {r.stdout} {r.stderr}")
answer = json.loads(r.stdout)
eq(answer["http_status"], 200, "replay answers 200")
new_id = answer["response"]["order_id"]
eq(psql(url, f"SELECT external_id FROM hub.orders WHERE id = '{new_id}'"), "ORD-2", "the order is stored")
eq(psql(url, f"SELECT count(*) FROM hub.inbox WHERE replay_of = {event['id']}"), "2", "replays are in the inbox")
# The platform's own retry now lands on the same order.
eq(svc.request("POST", p1, created("ORD-2", branch="NEW-BRANCH"))[2].get("order_id"), new_id,
   "a later retry gets the replayed order's id")
eq(run(HUB, "events", "replay", "999999", env=env).returncode, 1, "replay of an unknown event: exit 1")
eq(run(HUB, "events", "replay", "abc", env=env).returncode, 2, "replay of a bad id: exit 2")

eq(svc.stop(), 0, "SIGTERM exit 0")
finish()

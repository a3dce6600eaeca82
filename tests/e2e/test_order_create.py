"""`orderhub order create` and POST /api/admin/v1/orders (product.md sections 3 and 9, issue 22 point 4) with the
real orderhub, the real orderpos and PostgreSQL: an order from --item and one from --file reach the POS; --test is
marked in order list, order show, the admin API and the dashboard, and is not counted as a sale in /metrics;
--wait prints the POS's order_id (or its rejection) and times out with a clear error; a bad file or body is refused
and stores nothing; the admin API needs a write token and records the token's name as actor."""
import json
import os
import tempfile
import time
import warnings

import jsonschema
import yaml

from harness import (HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env, psql, run)
from metrics_text import parse

hub_url = create_database()
pos_url = create_database()
henv = hub_env(hub_url)
penv = {"ORDERPOS_DATABASE_URL": pos_url}
tmp = tempfile.mkdtemp(prefix="order-create-")

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
status, _, body = pos.request("POST", "/api/login", {"email": "hub@demo.test", "password": "s3cret-pass"})
eq(status, 200, "POS login")
r = run(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{pos.port}", "--token",
        body["access_token"], env=henv)
eq(r.returncode, 0, f"pos set: {r.stderr}")

hub = Service(HUB, env=henv)
db_user = psql(hub_url, "SELECT current_user")


def create(*args):
    return run(HUB, "order", "create", "--branch", "DEMO-1", *args, "--json", env=henv)


def counts():
    return psql(hub_url, "SELECT (SELECT count(*) FROM hub.orders) || '/' || (SELECT count(*) FROM hub.inbox) || '/' "
                         "|| (SELECT count(*) FROM hub.order_status_log) || '/' || "
                         "(SELECT count(*) FROM hub.admin_changes)")


def pos_order(ref):
    """The POS's stored order of partner_reference `ref`: id|total|note|product ids."""
    return psql(pos_url, "SELECT o.id || '|' || o.total || '|' || coalesce(o.note, '') || '|' || "
                         "string_agg(p.product_id, ',' ORDER BY p.line_no) FROM pos.orders o "
                         f"JOIN pos.order_products p ON p.order_id = o.id WHERE o.partner_reference = '{ref}' "
                         "GROUP BY o.id")


def wait_delivered(hub_id):
    for _ in range(150):
        state = psql(hub_url, f"SELECT state FROM hub.forward_jobs WHERE order_id = '{hub_id}'")
        if state not in ("pending", "in_flight"):
            return state
        time.sleep(0.2)
    return state


def sales():
    """orderhub_webhook_requests_total of created orders (every status): the hub's count of orders received."""
    _, samples = parse(hub.request("GET", "/metrics")[2])
    return sum(v for (name, labels), v in samples.items()
               if name == "orderhub_webhook_requests_total" and ("outcome", "created") in labels)


# A platform order first: the sales counter moves for a real order (so that it not moving below means something).
sales_before = sales()
platform_order = {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "DEMO-1",
                  "payload": {"id": "PLAT-1", "payment_method": "card", "order_type": "DELIVERY", "note": "",
                              "subtotal": 24, "tax": 0, "discount": 0, "total": 24, "is_schedule": 0,
                              "schedule_date": None, "car_data": None, "customer": None,
                              "items": [{"id": "P-BURGER", "quantity": 1, "price": 24, "options": []}]}}
eq(hub.request("POST", webhook, platform_order)[0], 200, "a platform order is stored")
sales_after_platform = sales()
eq(sales_after_platform, sales_before + 1, "a platform order is counted as a sale")

# --item: a minimal order of those products, one each, delivered to the POS.
r = create("--item", "P-BURGER", "--item", "P-FRIES")
eq(r.returncode, 0, f"order create --item: {r.stderr}")
made = json.loads(r.stdout)
item_id, item_ext = made["order_id"], made["external_id"]
check(item_ext.startswith("op-"), "a built order gets an op- payload id")
eq(made["test"], False, "not a test order")
eq(wait_delivered(item_id), "delivered", "the --item order is delivered")
at_pos = pos_order(f"operator:{item_ext}").split("|")
eq(at_pos[1:], ["0.000", "Pushed by an operator", "P-BURGER,P-FRIES"], "the POS stored the --item order")
log = psql(hub_url, f"SELECT status || '|' || source || '|' || coalesce(actor, '') FROM hub.order_status_log "
                    f"WHERE order_id = '{item_id}' ORDER BY id LIMIT 1")
eq(log, f"received|operator|{db_user}", "logged with source operator and the CLI's database user as actor")
event = psql(hub_url, f"SELECT id || '|' || (headers->>'origin') FROM hub.inbox WHERE order_id = '{item_id}'")
eq(event.split("|")[1], "operator", "the inbox row says it came from an operator")
r = run(HUB, "events", "replay", event.split("|")[0], env=henv)
eq(r.returncode, 1, f"events replay refuses an operator order's inbox row: {r.stderr}")
audit = json.loads(run(HUB, "audit", item_id, "--json", env=henv).stdout)
eq(audit[0]["source"], "operator", "orderhub audit shows the operator source")

# --file: an order_created payload as a platform sends it.
payload = dict(platform_order["payload"], id="PHONE-7", note="called at 18:02", total=27.6, subtotal=24, tax=3.6,
               customer={"name": "Sara", "phone": "+966500000001", "address": None},
               items=[{"id": "P-BURGER", "quantity": 1, "price": 24,
                       "options": [{"id": "M-CHEESE", "price": 3, "quantity": 1}]}])
order_file = os.path.join(tmp, "order.json")
with open(order_file, "w") as f:
    json.dump(payload, f)
r = create("--file", order_file)
eq(r.returncode, 0, f"order create --file: {r.stderr}")
file_id = json.loads(r.stdout)["order_id"]
eq(wait_delivered(file_id), "delivered", "the --file order is delivered")
eq(pos_order("operator:PHONE-7").split("|")[1:], ["27.600", "called at 18:02", "P-BURGER"],
   "the POS stored the --file order")
r = create("--file", order_file)
eq((r.returncode, json.loads(r.stdout)["order_id"]), (0, file_id), "the same file again: the same order")
before = counts()
r = create("--file", order_file, "--test")
check(r.returncode == 1 and "refused" in r.stderr, f"... but not as a test order (its note is marked: a conflict): {r.stderr}")
eq(counts(), before, "... which changes nothing")

# --test --wait: marked, answered by the POS with its order_id, not a sale.
r = create("--item", "P-COLA", "--test", "--wait")
eq(r.returncode, 0, f"order create --test --wait: {r.stderr}")
test_made = json.loads(r.stdout)
test_id = test_made["order_id"]
eq(test_made["forwarding"], "delivered", "--wait: delivered")
at_pos = pos_order(f"operator:{test_made['external_id']}").split("|")
eq(test_made["pos_order_id"], at_pos[0], "--wait prints the POS's order_id")
eq(test_made["pos_answer"].get("order_id"), at_pos[0], "--wait prints the POS's answer")
eq(at_pos[2], "TEST ORDER - do not prepare", "the POS ticket says it is a test")
text = run(HUB, "order", "create", "--branch", "DEMO-1", "--item", "P-COLA", "--test", "--wait", env=henv)
eq(text.returncode, 0, f"--wait in text: {text.stderr}")
check("pos_order_id: " in text.stdout and "forwarding: delivered" in text.stdout, "--wait text shows the answer")
listed = {o["id"]: o for o in json.loads(run(HUB, "order", "list", "--json", env=henv).stdout)}
eq((listed[test_id]["test"], listed[item_id]["test"]), (True, False), "order list marks the test order")
eq(listed[item_id]["partner"], "operator", "order list names the operator partner")
check("test" in run(HUB, "order", "list", env=henv).stdout.splitlines()[0], "order list's text has a test column")
eq(json.loads(run(HUB, "order", "show", test_id, "--json", env=henv).stdout)["test"], True, "order show marks it")
eq(psql(hub_url, f"SELECT detail FROM hub.order_status_log WHERE order_id = '{test_id}' AND status = 'received'"),
   "test order", "the status log says test order")

# --wait on a rejection: the POS's answer, exit 1.
r = create("--item", "P-NOPE", "--wait")
eq(r.returncode, 1, "--wait on a rejected order: exit 1")
rejected = json.loads(r.stdout)
eq(rejected["forwarding"], "rejected", "--wait prints the rejection")
check(isinstance(rejected["pos_answer"], dict) and rejected["pos_answer"].get("success") is False,
      "--wait prints the POS's refusal")
# --wait that times out: an order scheduled for tomorrow is not sent now.
later = dict(payload, id="LATER-1", is_schedule=1, schedule_date="2099-01-01 12:00:00")
later_file = os.path.join(tmp, "later.json")
with open(later_file, "w") as f:
    json.dump(later, f)
r = create("--file", later_file, "--wait", "--wait-seconds", "1")
eq(r.returncode, 1, "--wait time-out: exit 1")
check("no answer from the POS within 1 s" in r.stderr, f"--wait time-out: a clear error: {r.stderr}")

# Bad input: a clear error, nothing stored.
before = counts()
bad = dict(payload, id="BAD-1", items=[{"id": "P-BURGER", "quantity": 0, "price": 24}])
bad_file = os.path.join(tmp, "bad.json")
with open(bad_file, "w") as f:
    json.dump(bad, f)
r = create("--file", bad_file)
eq(r.returncode, 1, "a file that breaks the interface: exit 1")
check("/payload/items/0/quantity" in r.stderr, f"... names the field: {r.stderr}")
with open(bad_file, "w") as f:
    f.write("{not json")
r = create("--file", bad_file)
eq(r.returncode, 1, "a file that is not JSON: exit 1")
check("not valid JSON" in r.stderr, f"... says so: {r.stderr}")
eq(create("--file", order_file, "--item", "P-COLA").returncode, 2, "both --file and --item: usage, exit 2")
eq(create().returncode, 2, "neither --file nor --item: usage, exit 2")
r = run(HUB, "order", "create", "--branch", "NOPE", "--item", "P-COLA", env=henv)
check(r.returncode == 1 and "no branch 'NOPE'" in r.stderr, f"an unknown branch: exit 1: {r.stderr}")
eq(counts(), before, "refused orders store nothing (orders, inbox, status log)")

# The operator partner takes no webhooks and is not listed.
check("operator" not in run(HUB, "partner", "list", env=henv).stdout, "partner list does not show it")

# The admin API: the same rule with a write token; a read-only token is refused.
ops = json.loads(run(HUB, "admin-token", "create", "--name", "ops", "--json", env=henv).stdout)["token"]
reader = json.loads(run(HUB, "admin-token", "create", "--name", "reader", "--read-only", "--json",
                        env=henv).stdout)["token"]


# Each request body and answer of POST orders validates against schemas/openapi.yaml (as tests/e2e/test_openapi.py
# checks the other routes).
SCHEMAS = os.path.join(SOURCE, "schemas")
with open(os.path.join(SCHEMAS, "openapi.yaml"), encoding="utf-8") as f:
    spec = yaml.safe_load(f)
store = {"https://orderhub.example/schemas/openapi.yaml": spec}
for name in os.listdir(SCHEMAS):
    if name.endswith(".schema.json"):
        with open(os.path.join(SCHEMAS, name), encoding="utf-8") as f:
            schema = json.load(f)
        store[schema["$id"]] = schema
operation = spec["paths"]["/api/admin/v1/orders"]["post"]


def problems(schema, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # RefResolver: Debian 12's jsonschema 4.10
        resolver = jsonschema.RefResolver(base_uri="https://orderhub.example/schemas/openapi.yaml", referrer=spec,
                                          store=store)
        return [e.message for e in jsonschema.Draft202012Validator(schema, resolver=resolver).iter_errors(value)]


def answer_schema(status):
    response = operation["responses"].get(str(status))
    while response is not None and "$ref" in response:
        target = spec
        for part in response["$ref"][2:].split("/"):
            target = target[part]
        response = target
    return None if response is None else response["content"]["application/json"]["schema"]


def api(body, token=ops, valid_request=True):
    errs = problems(operation["requestBody"]["content"]["application/json"]["schema"], body)
    eq(not errs, valid_request, f"the request body {body!r} is {'' if valid_request else 'not '}valid: {errs}")
    status, headers, answer = hub.request("POST", "/api/admin/v1/orders", body,
                                          headers={"Authorization": "Bearer " + token})
    schema = answer_schema(status)
    check(schema is not None, f"openapi.yaml describes POST /api/admin/v1/orders {status}")
    if schema is not None:
        errs = problems(schema, answer)
        check(not errs, f"the {status} answer {answer!r} is valid: {errs}")
    return status, headers, answer


before = counts()
status, _, body = api({"branch": "DEMO-1", "item": ["P-BURGER"]}, token=reader)
eq((status, body.get("status"), body.get("error", {}).get("code")), (403, "failed", "read_only_token"),
   "a read-only token is refused")
status, _, body = api({"branch": "DEMO-1", "file": dict(payload, id="API-BAD", total="x")}, valid_request=False)
eq((status, body.get("status"), body.get("order_id")), (422, "failed", ""), "a bad payload: the webhook failure")
check(any(d["path"] == "/payload/total" for d in body["error"]["details"]), "... naming the field")
status, _, body = api({"branch": "DEMO-1"}, valid_request=False)
eq((status, body.get("status")), (400, "failed"), "neither file nor item: 400 in the failure shape")
status, _, body = api({"branch": "DEMO-1", "item": "P-COLA"}, valid_request=False)
eq(status, 400, "item must be an array")
eq(counts(), before, "refused API calls change nothing")

status, _, body = api({"branch": "DEMO-1", "item": ["P-FRIES"], "test": True, "wait": True})
eq(status, 201, f"POST orders with a write token: {body}")
api_id = body.get("order_id", "")
eq((body.get("test"), body.get("forwarding")), (True, "delivered"), "... a delivered test order")
check(body.get("pos_order_id") and body["pos_order_id"] == pos_order(f"operator:{body['external_id']}").split("|")[0],
      "... with the POS's order_id")
eq(psql(hub_url, f"SELECT source || '|' || actor FROM hub.order_status_log WHERE order_id = '{api_id}' "
                 "AND status = 'received'"), "operator|ops", "the token's name is the actor")
eq(psql(hub_url, f"SELECT actor || '|' || method || '|' || http_status FROM hub.admin_changes "
                 f"WHERE target = '{api_id}'"), "ops|POST|201", "the change is recorded")
auth = {"Authorization": "Bearer " + reader}
status, _, shown = hub.request("GET", f"/api/admin/v1/orders/{api_id}", headers=auth)
eq((status, shown.get("test")), (200, True), "the admin API shows the test mark")
status, _, page = hub.request("GET", "/api/admin/v1/orders", headers=auth)
marks = {o["id"]: o["test"] for o in page["items"]}
eq((marks.get(api_id), marks.get(item_id)), (True, False), "the admin API's list marks test orders")
orders_before = psql(hub_url, "SELECT count(*) FROM hub.orders")
status, _, body = api({"branch": "DEMO-1", "item": ["P-FRIES"], "wait": True, "wait_seconds": 26}, valid_request=False)
eq((status, body.get("error", {}).get("code")), (400, "invalid_request"),
   "the API's wait ends inside the listener's handler time-out: wait_seconds 26 is refused")
eq(psql(hub_url, "SELECT count(*) FROM hub.orders"), orders_before, "... and stores nothing")
status, _, body = api({"branch": "DEMO-1", "file": later | {"id": "LATER-2"}, "wait": True, "wait_seconds": 1})
eq((status, body.get("status"), body.get("error", {}).get("code")), (504, "failed", "pos_answer_timeout"),
   "the API's --wait time-out")
check(body.get("order_id"), "... names the stored order")

eq(sales(), sales_after_platform, "operator and test orders (CLI and API) are never counted as sales")

# The dashboard's JSON marks it too.
r = run(HUB, "user", "add", "--email", "staff@demo.test", "--brand", "DEMO", "--json", env=henv,
        input="correct horse battery\n")
eq(r.returncode, 0, f"user add: {r.stderr}")
status, headers, body = hub.request("POST", "/api/dashboard/login",
                                    {"email": "staff@demo.test", "password": "correct horse battery"})
eq(status, 200, "dashboard login")
cookie = headers["set-cookie"].split(";", 1)[0]
status, _, body = hub.request("GET", "/api/dashboard/orders?branch=DEMO-1&filter=all", headers={"Cookie": cookie})
eq(status, 200, "dashboard orders")
board = {o["id"]: o.get("test") for o in (body["orders"] if isinstance(body, dict) and "orders" in body else body)}
eq((board.get(test_id), board.get(item_id)), (True, False), "the dashboard JSON marks test orders")

hub.stop()
pos.stop()
finish()

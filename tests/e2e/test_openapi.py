"""schemas/openapi.yaml is valid OpenAPI 3.1 (the pinned @redocly/cli of tests/openapi lints it; a broken copy
fails the lint), and the real answers of orderhub and orderpos validate against it: each answer's schema is found
in the description by (path, method, status) and checked with Draft 2020-12 (python3-jsonschema)."""
import copy
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import yaml

import nonconforming_pos
from harness import (HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env, run)
from openapi_check import OPENAPI, SCHEMAS, answer_problems, problems, request_valid, schema_for, spec, store

LINTER = os.path.join(SOURCE, "tests", "openapi")


def lint(path):
    """Runs the pinned linter on `path` with tests/openapi/redocly.yaml; returns (exit code, output)."""
    out = subprocess.run(["npx", "--no-install", "redocly", "lint", path, "--config", "redocly.yaml",
                          "--format=stylish"], cwd=LINTER, capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout + out.stderr


# 1. The linter: installed (tests/run.sh runs npm ci in tests/openapi), passes the file, refuses a broken copy.
check(os.path.isdir(os.path.join(LINTER, "node_modules", "@redocly", "cli")),
      "@redocly/cli is installed: (cd tests/openapi && npm ci)")
code, output = lint(OPENAPI)
eq(code, 0, f"redocly lint schemas/openapi.yaml\n{output}")
check("error" not in output.lower().replace("errors", ""), f"no lint error:\n{output}")

with tempfile.TemporaryDirectory() as scratch:
    broken_dir = os.path.join(scratch, "schemas")
    shutil.copytree(SCHEMAS, broken_dir)
    broken = copy.deepcopy(spec)
    del broken["paths"]["/webhooks/{key}"]["post"]["responses"]["200"]["description"]  # required by 3.1
    broken["paths"]["/api/login"]["post"]["responses"]["401"]["content"]["application/json"]["schema"] = {
        "$ref": "./no-such.schema.json"}
    with open(os.path.join(broken_dir, "openapi.yaml"), "w", encoding="utf-8") as f:
        yaml.safe_dump(broken, f)
    code, output = lint(os.path.join(broken_dir, "openapi.yaml"))
    check(code != 0, f"a copy without a response description and with a dangling $ref fails the lint:\n{output}")


# 2. Answers validate (tests/e2e/openapi_check.py: the JSON Schemas of schemas/ loaded by their $id, answers matched
# to the description by path template, method and status; test_admin_api and test_dashboard check every answer).
check(len(store) >= 11, f"every schema of schemas/ loaded: {sorted(store)}")


def answer_valid(path, method, status, body, what):
    errs = answer_problems(method, path.replace("{key}", "K" * 32), status, body)
    check(not errs, f"{what}: {method} {path} {status} answer {body!r} is valid: {errs}")


# Every route the hub's route tables answer is described: the admin API (hub/adminapi/api.cpp) and the dashboard's
# JSON API (hub/dashboard/routes.hpp). A route added to a table but not to openapi.yaml fails here.
ROUTE_TABLES = [("hub/adminapi/api.cpp", "/api/admin/v1/", r'\{\{"([A-Z]+)", "([^"]+)"\}, &'),
                ("hub/dashboard/routes.hpp", "/api/dashboard/", r'\{"([A-Z]+)", "([^"]+)", (?:true|false), &')]
for source, prefix, pattern in ROUTE_TABLES:
    with open(os.path.join(SOURCE, source), encoding="utf-8") as f:
        routes = re.findall(pattern, f.read())
    check(len(routes) >= 9, f"the route table of {source} is read: {routes}")
    for method, route in routes:
        described = spec["paths"].get(prefix + route, {})
        check(method.lower() in described, f"openapi.yaml describes {method} {prefix + route} ({source})")

# The checker refuses what the description does not allow: an undescribed path, method or status, an extra field
# in a closed answer, a secret in an answer that never shows one.
check(answer_problems("GET", "/api/admin/v1/no-such-route", 200, {}), "a 200 on an undescribed path is refused")
check(not answer_problems("GET", "/api/admin/v1/no-such-route", 404,
                          {"status": "failed", "error": {"code": "not_found", "message": "no", "details": []}}),
      "a 404 in the failure shape on an undescribed path is allowed")
check(answer_problems("DELETE", "/api/admin/v1/branches/B", 200, {}), "an undescribed method is refused")
check(answer_problems("GET", "/api/admin/v1/branches", 418, {}), "an undescribed status is refused")
a_partner = {"id": "p", "name": "P", "label": "p", "time_zone": "UTC", "signing": False, "disabled": False,
             "created_at": "2026-01-01T00:00:00Z"}
eq(answer_problems("GET", "/api/admin/v1/partners/p", 200, a_partner), [], "a partner answer is valid")
check(answer_problems("GET", "/api/admin/v1/partners/p", 200, dict(a_partner, signing_secret="whsec_x")),
      "GET one partner showing a signing secret is invalid")
check(answer_problems("GET", "/api/admin/v1/partners", 200, {"items": [dict(a_partner, disabled="no")],
                                                            "next_cursor": None}),
      "a page of partners with a mistyped field is invalid")
check(answer_problems("GET", "/api/admin/v1/brands/B/pos", 200,
                      {"brand": "B", "environment": "production", "base_url": "https://pos.test", "token": "t0ken",
                       "credentials": False, "ca_file": None, "insecure": False}),
      "a POS connection answer showing its token is invalid")
check(answer_problems("GET", "/api/dashboard/session", 200, {"user": {"id": "u"}, "csrf_token": "x" * 64,
                                                             "status": "success"}),
      "a dashboard session without the user's fields is invalid")

# The validation itself can fail: answers that break the schemas are found invalid.
check(problems(schema_for("/webhooks/{key}", "POST", 200), {"status": "success", "error": {"code": "x",
                                                                                              "message": "y"}}),
      "a success answer with an error is invalid")
check(problems(schema_for("/webhooks/{key}", "POST", 422), {"status": "failed", "order_id": "",
                                                              "error": {"message": "no code"}}),
      "a failure without error.code is invalid")
check(problems(schema_for("/api/orders", "POST", 201), {"success": True, "message": "Order created"}),
      "a POS success without order_id is invalid")
check(problems(schema_for("/api/login", "POST", 200), {"token": "abc"}), "a login answer without access_token")

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
# A branch whose POS is a stand-in that keeps every order body the hub sends (tests/e2e/nonconforming_pos.py).
fake = nonconforming_pos.FakePos()
eq(run(HUB, "branch", "create", "--id", nonconforming_pos.BRANCH, "--brand", nonconforming_pos.BRAND,
       env=henv).returncode, 0, "branch create (fake POS)")
r = run(HUB, "pos", "set", "--brand", nonconforming_pos.BRAND, "--base-url", fake.url(), "--token",
        nonconforming_pos.TOKEN, env=henv)
eq(r.returncode, 0, f"pos set (fake POS): {r.stderr}")
WH = "/webhooks/{key}"


def created(order_id, quantity=1):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "DEMO-1",
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-BURGER", "quantity": quantity, "price": 24,
                                   "options": [{"id": "M-CHEESE", "price": 3, "quantity": 1}]}]}}


# The webhook surface (an api-only hub: nothing is forwarded).
hub = Service(HUB, "--role", "api", env=henv)
request_valid(WH, "POST", created("OA-1"), "order_created")
status, _, body = hub.request("POST", webhook, created("OA-1"))
eq(status, 200, "order_created stored")
answer_valid(WH, "POST", status, body, "order_created")
status, _, body = hub.request("POST", webhook, created("OA-1"))
answer_valid(WH, "POST", status, body, "order_created repeated")
updated = {"event": "order_updated", "event_time": "2024-05-01 18:05:00", "branch_id": "DEMO-1",
           "payload": {"order_id": "OA-1", "status": "on_the_way"}}
request_valid(WH, "POST", updated, "order_updated")
status, _, body = hub.request("POST", webhook, updated)
eq(status, 200, "order_updated stored")
answer_valid(WH, "POST", status, body, "order_updated")
refusals = [
    ("422 bad quantity", webhook, "POST", created("OA-2", quantity=0), 422),
    ("404 unknown key", "/webhooks/" + "A" * 32, "POST", created("OA-3"), 404),
    ("404 order_not_found", webhook, "POST", dict(updated, payload={"order_id": "NOPE", "status": "delivered"}), 404),
    ("409 id reused", webhook, "POST", created("OA-1", quantity=2), 409),
    ("400 not an object", webhook, "POST", "[1, 2]", 400),
    ("405 GET", webhook, "GET", None, 405),
]
for what, path, method, payload, want in refusals:
    status, headers, body = hub.request(method, path, payload)
    eq(status, want, what)
    answer_valid(WH, "POST", status, body, what)
    if want == 422:
        check(body.get("error", {}).get("details"), f"{what}: the failure names the broken field: {body}")

# The running hub serves the same description without a token, as one document that stands alone: the linter
# takes it, it names the same paths, and a reference into the JSON Schemas resolves inside it.
status, _, served = hub.request("GET", "/api/admin/v1/openapi.json", None)
eq(status, 200, "GET /api/admin/v1/openapi.json without a token")
eq(served.get("openapi"), "3.1.0", "the served description is OpenAPI 3.1")
eq(sorted(served.get("paths", {})), sorted(spec["paths"]), "the served description has the spec's paths")
check("order-created" in served.get("components", {}).get("schemas", {}),
      "the JSON Schemas are bundled under components/schemas")
with tempfile.TemporaryDirectory() as tmp:
    served_path = os.path.join(tmp, "openapi.json")
    with open(served_path, "w", encoding="utf-8") as f:
        json.dump(served, f)
    code, output = lint(served_path)
    eq(code, 0, f"redocly lint of the served description\n{output}")
status, _, body = hub.request("POST", "/api/admin/v1/openapi.json", {})
eq(status, 405, "the description is read-only")

# What the hub sends a POS is a valid request body of POST /api/orders.
to_fake = created("OA-FAKE")
to_fake["branch_id"] = nonconforming_pos.BRANCH
to_fake["payload"]["items"] = [{"id": "P-1", "quantity": 2, "price": 10, "note": "no salt",
                                "options": [{"id": "M-1", "price": 1.5, "quantity": 1}]}]
status, _, body = hub.request("POST", webhook, to_fake)
eq(status, 200, "order for the fake POS stored")
forwarder = Service(HUB, "--role", "forwarder", env=henv)
deadline = time.time() + 30
while time.time() < deadline and not fake.received:
    time.sleep(0.1)
eq(forwarder.stop(), 0, "forwarder stops cleanly")
fake.stop()
eq(len(fake.received), 1, "the hub forwarded the order to the fake POS")
for sent in fake.received:
    request_valid("/api/orders", "POST", sent, f"the POS order the hub sent {sent!r}")

# The dashboard: a login with credentials nobody has.
status, _, body = hub.request("POST", "/api/dashboard/login", {"email": "nobody@demo.test", "password": "wrong-pw"})
answer_valid("/api/dashboard/login", "POST", status, body, "dashboard login refused")
eq(hub.stop(), 0, "hub stops cleanly")

# The reference POS.
pos = Service(POS, env=penv)
login = {"email": "hub@demo.test", "password": "s3cret-pass"}
request_valid("/api/login", "POST", login, "POS login")
status, _, body = pos.request("POST", "/api/login", login)
eq(status, 200, "POS login")
answer_valid("/api/login", "POST", status, body, "POS login")
token = body.get("access_token", "") if isinstance(body, dict) else ""
status, _, body = pos.request("POST", "/api/login", {"email": "hub@demo.test", "password": "wrong-pass"})
eq(status, 401, "POS login, wrong password")
answer_valid("/api/login", "POST", status, body, "POS login, wrong password")

pos_order = {"branch_id": "DEMO-1", "brand_id": "DEMO", "partner_reference": "plat:OA-1", "note": "",
             "subtotal": 24.0, "tax": 3.6, "total": 27.6, "status": "PENDING",
             "customer": {"name": "Sara", "phone": "+966500000001"},
             "products": [{"id": "P-BURGER", "quantity": 1, "total": 24.0, "note": None,
                           "modifiers": [{"id": "M-CHEESE", "quantity": 1, "total": 3.0}]}]}
request_valid("/api/orders", "POST", pos_order, "POS order")
auth = {"Authorization": f"Bearer {token}"}
status, _, body = pos.request("POST", "/api/orders", pos_order, headers=auth)
eq(status, 201, "POS order created")
answer_valid("/api/orders", "POST", status, body, "POS order created")
status, _, body = pos.request("POST", "/api/orders", pos_order, headers=auth)
eq(status, 200, "POS order repeated")
answer_valid("/api/orders", "POST", status, body, "POS order repeated")
status, _, body = pos.request("POST", "/api/orders", pos_order, headers={"Authorization": "Bearer not-a-token"})
eq(status, 401, "POS order, bad token")
answer_valid("/api/orders", "POST", status, body, "POS order, bad token")
unknown = dict(pos_order, partner_reference="plat:OA-9",
               products=[{"id": "P-NOPE", "quantity": 1, "total": 1.0, "modifiers": []}])
status, _, body = pos.request("POST", "/api/orders", unknown, headers=auth)
eq(status, 422, "POS order, unknown product")
answer_valid("/api/orders", "POST", status, body, "POS order, unknown product")
status, _, body = pos.request("POST", "/api/orders", "{not json", headers=auth)
answer_valid("/api/orders", "POST", status, body, "POS order, malformed JSON")
eq(pos.stop(), 0, "POS stops cleanly")

finish()

"""The operator HTTP API (product.md section 9) end to end with the real orderhub, the real orderpos and
PostgreSQL: tokens from the CLI; no token, a bad one and a revoked one refused; a read-only token refused on
writes; partner -> webhook URL -> branch -> POS connection -> order delivered -> resend -> inbox replay, all
through the API; list cursors; and no secret in any answer except the one that issues it."""
import atexit
import json
import os
import subprocess
import time
import urllib.parse

from harness import (HUB, POS, PSQL, SOURCE, Service, check, create_database, eq, finish, hub_env, psql, run)
from openapi_check import watch

hub_url = create_database()
pos_url = create_database()
henv = hub_env(hub_url)
penv = {"ORDERPOS_DATABASE_URL": pos_url}

eq(run(HUB, "migrate", env=henv).returncode, 0, "hub migrate")
eq(run(POS, "migrate", env=penv).returncode, 0, "pos migrate")
eq(run(POS, "menu", "load", os.path.join(SOURCE, "deploy", "demo-menu.json"), env=penv).returncode, 0, "menu load")
r = run(POS, "user", "add", "--email", "hub@demo.test", "--password", "s3cret-pass", "--brand", "DEMO", env=penv)
eq(r.returncode, 0, f"pos user add: {r.stderr}")


def new_token(name, *extra):
    r = run(HUB, "admin-token", "create", "--name", name, *extra, "--json", env=henv)
    eq(r.returncode, 0, f"admin-token create {name}: {r.stderr}")
    return json.loads(r.stdout)


ops = new_token("ops")
reader = new_token("reader", "--read-only")
doomed = new_token("doomed")
check(len(ops["token"]) >= 43, "a token has 256 bits (43 base64url characters)")
eq(reader["read_only"], True, "a read-only token says so")
listed = run(HUB, "admin-token", "list", "--json", env=henv)
eq(listed.returncode, 0, "admin-token list")
check(all(t["token"] not in listed.stdout for t in (ops, reader, doomed)), "admin-token list never shows a token")
check(ops["token"] not in psql(hub_url, "SELECT string_agg(token_hash, ',') FROM hub.admin_tokens"),
      "tokens are stored hashed")
eq(run(HUB, "admin-token", "create", "--name", "ops", env=henv).returncode, 1, "a taken name: exit 1")
eq(run(HUB, "admin-token", "revoke", "no-such-id", env=henv).returncode, 1, "revoke an unknown token: exit 1")

pos = Service(POS, env=penv)
pos_base = f"http://127.0.0.1:{pos.port}"
status, _, body = pos.request("POST", "/api/login", {"email": "hub@demo.test", "password": "s3cret-pass"})
eq(status, 200, "POS login")
pos_token = body["access_token"]

hub = watch(Service(HUB, env=henv))  # every answer is checked against schemas/openapi.yaml
API = "/api/admin/v1"
answers = []  # every answer's text, to look for secrets in


def call(method, path, body=None, token=ops, headers=None):
    h = dict(headers or {})
    if token is not None:
        h["Authorization"] = "Bearer " + (token["token"] if isinstance(token, dict) else token)
    status, hdrs, parsed = hub.request(method, API + path, body, headers=h)
    answers.append(json.dumps(parsed))
    return status, hdrs, parsed


def failed_shape(body, code, what):
    check(isinstance(body, dict) and body.get("status") == "failed", f"{what}: the failure shape")
    err = body.get("error", {}) if isinstance(body, dict) else {}
    eq(err.get("code"), code, f"{what}: error code")
    check("message" in err and "details" in err, f"{what}: message and details")


# Auth: none, a wrong one, read-only on writes.
status, hdrs, body = call("GET", "/partners", token=None)
eq(status, 401, "no token: 401")
failed_shape(body, "unauthenticated", "no token")
eq(hdrs.get("www-authenticate"), "Bearer", "no token: WWW-Authenticate")
status, _, body = call("GET", "/partners", token="not-a-token")
eq(status, 401, "a wrong token: 401")
status, _, body = call("GET", "/partners", token=reader)
eq((status, body.get("items"), body.get("next_cursor")), (200, [], None), "read-only token: GET 200")
status, _, body = call("POST", "/partners", {"name": "Sneaky"}, token=reader)
eq(status, 403, "read-only token: POST 403")
failed_shape(body, "read_only_token", "read-only POST")
eq(psql(hub_url, "SELECT count(*) FROM hub.partners WHERE id <> 'operator'"), "0",
   "... and nothing written")
status, _, body = call("GET", "/no-such-thing")
eq(status, 404, "unknown endpoint: 404")
status, hdrs, body = call("DELETE", "/partners")
eq((status, hdrs.get("allow")), (405, "GET, POST"), "another method: 405 with Allow")

# Partners.
status, _, plat = call("POST", "/partners", {"name": "Platform", "label": "plat"})
eq(status, 201, f"create partner: {plat}")
check("signing_secret" not in plat, "an unsigned partner has no secret")
key = plat["webhook_url"].rsplit("/webhooks/", 1)[1]
status, _, body = call("POST", "/partners", {"name": "Platform again", "label": "plat"})
eq(status, 409, "a taken label: 409")
failed_shape(body, "conflict", "taken label")
status, _, body = call("POST", "/partners", {"name": "Bad", "label": "no spaces allowed"})
eq(status, 400, "a bad label: 400")
failed_shape(body, "invalid_request", "bad label")
status, _, body = call("POST", "/partners", "not json")
eq(status, 400, "a body that is not JSON: 400")
status, _, signed = call("POST", "/partners", {"name": "Signed", "label": "signed", "signing": True})
eq(status, 201, "create a signing partner")
secret = signed.get("signing_secret", "")
check(secret.startswith("whsec_"), "its secret is shown at creation")
status, _, one = call("GET", "/partners/" + plat["id"])
eq((status, one.get("label"), "webhook_url" in one), (200, "plat", False), "GET one partner: no URL")
status, _, body = call("GET", "/partners/no-such-id")
eq(status, 404, "unknown partner: 404")

# Branch and POS connection.
status, _, body = call("POST", "/branches", {"id": "DEMO-1", "brand": "DEMO", "accept_mode": "auto"})
eq((status, body.get("accept_mode")), (201, "auto"), f"create branch: {body}")
status, _, body = call("POST", "/branches", {"id": "DEMO-2", "brand": "DEMO", "accept_mode": "sometimes"})
eq(status, 400, "a bad accept mode: 400")
eq(psql(hub_url, "SELECT count(*) FROM hub.branches WHERE id = 'DEMO-2'"), "0", "... and nothing written")
status, _, body = call("PATCH", "/branches/DEMO-1", {"name": "Demo One", "accept_mode": "pending"})
eq((status, body.get("name"), body.get("accept_mode")), (200, "Demo One", "pending"), "update branch")
status, _, body = call("PATCH", "/branches/DEMO-1", {"brand": "OTHER"})
eq(status, 400, "a branch's brand cannot change")
status, _, body = call("GET", "/branches/DEMO-1")
eq((status, body.get("name")), (200, "Demo One"), "GET one branch")
status, _, body = call("GET", "/branches")
eq([b["id"] for b in body["items"]], ["DEMO-1"], "list branches")
status, _, body = call("PUT", "/brands/DEMO/pos", {"base_url": pos_base, "token": pos_token})
eq(status, 200, f"set the POS connection: {body}")
status, _, body = call("GET", "/brands/DEMO/pos")
eq((status, body.get("base_url")), (200, pos_base), "GET the POS connection")
status, _, body = call("GET", "/brands/NONE/pos")
eq(status, 404, "no POS connection: 404")


def order(order_id):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "DEMO-1",
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-BURGER", "quantity": 1, "price": 24,
                                   "options": [{"id": "M-CHEESE", "price": 3, "quantity": 1}]}]}}


def at_pos(ref):
    return int(psql(pos_url, f"SELECT count(*) FROM pos.orders WHERE partner_reference = '{ref}'"))


def wait_delivered(order_id, timeout=30):
    deadline = time.time() + timeout
    state = None
    while time.time() < deadline:
        _, _, o = call("GET", "/orders/" + order_id)
        state = o.get("forwarding", {}).get("state")
        if state == "delivered":
            return state
        time.sleep(0.2)
    return state


# The partner's webhook URL takes an order, which reaches the reference POS.
hub_ids = []
for n in range(3):
    status, _, body = hub.request("POST", "/webhooks/" + key, order(f"A-{n}"))
    eq(status, 200, f"the webhook URL takes order A-{n}")
    hub_ids.append(body.get("order_id", ""))
eq(wait_delivered(hub_ids[0]), "delivered", "order A-0 delivered")
eq(at_pos("plat:A-0"), 1, "order A-0 is at the POS")

# Orders: list newest first with a cursor, one, resend, audit.
status, _, page1 = call("GET", "/orders?limit=2&branch=DEMO-1")
eq(status, 200, "list orders")
eq([o["id"] for o in page1["items"]], [hub_ids[2], hub_ids[1]], "newest first, one page of 2")
check(isinstance(page1["next_cursor"], str), "a next cursor")
status, _, page2 = call("GET", "/orders?limit=2&branch=DEMO-1&cursor=" + urllib.parse.quote(page1["next_cursor"]))
eq(([o["id"] for o in page2["items"]], page2["next_cursor"]), ([hub_ids[0]], None), "the last page")
status, _, body = call("GET", "/orders?cursor=forged")
eq(status, 400, "a cursor the API did not give: 400")
status, _, body = call("GET", "/orders?limit=0")
eq(status, 400, "a bad limit: 400")
status, _, body = call("POST", f"/orders/{hub_ids[0]}/resend", token=reader)
eq(status, 403, "read-only resend: 403")
status, _, body = call("POST", f"/orders/{hub_ids[0]}/resend")
eq((status, body.get("previous_state")), (200, "delivered"), f"resend: {body}")
eq(wait_delivered(hub_ids[0]), "delivered", "the resent order is delivered again")
eq(at_pos("plat:A-0"), 1, "a resend does not double the order at the POS")
status, _, body = call("POST", "/orders/no-such-order/resend")
eq(status, 404, "resend an unknown order: 404")
status, _, body = call("GET", f"/orders/{hub_ids[0]}/audit")
check(any(r["status"] == "forward_requeued" and r["actor"] == "ops" for r in body.get("items", [])),
      f"the audit shows the resend by the token's name: {body}")

# The inbox: list (cursor), one, replay.
status, _, events = call("GET", "/events?limit=2")
eq((status, len(events["items"])), (200, 2), "list events")
ids = [e["id"] for e in events["items"]]
check(ids[0] > ids[1], "events newest first")
status, _, more = call("GET", "/events?limit=2&cursor=" + urllib.parse.quote(events["next_cursor"]))
check(more["items"] and more["items"][0]["id"] < ids[1], "the next page of events is older")
status, _, one = call("GET", f"/events/{ids[-1]}")
eq((status, one.get("body_encoding")), (200, "utf-8"), "one event with its body")
status, _, body = call("POST", f"/events/{ids[-1]}/replay")
eq((status, body.get("http_status")), (200, 200), f"replay: {body}")
status, _, body = call("GET", "/events?limit=1")
eq(body["items"][0].get("replay_of"), ids[-1], "the replay is in the inbox")
status, _, body = call("POST", "/events/abc/replay")
eq(status, 400, "replay a non-number: 400")
status, _, body = call("POST", "/events/999999/replay")
eq(status, 404, "replay an unknown event: 404")
status, _, body = call("GET", "/events?failed=true")
eq((status, body["items"]), (200, []), "no failed events")

# Mappings: set, list, delete.
status, _, body = call("POST", "/mappings", {"partner": plat["id"], "kind": "item", "external": "X 1", "pos": "P-1"})
eq(status, 200, f"set a mapping: {body}")
status, _, body = call("GET", f"/mappings?partner={plat['id']}&kind=item")
eq(len(body["items"]), 1, "list mappings")
status, _, body = call("DELETE", f"/mappings/{plat['id']}/item/X%201")
eq(status, 200, "delete a mapping")
status, _, body = call("GET", f"/mappings?partner={plat['id']}")
eq(body["items"], [], "the mapping is gone")
status, _, body = call("DELETE", f"/mappings/{plat['id']}/item/X%201")
eq(status, 404, "delete it again: 404")
status, _, body = call("DELETE", f"/mappings/{plat['id']}/dish/X%201")
eq(status, 400, "delete a mapping of no kind: 400")
# The CLI and the API name a mapping alike (partner, kind, platform id) and see the same mappings.
status, _, body = call("POST", "/mappings", {"partner": plat["id"], "kind": "option", "external": "O/2", "pos": "M-2"})
eq(status, 200, "set a mapping whose platform id has a slash")
r = run(HUB, "map", "list", "--partner", plat["id"], "--json", env=henv)
eq([(m["kind"], m["external"], m["pos"]) for m in json.loads(r.stdout or "[]")], [("option", "O/2", "M-2")],
   "the CLI lists the mapping the API set")
r = run(HUB, "map", "delete", "--partner", plat["id"], "--kind", "option", "--external", "O/2", "--json", env=henv)
eq(r.returncode, 0, f"the CLI deletes it by the same name: {r.stderr}")
status, _, body = call("GET", f"/mappings?partner={plat['id']}")
eq((status, body["items"]), (200, []), "the API no longer lists it")
status, _, body = call("POST", "/mappings", {"partner": plat["id"], "kind": "option", "external": "O/2", "pos": "M-2"})
status, _, body = call("DELETE", f"/mappings/{plat['id']}/option/O%2F2")
eq((status, body.get("external")), (200, "O/2"), "the API deletes a platform id with a slash (percent-encoded)")

# Partner actions; each shows its new secret once.
status, _, rotated = call("POST", f"/partners/{signed['id']}/rotate-secret", {"grace_hours": 0})
eq(status, 200, "rotate-secret")
new_secret = rotated.get("signing_secret", "")
check(new_secret.startswith("whsec_") and new_secret != secret, "a new secret, shown once")
status, _, rotated = call("POST", f"/partners/{plat['id']}/rotate")
eq(status, 200, "rotate the webhook URL")
new_key = rotated["webhook_url"].rsplit("/webhooks/", 1)[1]
deadline = time.time() + 15  # a serving hub caches a key for 2 s
while time.time() < deadline:
    status, _, _ = hub.request("POST", "/webhooks/" + key, order("A-old"))
    if status == 404:
        break
    time.sleep(0.2)
eq(status, 404, "the old URL stops working")
status, _, _ = hub.request("POST", "/webhooks/" + new_key, order("A-new"))
eq(status, 200, "the new URL works")
status, _, body = call("POST", f"/partners/{plat['id']}/limit", {"per_second": 5})
eq((status, body.get("per_second"), body.get("burst")), (200, 5, 10), "a partner's own limit")
eq(psql(hub_url, f"SELECT rate_burst FROM hub.partners WHERE id = '{plat['id']}'"), "10", "... stored")
status, _, body = call("POST", f"/partners/{plat['id']}/limit", {"per_second": 0})
eq(status, 400, "a bad limit: 400")
status, _, body = call("POST", f"/partners/{signed['id']}/disable")
eq((status, body.get("disabled")), (200, True), "disable a partner")

# Every change is recorded with the token's name as actor.
actors = psql(hub_url, "SELECT string_agg(DISTINCT actor, ',') FROM hub.admin_changes")
eq(actors, "ops", "changes recorded with the token's name")
check(int(psql(hub_url, "SELECT count(*) FROM hub.admin_changes WHERE method = 'POST' AND path LIKE '%/resend'")) == 1,
      "the resend is recorded")

# No secret in any answer but the one that issued it, nor in the log.
issued = {secret: 1, new_secret: 1, key: 1, new_key: 1}
for s, allowed in issued.items():
    eq(sum(s in a for a in answers), allowed, "a secret appears only in the answer that issued it")
check(all(pos_token not in a for a in answers), "the POS token never appears in an answer")
log = hub.log()
for s in (ops["token"], reader["token"], secret, new_secret, key, new_key, pos_token):
    check(s not in log, "no token or secret in the hub's log")

# A revoked token is refused (the hub forgets a cached token within seconds).
status, _, _ = call("GET", "/partners", token=doomed)
eq(status, 200, "the token works before it is revoked")
eq(run(HUB, "admin-token", "revoke", doomed["id"], env=henv).returncode, 0, "revoke")
deadline = time.time() + 15
while time.time() < deadline:
    status, _, _ = call("GET", "/partners", token=doomed)
    if status == 401:
        break
    time.sleep(0.2)
eq(status, 401, "a revoked token is refused")

# Each token has its own rate limit: a hub allowing one request a second, bursts of two.
slow = watch(Service(HUB, "--role", "api", "--admin-api-per-second", "1", "--admin-api-burst", "2", env=henv))
auth = {"Authorization": "Bearer " + reader["token"]}
statuses = [slow.request("GET", API + "/branches", headers=auth) for _ in range(3)]
eq([s for s, _, _ in statuses], [200, 200, 429], "a token past its burst: 429")
failed_shape(statuses[2][2], "rate_limited", "rate limited")
check(int(statuses[2][1].get("retry-after", "0")) >= 1, "... with Retry-After")
status, _, _ = slow.request("GET", API + "/branches", headers={"Authorization": "Bearer " + ops["token"]})
eq(status, 200, "another token has its own bucket")

# Served by a login that is not the owner, as deployed (a member of the serving role only): the API's changes run
# as the operator role inside their transaction, while the serving role itself still cannot change partners.
login = f"e2e_serve_{os.getpid()}"
psql(hub_url, f"CREATE ROLE {login} LOGIN")
atexit.register(lambda: psql(hub_url, f"DROP ROLE IF EXISTS {login}"))
app_role = psql(hub_url, "SELECT CASE WHEN pg_get_userbyid(nspowner) = 'orderhub_app' THEN 'orderhub_app_role' "
                         "ELSE 'orderhub_app' END FROM pg_namespace WHERE nspname = 'hub'")
psql(hub_url, f"GRANT {app_role} TO {login}")
parts = urllib.parse.urlsplit(hub_url)
serve_url = urllib.parse.urlunsplit(parts._replace(netloc=f"{login}@{parts.hostname}:{parts.port}"))
deployed = watch(Service(HUB, "--role", "api", env=hub_env(serve_url)))
auth = {"Authorization": "Bearer " + ops["token"]}
status, _, body = deployed.request("POST", API + "/branches", {"id": "DEP-1", "brand": "DEP"}, headers=auth)
eq(status, 201, f"a non-owner login: create a branch: {body}")
status, _, body = deployed.request("PUT", API + "/brands/DEP/pos", {"base_url": pos_base, "token": pos_token},
                                   headers=auth)
eq(status, 200, f"a non-owner login: set a POS connection: {body}")
status, _, body = deployed.request("POST", API + "/partners", {"name": "Deployed", "signing": True}, headers=auth)
eq(status, 201, f"a non-owner login: create a signing partner: {body}")
status, _, body = deployed.request("POST", API + "/mappings", {"partner": body.get("id"), "kind": "item",
                                                               "external": "E", "pos": "P"}, headers=auth)
eq(status, 200, f"a non-owner login: set a mapping: {body}")
status, _, body = deployed.request("POST", API + f"/orders/{hub_ids[1]}/resend", headers=auth)
eq(status, 200, f"a non-owner login: resend: {body}")
status, _, body = deployed.request("GET", API + "/orders?limit=1", headers=auth)
eq(status, 200, "a non-owner login: list orders")
status, _, _ = deployed.request("POST", "/webhooks/" + new_key, order("DEP-A"))
eq(status, 200, "a non-owner login: the webhook path still stores orders")
denied = subprocess.run([PSQL, "-X", "-d", serve_url, "-v", "ON_ERROR_STOP=1", "-c",
                         f"SET ROLE {app_role}; UPDATE hub.partners SET name = 'x'"],
                        capture_output=True, text=True, timeout=30)
check(denied.returncode != 0 and "permission denied" in denied.stderr,
      f"the serving role alone still cannot change partners: {denied.stderr!r}")

finish()

"""Operators (issue 21 items 1, 3, 4, 5; issue 20 finding 10): onboarding in either order delivers to the
reference POS; a refused (422) request is found by the platform's order id with `events list` and `events show`;
`branch update` changes only what it is given and `branch list` shows every setting; `map list` and `map delete`;
and text output never carries a raw control character that a webhook put in a field."""
import json
import os
import re
import tempfile
import time

from harness import HUB, POS, Service, check, create_database, eq, finish, hub_env, psql, run

hub_url = create_database()
pos_url = create_database()
henv = hub_env(hub_url)
penv = {"ORDERPOS_DATABASE_URL": pos_url}


def cli(binary, *args, env=henv, input=None, code=0):
    r = run(binary, *args, env=env, input=input)
    eq(r.returncode, code, f"{' '.join(args[:3])}: exit ({r.stderr.strip()})")
    return r


def cli_json(*args, code=0):
    r = cli(HUB, *args, "--json", code=code)
    return json.loads(r.stdout) if r.returncode == 0 else None


# A reference POS with two brands, each with one branch and one product.
menu = {"brands": [{"id": "BRAND-A", "name": "A"}, {"id": "BRAND-B", "name": "B"}],
        "branches": [{"id": "A-1", "name": "A one", "brand_id": "BRAND-A"},
                     {"id": "B-1", "name": "B one", "brand_id": "BRAND-B"}],
        "products": [{"id": "P-1", "name": "Dish", "price": 10, "brand_id": "BRAND-A", "branches": ["A-1"]},
                     {"id": "P-1", "name": "Dish", "price": 10, "brand_id": "BRAND-B", "branches": ["B-1"]}],
        "modifiers": []}
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(menu, f)
cli(HUB, "migrate")
cli(POS, "migrate", env=penv)
cli(POS, "menu", "load", f.name, env=penv)
os.unlink(f.name)
pos = Service(POS, env=penv)
pos_base = f"http://127.0.0.1:{pos.port}"
tokens = {}
for brand in ("BRAND-A", "BRAND-B"):
    email = f"hub@{brand.lower()}.test"
    cli(POS, "user", "add", "--email", email, "--password", "s3cret-pass", "--brand", brand, env=penv)
    tokens[brand] = pos.request("POST", "/api/login", {"email": email, "password": "s3cret-pass"})[2]["access_token"]

# ---- Onboarding in either order (issue 21 item 1) ----
# POS first: the brand comes into being with `pos set`.
cli(HUB, "pos", "set", "--brand", "BRAND-A", "--base-url", pos_base, "--token", "-", input=tokens["BRAND-A"] + "\n")
cli(HUB, "branch", "create", "--id", "A-1", "--brand", "BRAND-A")
# Branch first: the brand comes into being with `branch create`.
cli(HUB, "branch", "create", "--id", "B-1", "--brand", "BRAND-B")
cli(HUB, "pos", "set", "--brand", "BRAND-B", "--base-url", pos_base, "--token", "-", input=tokens["BRAND-B"] + "\n")
eq(psql(hub_url, "SELECT string_agg(id, ',' ORDER BY id) FROM hub.brands"), "BRAND-A,BRAND-B", "both brands exist")
# A bad base URL changes nothing, not even the brand.
cli(HUB, "pos", "set", "--brand", "BRAND-C", "--base-url", "ftp://x", "--token", "t", code=2)
eq(psql(hub_url, "SELECT count(*) FROM hub.brands WHERE id = 'BRAND-C'"), "0", "a refused pos set creates no brand")

partner = cli_json("partner", "create", "--name", "Platform", "--label", "plat")
hook = "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1]
hub = Service(HUB, env=henv)


def created(order_id, branch, name="Sara", note="", total=10):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": branch,
            "payload": {"id": order_id, "payment_method": "card", "order_type": "PICK-UP", "note": note,
                        "subtotal": 10, "tax": 0, "discount": 0, "total": total, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": name, "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-1", "quantity": 1, "price": 10, "options": []}]}}


def send(order_id, branch, expect=200, **kw):
    status, _, body = hub.request("POST", hook, created(order_id, branch, **kw))
    eq(status, expect, f"webhook {order_id} ({body})")
    return body.get("order_id") if isinstance(body, dict) else None


def wait_delivered(hub_id, timeout=30):
    deadline = time.time() + timeout
    state = ""
    while time.time() < deadline:
        state = psql(hub_url, f"SELECT state FROM hub.forward_jobs WHERE order_id = '{hub_id}'")
        if state in ("delivered", "rejected", "dead", "auth_failed"):
            break
        time.sleep(0.1)
    return state


def pos_status(ref):
    return psql(pos_url, f"SELECT status FROM pos.orders WHERE partner_reference = '{ref}'")


a = send("ORD-A", "A-1")
b = send("ORD-B", "B-1")
eq(wait_delivered(a), "delivered", "POS first: delivered")
eq(wait_delivered(b), "delivered", "branch first: delivered")
eq((pos_status("plat:ORD-A"), pos_status("plat:ORD-B")), ("PENDING", "PENDING"), "both orders are at the POS")

# ---- branch update and branch list (issue 21 item 4) ----
before = {x["id"]: x for x in cli_json("branch", "list")}
eq(before["A-1"], {"id": "A-1", "brand_id": "BRAND-A", "name": "A-1", "pos_branch_id": "A-1", "accept_mode": "pending",
                   "auto_accept": False, "accept_timeout_minutes": 10, "schedule_lead_minutes": 30},
   "branch list shows every setting")
after = cli_json("branch", "update", "--id", "A-1", "--name", "Olaya", "--auto-accept")
eq((after["name"], after["accept_mode"], after["schedule_lead_minutes"], after["pos_branch_id"]),
   ("Olaya", "auto", 30, "A-1"), "update changes only what it is given")
listed = {x["id"]: x for x in cli_json("branch", "list")}
eq(listed["A-1"], after, "branch list shows the update")
eq(listed["B-1"], before["B-1"], "the other branch is untouched")
# The new mode applies to the next order: the POS receives it ACCEPTED.
a2 = send("ORD-A2", "A-1")
eq(wait_delivered(a2), "delivered", "delivered after the update")
eq(pos_status("plat:ORD-A2"), "ACCEPTED", "auto-accept after branch update")
# Manual accept with its time-out and a new schedule lead, then back to pending (the time-out is kept).
m = cli_json("branch", "update", "--id", "B-1", "--manual-accept", "--accept-timeout-minutes", "5",
             "--schedule-lead-minutes", "45")
eq((m["accept_mode"], m["accept_timeout_minutes"], m["schedule_lead_minutes"], m["name"]), ("manual", 5, 45, "B-1"),
   "manual accept, time-out and lead stored")
p = cli_json("branch", "update", "--id", "B-1", "--pending-accept")
eq((p["accept_mode"], p["accept_timeout_minutes"], p["schedule_lead_minutes"]), ("pending", 5, 45),
   "back to pending")
text = cli(HUB, "branch", "list").stdout.split("\n")
check(text[0].split() == ["id", "brand_id", "name", "pos_branch_id", "accept_mode", "accept_timeout_minutes",
                          "schedule_lead_minutes"], f"branch list text header ({text[0]})")
# Bad updates: exit 2 (bad usage) or 1 (unknown branch), nothing changed.
r = cli(HUB, "branch", "update", "--id", "A-1", "--accept-timeout-minutes", "5", code=2)
check("manual-accept" in r.stderr, f"a time-out needs manual accept ({r.stderr.strip()})")
cli(HUB, "branch", "update", "--id", "A-1", "--auto-accept", "--manual-accept", code=2)
cli(HUB, "branch", "update", "--id", "A-1", "--brand", "BRAND-B", code=2)
cli(HUB, "branch", "update", "--id", "A-1", "--schedule-lead-minutes", "10081", code=2)
cli(HUB, "branch", "update", "--id", "A-1", "--name", "", code=2)
r = cli(HUB, "branch", "update", "--id", "NO-SUCH", "--name", "x", code=1)
check("no branch" in r.stderr, f"unknown branch ({r.stderr.strip()})")
eq({x["id"]: x for x in cli_json("branch", "list")}["A-1"], after, "refused updates changed nothing")
cli(HUB, "branch", "create", "--id", "A-1", "--brand", "BRAND-A", code=1)

# ---- A 422 found by the platform's order id (issue 21 item 3) ----
send("LOST-42", "A-1", expect=422, total=-1)
send("OTHER-43", "A-1", expect=422, total=-1)
failed = cli_json("events", "list", "--failed")
hit = [x for x in failed if x["external_id"] == "LOST-42"]
eq(len(hit), 1, "events list --failed shows the 422 by its platform order id")
if hit:
    eq((hit[0]["event"], hit[0]["branch_id"], hit[0]["http_status"]), ("order_created", "A-1", 422),
       "with its event and branch")
by_id = cli_json("events", "list", "--external-id", "LOST-42")
eq([x["external_id"] for x in by_id], ["LOST-42"], "events list --external-id filters")
text = cli(HUB, "events", "list", "--failed").stdout
check("LOST-42" in text and "branch_id" in text.split("\n")[0], "events list text shows external_id and branch_id")
if hit:
    shown = cli_json("events", "show", str(hit[0]["id"]))
    eq((shown["external_id"], shown["http_status"], shown["body_encoding"]), ("LOST-42", 422, "utf-8"),
       "events show --json")
    eq(json.loads(shown["body"])["payload"]["id"], "LOST-42", "events show has the raw body")
    check(isinstance(shown["headers"], dict), "events show has the headers")
    text = cli(HUB, "events", "show", str(hit[0]["id"])).stdout
    check("external_id: LOST-42" in text and "headers:" in text and '"LOST-42"' in text,
          f"events show text ({text[:300]})")
# An order_updated, stored (one by one) and refused (in a batch), keeps its branch too.
for status, expect in (("on_the_way", 200), ("teleported", 422)):
    code = hub.request("POST", hook, {"event": "order_updated", "event_time": "2024-05-01 18:10:00",
                                      "branch_id": "A-1", "payload": {"order_id": "ORD-A", "status": status}})[0]
    eq(code, expect, f"order_updated {status}")
eq(sorted((x["event"], x["branch_id"], x["http_status"]) for x in cli_json("events", "list", "--external-id", "ORD-A")),
   [("order_created", "A-1", 200), ("order_updated", "A-1", 200), ("order_updated", "A-1", 422)],
   "every request of ORD-A, refused ones included, with its branch")
cli(HUB, "events", "show", "999999999", code=1)
cli(HUB, "events", "show", "abc", code=2)

# ---- map list and map delete (issue 21 item 5, CLI part) ----
cli(HUB, "map", "set", "--partner", partner["id"], "--kind", "item", "--external", "EXT-1", "--pos", "P-1")
cli(HUB, "map", "set", "--partner", partner["id"], "--kind", "option", "--external", "EXT-O", "--pos", "M-1")
maps = cli_json("map", "list")
eq(sorted((x["kind"], x["external"], x["pos"]) for x in maps), [("item", "EXT-1", "P-1"), ("option", "EXT-O", "M-1")],
   "map list")
eq([x["external"] for x in cli_json("map", "list", "--kind", "option")], ["EXT-O"], "map list --kind")
eq(cli_json("map", "list", "--partner", "nobody"), [], "map list --partner")
cli(HUB, "map", "list", "--kind", "dish", code=2)
gone = cli_json("map", "delete", "--partner", partner["id"], "--kind", "item", "--external", "EXT-1")
eq((gone["external"], gone["pos"]), ("EXT-1", "P-1"), "map delete prints what it deleted")
eq([x["external"] for x in cli_json("map", "list")], ["EXT-O"], "the mapping is gone")
cli(HUB, "map", "delete", "--partner", partner["id"], "--kind", "item", "--external", "EXT-1", code=1)

# ---- Terminal escapes (issue 20 finding 10) ----
evil = "Sara\x1b[2J\x1b]0;owned\x07\x9b31m"
e = send("ESC-1", "A-1", name=evil, note="note\x1b[31m red\r\n")
eq(wait_delivered(e), "delivered", "an order with control characters is stored and delivered")
raw = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
for args in (("order", "show", e), ("order", "list"), ("audit", e), ("events", "list")):
    out = cli(HUB, *args).stdout
    check(not raw.search(out), f"{' '.join(args[:2])}: no raw control character in text output")
shown = cli(HUB, "order", "show", e).stdout
check("note: note\\x1b[31m red\\r\\n" in shown, f"order show escapes the note visibly ({shown[:300]})")
check("\\u001b[2J" in shown and "\\u{009b}31m" in shown, f"... and the customer's name ({shown[:600]})")
eq(cli_json("order", "show", e)["customer"]["name"], evil, "--json keeps the exact text")
hub.stop()
pos.stop()
finish()

"""`orderhub audit`: one order's status log (text and --json) and a branch's log over a time range, with clear
errors for bad input; both run with nothing more than the read-only role orderhub_auditor. Every query of the
README's auditor's guide runs, as that role, against a migrated database with real traffic, and returns what it
promises."""
import json
import os
import re
import time

from harness import HUB, POS, SOURCE, Service, admin_url, check, create_database, eq, finish, hub_env, psql, run

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
cli(HUB, "branch", "create", "--id", "DEMO-1", "--brand", "DEMO", env=henv)
partner = json.loads(cli(HUB, "partner", "create", "--name", "Platform", "--json", env=henv).stdout)
hook = "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1]
pos = Service(POS, env=penv)
cli(POS, "user", "add", "--email", "hub@demo.test", "--password", "s3cret-pass", "--brand", "DEMO", env=penv)
token = pos.request("POST", "/api/login", {"email": "hub@demo.test", "password": "s3cret-pass"})[2]["access_token"]
cli(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{pos.port}", "--token", "-", env=henv,
    input=token + "\n")
hub = Service(HUB, env=henv)


def created(order_id, item="P-BURGER", time="2024-05-01 18:00:00"):
    return {"event": "order_created", "event_time": time, "branch_id": "DEMO-1",
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": item, "quantity": 1, "price": 24, "options": []}]}}


def updated(order_id, status, time):
    return {"event": "order_updated", "event_time": time, "branch_id": "DEMO-1",
            "payload": {"order_id": order_id, "status": status}}


def post(body):
    status, _, answer = hub.request("POST", hook, body)
    eq(status, 200, f"webhook stored ({answer})")
    return answer.get("order_id") if isinstance(answer, dict) else None


a = post(created("A-1"))
post(updated("A-1", "on_the_way", "2024-05-01 18:20:00"))
post(updated("A-1", "assigned", "2024-05-01 18:05:00"))  # arrives late: recorded, not applied
b = post(created("B-1", time="2024-05-01 19:00:00"))
post(updated("B-1", "cancelled", "2024-05-01 19:10:00"))
c = post(created("C-1", item="P-NOT-ON-MENU", time="2024-05-02 09:00:00"))  # the POS refuses it
# Another platform that uses the same order id B-1 (outside the time ranges below).
other = json.loads(cli(HUB, "partner", "create", "--name", "Other", "--json", env=henv).stdout)
other_hook = "/webhooks/" + other["webhook_url"].rsplit("/webhooks/", 1)[1]
eq(hub.request("POST", other_hook, created("B-1", time="2024-05-05 10:00:00"))[0], 200, "another partner's B-1")


def job(order_id):
    return psql(hub_url, f"SELECT state FROM hub.forward_jobs WHERE order_id = '{order_id}'")


deadline = time.time() + 30
while time.time() < deadline and (job(a) != "delivered" or job(c) != "rejected"):
    time.sleep(0.1)
eq((job(a), job(c)), ("delivered", "rejected"), "A delivered, C rejected by the POS")
hub.stop()

# An auditor: a login role in orderhub_auditor and nothing else.
auditor = f"auditor_{os.getpid()}"
psql(admin_url(), f'DROP ROLE IF EXISTS "{auditor}"')
psql(admin_url(), f'CREATE ROLE "{auditor}" LOGIN IN ROLE orderhub_auditor')
scheme, rest = hub_url.split("://", 1)
auditor_url = f"{scheme}://{auditor}@{rest.split('@', 1)[1]}"
aenv = {"ORDERHUB_DATABASE_URL": auditor_url}
try:
    # One order, as JSON: the whole log, oldest first.
    r = run(HUB, "audit", a, "--json", env=aenv)
    eq(r.returncode, 0, f"audit --json as the auditor ({r.stderr.strip()})")
    rows = json.loads(r.stdout) if r.returncode == 0 else []
    statuses = [(x["status"], x["source"], x["applied"]) for x in rows]
    check(("assigned", "platform", False) in statuses and ("on_the_way", "platform", True) in statuses,
          f"audit: late update recorded, not applied ({statuses})")
    check(any(s == "pos_accepted" for s, _, _ in statuses), f"audit: the POS's acceptance ({statuses})")
    check(all(x["order_id"] == a and x["external_id"] == "A-1" for x in rows), "audit rows name the order")
    times = [x["event_time"] for x in rows if x["source"] == "platform"]
    eq(times, sorted(times), "oldest first")
    # As text: a header and one line per row.
    r = run(HUB, "audit", a, env=aenv)
    eq(r.returncode, 0, "audit (text)")
    lines = r.stdout.strip().split("\n")
    check(lines[0].split()[:3] == ["id", "status", "source"] and len(lines) == len(rows) + 1,
          f"audit text: header and rows ({r.stdout})")
    # By the platform's order id too, when one partner used it.
    r = run(HUB, "audit", "A-1", "--json", env=aenv)
    eq((r.returncode, json.loads(r.stdout) if r.returncode == 0 else None), (0, rows), "audit by platform order id")
    r = run(HUB, "audit", "B-1", env=aenv)
    eq(r.returncode, 1, "a platform order id two partners used: exit 1")
    check("several partners" in r.stderr and b in r.stderr, f"... and the hub ids to choose from ({r.stderr})")
    r = run(HUB, "audit", "no-such-order", env=aenv)
    eq(r.returncode, 1, "unknown order: exit 1")
    check("no order" in r.stderr and r.stderr.count("\n") == 1, f"unknown order: one clear line ({r.stderr})")

    # A branch over a time range (since inclusive, until exclusive), in RFC 3339 with offsets.
    r = run(HUB, "audit", "--branch", "DEMO-1", "--since", "2024-05-01T18:00:00Z", "--until",
            "2024-05-01T21:05:00+02:00", "--json", env=aenv)
    eq(r.returncode, 0, f"audit --branch ({r.stderr.strip()})")
    rng = json.loads(r.stdout) if r.returncode == 0 else []
    eq([(x["external_id"], x["status"]) for x in rng if x["source"] == "platform"],
       [("A-1", "received"), ("A-1", "assigned"), ("A-1", "on_the_way"), ("B-1", "received")],
       "the branch's platform rows from 18:00 to 19:05 UTC, by event time")
    check(all(x["branch_id"] == "DEMO-1" for x in rng), "only the branch's rows")
    r = run(HUB, "audit", "--branch", "DEMO-1", "--since", "2024-05-01T00:00:00Z", "--until", "2024-05-03T00:00:00Z",
            env=aenv)
    eq(r.returncode, 0, "audit --branch (text)")
    check("B-1" in r.stdout and "cancelled" in r.stdout and "C-1" in r.stdout, "the text range shows every order")
    for args, code, words in (
            (("--branch", "DEMO-1", "--since", "yesterday", "--until", "2024-05-03T00:00:00Z"), 2, "RFC 3339"),
            (("--branch", "DEMO-1", "--since", "2024-05-01T00:00:00", "--until", "2024-05-03T00:00:00Z"), 2,
             "offset"),
            (("--branch", "DEMO-1", "--since", "2024-05-03T00:00:00Z", "--until", "2024-05-01T00:00:00Z"), 2,
             "before"),
            (("--branch", "DEMO-1", "--since", "2024-05-01T00:00:00Z"), 2, "--until"),
            ((a, "--branch", "DEMO-1", "--since", "2024-05-01T00:00:00Z", "--until", "2024-05-03T00:00:00Z"), 2,
             "not both"),
            (("--branch", "NOWHERE", "--since", "2024-05-01T00:00:00Z", "--until", "2024-05-03T00:00:00Z"), 1,
             "NOWHERE")):
        r = run(HUB, "audit", *args, env=aenv)
        eq(r.returncode, code, f"audit {' '.join(args)}: exit {code}")
        check(words in r.stderr and r.stdout == "", f"audit {' '.join(args)}: says {words!r} ({r.stderr.strip()})")

    # The README's queries, as the auditor. One order is made two hours old so that "stuck" finds it.
    psql(hub_url, f"UPDATE hub.orders SET created_at = now() - interval '3 hours' WHERE id = '{c}'")
    readme = open(os.path.join(SOURCE, "README.md")).read()
    guide = readme[readme.index("## For auditors"):]
    block = re.search(r"```sql\n(.*?)```", guide[guide.index("Typical queries"):], re.S).group(1)
    queries = [q.strip() for q in block.split(";") if q.strip()]
    eq(len(queries), 5, "five ready queries in the auditor's guide")

    def as_auditor(sql):
        return psql(auditor_url, sql)

    results = {}
    for q in queries:
        title = q.split("\n", 1)[0]
        try:
            results[title] = as_auditor(q.replace("'…'", f"'{a}'"))
        except RuntimeError as e:
            check(False, f"README query runs as orderhub_auditor: {title}: {e}")
            results[title] = ""

    def result(word):
        return next((v for k, v in results.items() if word in k.lower()), None)

    timeline = result("timeline")
    check(timeline is not None and len(timeline.split("\n")) == len(rows) and "on_the_way" in timeline,
          f"timeline of one order ({timeline})")
    stuck = result("not delivered")
    check(stuck is not None and c in stuck and a not in stuck and b not in stuck, f"stuck orders ({stuck})")
    cancels = result("cancellations")
    check(cancels is not None and cancels.startswith("DEMO-1|2024-05-01") and cancels.endswith("|1"),
          f"cancellations per branch per day ({cancels})")
    late = result("out of order")
    check(late is not None and a in late and "assigned" in late and len(late.split("\n")) == 1,
          f"updates out of order ({late})")
    rejected = result("rejected")
    check(rejected is not None and c in rejected and "C-1" in rejected and "products.0.id" in rejected,
          f"orders rejected by the POS, with reasons ({rejected})")
    # And the role reads nothing else.
    try:
        as_auditor("SELECT count(*) FROM hub.partners")
        check(False, "the auditor cannot read partners")
    except RuntimeError:
        check(True, "")
finally:
    for _ in range(3):
        try:
            psql(admin_url(), f'DROP ROLE IF EXISTS "{auditor}"')
            break
        except RuntimeError:
            time.sleep(0.5)
pos.stop()
finish()

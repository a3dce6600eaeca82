"""`orderhub pos verify` (issue 24): against the real orderpos every rule passes and the exit code is 0, over plain
HTTP and over HTTPS verified like the forwarder (a missing CA or a host-name mismatch fails); against a POS written
for this test (nonconforming_pos.py) each kind of mistake makes exactly its rule fail and the exit code 1; the
--json shape; the test orders say so; no secret reaches the output; bad usage exits 2."""
import json
import os
import subprocess
import tempfile

from harness import HUB, POS, SOURCE, Service, check, create_database, eq, finish, run
import nonconforming_pos as fake_pos

RULES = ["login.ok", "login.wrong_password", "login.unknown_email", "orders.no_token", "orders.malformed_token",
         "orders.wrong_token", "orders.other_brand", "orders.valid", "orders.repeat", "orders.unknown_product",
         "orders.unknown_modifier", "orders.unavailable_product", "orders.missing_field", "orders.mistyped_field"]
RULE_KEYS = {"id", "section", "sends", "expected", "result", "detail", "status", "latency_ms", "body_excerpt", "error",
             "slow"}


def verify(base_url, email, password, *extra, brand="BRAND-A", json_out=True, env=None, input=None):
    args = ["pos", "verify", "--base-url", base_url, "--email", email, "--password", password, "--branch", "BR-1",
            "--brand", brand, "--product", "P-1", "--modifier", "M-1", *extra]
    if json_out:
        args.append("--json")
    return run(HUB, *args, env=env, input=input, timeout=120)


def results(r):
    doc = json.loads(r.stdout)
    return doc, {row["id"]: row["result"] for row in doc["rules"]}


def check_shape(doc, what):
    eq(sorted(doc), sorted(["base_url", "branch", "brand", "reference_prefix", "transport", "forward_timeout_ms", "ok",
                            "rules", "summary"]), f"{what}: top-level keys")
    eq([row["id"] for row in doc["rules"]], RULES, f"{what}: every rule, in order")
    for row in doc["rules"]:
        eq(set(row), RULE_KEYS, f"{what}: keys of {row['id']}")
        check(row["result"] in ("passed", "failed", "not_checked"), f"{what}: result word of {row['id']}")
        check(isinstance(row["slow"], bool), f"{what}: slow is a boolean")
        if row["result"] == "not_checked":
            check(row["status"] is None and row["latency_ms"] is None, f"{what}: {row['id']} sent nothing")
        else:
            check(isinstance(row["latency_ms"], int), f"{what}: {row['id']} has a latency")
    eq(sorted(doc["summary"]), ["failed", "not_checked", "passed", "slow"], f"{what}: summary keys")
    eq(sum(doc["summary"][k] for k in ("passed", "failed", "not_checked")), len(RULES), f"{what}: summary adds up")
    check(doc["reference_prefix"].startswith("orderhub-verify:"), f"{what}: the reference prefix says so")


# --- the real orderpos ------------------------------------------------------------------------------------------
url = create_database()
penv = {"ORDERPOS_DATABASE_URL": url}
tmp = tempfile.mkdtemp(prefix="pos_verify_")
menu = {"brands": [{"id": "BRAND-A"}, {"id": "BRAND-B"}],
        "branches": [{"id": "BR-1", "brand_id": "BRAND-A"}, {"id": "BR-2", "brand_id": "BRAND-A"},
                     {"id": "BR-B", "brand_id": "BRAND-B"}],
        "products": [{"id": "P-1", "brand_id": "BRAND-A", "name": "Burger", "price": 20, "branches": ["BR-1"]},
                     {"id": "P-2", "brand_id": "BRAND-A", "name": "Fries", "price": 7.5, "branches": ["BR-2"]},
                     {"id": "P-B", "brand_id": "BRAND-B", "name": "Other", "price": 1, "branches": ["BR-B"]}],
        "modifiers": [{"id": "M-1", "brand_id": "BRAND-A", "name": "Cheese", "price": 2.5}]}
with open(os.path.join(tmp, "menu.json"), "w") as f:
    json.dump(menu, f)
eq(run(POS, "migrate", env=penv).returncode, 0, "orderpos migrate")
eq(run(POS, "menu", "load", os.path.join(tmp, "menu.json"), env=penv).returncode, 0, "orderpos menu load")
POS_PASSWORD = "brand-a-password"
for email, password, brand in (("ops@a.example", POS_PASSWORD, "BRAND-A"), ("ops@b.example", "brand-b-pw", "BRAND-B")):
    r = run(POS, "user", "add", "--email", email, "--password", password, "--brand", brand, env=penv)
    eq(r.returncode, 0, f"orderpos user add {email}: {r.stderr}")
pos = Service(POS, env=penv)
pos_url = f"http://127.0.0.1:{pos.port}"
other_token = pos.request("POST", "/api/login", {"email": "ops@b.example", "password": "brand-b-pw"})[2]["access_token"]

full = ("--unavailable-product", "P-2", "--other-brand-token", other_token)
r = verify(pos_url, "ops@a.example", POS_PASSWORD, *full)
eq(r.returncode, 0, f"orderpos conforms: exit 0 ({r.stdout} {r.stderr})")
doc, got = results(r)
check_shape(doc, "orderpos --json")
eq(got, {rule: "passed" for rule in RULES}, "orderpos: every rule passed")
eq(doc["ok"], True, "orderpos: ok")
eq(doc["transport"], "plain HTTP: no certificate to verify", "orderpos: plain HTTP said so")
repeat = next(row for row in doc["rules"] if row["id"] == "orders.repeat")
check("not verifiable" in repeat["detail"], f"the repeat says what it could not verify: {repeat['detail']}")
check(POS_PASSWORD not in r.stdout + r.stderr and other_token not in r.stdout + r.stderr,
      "no password or token in the output")
login_row = next(row for row in doc["rules"] if row["id"] == "login.ok")
eq(login_row["body_excerpt"], '{"access_token":"[redacted]"}', "the login answer's token is redacted")

# The test orders at the POS: labelled, noted, and the repeated reference made one order, not two.
listed = json.loads(run(POS, "orders", "list", "--json", env=penv).stdout)["orders"]
prefix = doc["reference_prefix"]
mine = [o for o in listed if o["partner_reference"].startswith(prefix)]
eq([o["partner_reference"] for o in mine], [f"{prefix}-order"], "orderpos holds exactly one test order")
check(all(o["partner_reference"].startswith("orderhub-verify:") for o in listed), "every order is a labelled test")
check("TEST ORDER" in (mine[0].get("note") or "") if mine else False, f"the test order's note says so: {mine}")

# Text output: one line per rule, and the options not given are not checked (exit 0 all the same).
r = verify(pos_url, "ops@a.example", "-", json_out=False, input=POS_PASSWORD + "\n")
eq(r.returncode, 0, f"text run exit 0: {r.stdout} {r.stderr}")
lines = r.stdout.splitlines()
eq(len([l for l in lines if l.startswith("passed ")]), len(RULES) - 2, "text: a passed line per checked rule")
check(any(l.startswith("not checked  orders.other_brand") and "--other-brand-token not given" in l for l in lines),
      f"text: other brand not checked, and why: {r.stdout}")
check(any(l.startswith("not checked  orders.unavailable_product") for l in lines), "text: unavailable not checked")
check(lines[-1].startswith("summary: 14 rules: 12 passed, 0 failed, 2 not checked"), f"text summary: {lines[-1]}")
check(POS_PASSWORD not in r.stdout + r.stderr, "the password read from stdin is not echoed")

# A wrong password for the run: login.ok fails, the rules that need its token are not checked, exit 1.
r = verify(pos_url, "ops@a.example", "not-the-password")
eq(r.returncode, 1, "wrong credentials: exit 1")
doc, got = results(r)
eq(got["login.ok"], "failed", "wrong credentials: login.ok failed")
eq(got["orders.valid"], "not_checked", "wrong credentials: orders.valid not checked")
eq(got["orders.no_token"], "passed", "wrong credentials: the token refusals are still checked")

# --- HTTPS: the forwarder's verification ------------------------------------------------------------------------
certs = tempfile.mkdtemp(prefix="pos_verify_certs_")
subprocess.run([os.path.join(SOURCE, "deploy", "make-cert.sh"), certs], check=True, capture_output=True)
for cert, ca, ok, what in (("server", True, True, "HTTPS with --ca-file"),
                           ("server", False, False, "HTTPS without the CA"),
                           ("wrong", True, False, "HTTPS with a certificate for another host")):
    tls = Service(POS, env={**penv, "ORDERPOS_TLS_CERT": f"{certs}/{cert}.pem", "ORDERPOS_TLS_KEY": f"{certs}/{cert}.key"})
    extra = ("--ca-file", f"{certs}/ca.pem") if ca else ()
    r = verify(f"https://127.0.0.1:{tls.port}", "ops@a.example", POS_PASSWORD, *extra)
    doc, got = results(r)
    if ok:
        eq(r.returncode, 0, f"{what}: exit 0 ({r.stdout})")
        check("--ca-file" in doc["transport"], f"{what}: the transport names the CA file: {doc['transport']}")
    else:
        eq(r.returncode, 1, f"{what}: exit 1")
        login_row = doc["rules"][0]
        eq(login_row["result"], "failed", f"{what}: login.ok failed")
        check("tls" in (login_row["error"] or "").lower() or "tls" in login_row["detail"].lower(),
              f"{what}: the reason names TLS: {login_row}")
        eq(set(got[rule] for rule in RULES[1:]), {"not_checked"}, f"{what}: nothing more was sent")
    eq(tls.stop(), 0, f"{what}: TLS orderpos stops")

# --- a POS that makes mistakes ----------------------------------------------------------------------------------
fake = fake_pos.FakePos()
fake_full = ("--unavailable-product", "P-2", "--other-brand-token", fake_pos.OTHER_TOKEN)


def fake_run(*extra, json_out=True):
    return verify(fake.url(), fake_pos.EMAIL, fake_pos.PASSWORD, *fake_full, *extra, json_out=json_out)


r = fake_run()
eq(r.returncode, 0, f"the test POS in mode conform passes: {r.stdout}")
doc, got = results(r)
eq(got, {rule: "passed" for rule in RULES}, "conform: every rule passed")
check(all(o["partner_reference"].startswith("orderhub-verify:") and "TEST ORDER" in o["note"] for o in fake.received),
      "every order the test POS accepted is a labelled test order")
for mode, broken in fake_pos.MISTAKES.items():
    fake.mode = mode
    r = fake_run()
    eq(r.returncode, 1, f"mode {mode}: exit 1")
    doc, got = results(r)
    check_shape(doc, f"mode {mode}")
    eq(sorted(rule for rule, result in got.items() if result != "passed"), [broken], f"mode {mode}: only {broken} fails")
    eq(doc["ok"], False, f"mode {mode}: ok is false")
    row = next(row for row in doc["rules"] if row["id"] == broken)
    check(row["section"] and row["expected"], f"mode {mode}: the failure names its section and expectation")
    out = r.stdout + r.stderr
    check(fake_pos.PASSWORD not in out and fake_pos.TOKEN not in out and fake_pos.OTHER_TOKEN not in out,
          f"mode {mode}: no secret in the output")

# The text line of a failure: expected, actual status, the body excerpt and the interface section.
fake.mode = "modifier_500"
r = fake_run(json_out=False)
line = next(l for l in r.stdout.splitlines() if "orders.unknown_modifier" in l)
check(line.startswith("FAILED       orders.unknown_modifier [interface 4.1 rule 4, 7]"), f"failure line: {line}")
check("got 500 in" in line and "Server Error" in line and "the hub would retry it" in line, f"failure line: {line}")

# Answers slower than the hub's forward time-out are flagged, not failed.
fake.mode = "conform"
fake.delay = 0.3
r = fake_run("--forward-timeout-ms", "100")
eq(r.returncode, 0, "slow answers: still exit 0")
doc, got = results(r)
eq(doc["summary"]["slow"], len(RULES), "every answer slower than 100 ms is flagged")
eq(doc["forward_timeout_ms"], 100, "the forward time-out used")
r = fake_run("--forward-timeout-ms", "100", json_out=False)
check("WARNING: slower than the hub's forward time-out (100 ms)" in r.stdout, f"slow warning: {r.stdout}")
fake.delay = 0
fake.stop()

# A POS that is not there: login.ok fails with the reason, nothing else is sent.
r = verify(fake.url(), fake_pos.EMAIL, fake_pos.PASSWORD)
eq(r.returncode, 1, "no POS: exit 1")
doc, got = results(r)
eq(doc["rules"][0]["error"] is not None and "refused" in (doc["rules"][0]["detail"]), True,
   f"no POS: the reason: {doc['rules'][0]}")
eq(set(got[rule] for rule in RULES[1:]), {"not_checked"}, "no POS: the other rules are not checked")

# Bad usage: exit 2, nothing sent.
eq(run(HUB, "pos", "verify", "--base-url", pos_url, "--email", "e", "--password", "p").returncode, 2,
   "missing options: exit 2")
r = verify("ftp://127.0.0.1:1", "e", "p")
eq(r.returncode, 2, "a base URL that is not http(s): exit 2")
r = verify(pos_url, "e", "p", "--forward-timeout-ms", "0")
eq(r.returncode, 2, "a forward time-out out of range: exit 2")
r = verify(pos_url, "e", "p", "--ca-file", os.path.join(tmp, "missing.pem"))
eq(r.returncode, 1, "an unreadable CA file: exit 1")
h = run(HUB, "pos", "verify", "--help")
eq(h.returncode, 0, "pos verify --help")
for option in ("--base-url", "--email", "--password", "--branch", "--product", "--modifier", "--unavailable-product",
               "--other-brand-token", "--ca-file", "--json"):
    check(option in h.stdout, f"--help lists {option}")

eq(pos.stop(), 0, "orderpos stops")
finish()

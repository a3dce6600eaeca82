"""Standard Webhooks signatures against an independent implementation: requests signed by the npm package
`standardwebhooks` (tests/interop, installed by tests/run.sh) reach the real orderhub, which accepts them and
refuses tampered bodies, wrong secrets, stale or future timestamps and unsigned requests with one 401 answer,
recording the precise reason in the inbox. Also: rotate-secret with its grace period, secrets that cannot be
opened, and `secrets rotate-key`."""
import base64
import json
import os
import subprocess
import sys
import time

from harness import HUB, SOURCE, Service, check, create_database, eq, finish, hub_env, psql, run

INTEROP = os.path.join(SOURCE, "tests", "interop")
if not os.path.isfile(os.path.join(INTEROP, "node_modules", "standardwebhooks", "package.json")):
    # Not a skip: the interop test is part of the suite, and tests/run.sh installs the package.
    print("FAIL: tests/interop/node_modules/standardwebhooks is missing: run "
          "`(cd tests/interop && npm ci --no-audit --no-fund)` (tests/run.sh does)", flush=True)
    print("0 passed, 1 failed")
    sys.exit(1)


def lib_sign(requests):
    """Headers computed by the npm library for each {id, timestamp, body, secret} (secrets go through stdin)."""
    out = subprocess.run(["node", os.path.join(INTEROP, "sign.js")], input=json.dumps(requests),
                         capture_output=True, text=True, timeout=60, cwd=INTEROP)
    if out.returncode != 0:
        raise RuntimeError(f"sign.js failed: {out.stderr}")
    return json.loads(out.stdout)


# The library reproduces the spec's own test vector: the interop harness itself is sound.
vector = lib_sign({"id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "timestamp": 1614265330, "body": '{"test": 2432232314}',
                   "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
eq(vector["webhook-signature"], "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", "npm library: spec test vector")

url = create_database()
env = hub_env(url)
eq(run(HUB, "migrate", env=env).returncode, 0, "migrate")
eq(run(HUB, "branch", "create", "--id", "B-1", "--brand", "BR", env=env).returncode, 0, "branch create")

# --signing needs the key that seals the secret: a clear error, nothing written.
no_key = {k: v for k, v in env.items()}
no_key["ORDERHUB_SECRET_KEY"] = ""
r = run(HUB, "partner", "create", "--name", "Keyless", "--signing", env=no_key)
eq(r.returncode, 1, "partner create --signing without ORDERHUB_SECRET_KEY: exit 1")
check("ORDERHUB_SECRET_KEY" in r.stderr, f"... with a clear message: {r.stderr!r}")
eq(psql(url, "SELECT count(*) FROM hub.partners WHERE id <> 'operator'"), "0",
   "... and nothing written")


def create(name, *extra):
    r = run(HUB, "partner", "create", "--name", name, "--json", *extra, env=env)
    eq(r.returncode, 0, f"partner create {name}: {r.stderr}")
    p = json.loads(r.stdout)
    p["path"] = "/webhooks/" + p["webhook_url"].rsplit("/webhooks/", 1)[1]
    return p


signed = create("Signed Platform", "--signing")
plain = create("Plain Platform")
check(signed.get("signing_secret", "").startswith("whsec_"), "partner create --signing prints a whsec_ secret")
check(len(base64.b64decode(signed["signing_secret"][len("whsec_"):])) == 32, "... of 32 random bytes")
check("signing_secret" not in plain, "an unsigned partner has no secret")
secret = signed["signing_secret"]
# A partner without signing cannot rotate a secret.
r = run(HUB, "partner", "rotate-secret", plain["id"], env=env)
eq(r.returncode, 1, "rotate-secret of an unsigned partner: exit 1")
check("--signing" in r.stderr, f"... says why: {r.stderr!r}")


def order(order_id):
    return json.dumps({
        "event": "order_created", "event_time": "2024-05-01 18:02:11", "branch_id": "B-1",
        "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                    "subtotal": 10, "tax": 1.5, "discount": 0, "total": 11.5, "is_schedule": 0,
                    "schedule_date": None, "car_data": None,
                    "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                    "items": [{"id": "burger", "quantity": 1, "price": 10, "options": []}]}})


_ids = iter(range(1, 1_000_000))


def signed_request(body, key=secret, offset=0):
    return {"id": f"msg_{next(_ids)}", "timestamp": int(time.time()) + offset, "body": body, "secret": key}


svc = Service(HUB, "--role", "api", env=env)
refusals = []


def post(path, body, headers):
    status, _, answer = svc.request("POST", path, body.encode(), headers)
    if status == 401:
        refusals.append(answer)
    return status, answer


# Accepted: a request signed by the library.
body = order("S-1")
status, answer = post(signed["path"], body, lib_sign(signed_request(body)))
eq(status, 200, f"library-signed request: 200 ({answer})")
check(isinstance(answer, dict) and answer.get("status") == "success" and answer.get("order_id"), "... stored")

# Tampered body: signed, then one byte changed.
body = order("S-2")
headers = lib_sign(signed_request(body))
eq(post(signed["path"], body.replace("Sara", "Sarb"), headers)[0], 401, "tampered body: 401")
# Wrong secret.
other = "whsec_" + base64.b64encode(os.urandom(32)).decode()
eq(post(signed["path"], body, lib_sign(signed_request(body, key=other)))[0], 401, "wrong secret: 401")
# Stale (more than 5 minutes old) and future (more than 5 minutes ahead) timestamps, correctly signed.
eq(post(signed["path"], body, lib_sign(signed_request(body, offset=-330)))[0], 401, "timestamp 5.5 min old: 401")
eq(post(signed["path"], body, lib_sign(signed_request(body, offset=330)))[0], 401, "timestamp 5.5 min ahead: 401")
# Unsigned.
eq(post(signed["path"], body, {})[0], 401, "unsigned request to a signing partner: 401")
# A timestamp that is not a number.
bad_ts = dict(headers, **{"webhook-timestamp": "soon"})
eq(post(signed["path"], body, bad_ts)[0], 401, "malformed timestamp: 401")

# Several signatures, one valid (and entries of another version), with extra spaces.
body = order("S-3")
headers = lib_sign(signed_request(body))
wrong = lib_sign(signed_request(body, key=other))["webhook-signature"]
headers["webhook-signature"] = f"{wrong}  v2,{wrong[3:]}   {headers['webhook-signature']} {wrong}"
status, answer = post(signed["path"], body, headers)
eq(status, 200, f"several signatures, one valid: 200 ({answer})")

# One answer for every refusal, which tells nothing about the reason.
expected = {"status": "failed", "order_id": "",
            "error": {"code": "invalid_signature", "message": refusals[0]["error"]["message"], "details": []}}
for i, a in enumerate(refusals):
    eq(a, expected, f"refusal {i}: the same body")
for word in ("stale", "mismatch", "missing", "expired", "timestamp"):
    check(word not in json.dumps(refusals[0]).lower().replace("webhook-timestamp", ""),
          f"the refusal does not say '{word}'")

# The inbox records every refusal with its precise reason and the raw body.
rows = psql(url, f"SELECT error_code || ':' || count(*) FROM hub.inbox WHERE partner_id = '{signed['id']}' "
                 "AND http_status = 401 AND outcome = 'rejected' GROUP BY error_code ORDER BY error_code")
eq(rows.split("\n"), ["signature_malformed:1", "signature_mismatch:2", "signature_missing:1", "signature_stale:2"],
   "inbox: refusals with their reasons")
check("Sarb" in psql(url, "SELECT convert_from(body, 'UTF8') FROM hub.inbox WHERE error_code = 'signature_mismatch' "
                          "ORDER BY id LIMIT 1"), "inbox: the tampered body as received")
eq(psql(url, f"SELECT count(*) FROM hub.inbox WHERE partner_id = '{signed['id']}' AND http_status = 200"), "2",
   "inbox: the accepted requests")
eq(psql(url, "SELECT count(*) FROM hub.orders"), "2", "only the accepted requests were stored")

# A refused request cannot be replayed: its sender was never authenticated.
refused_id = psql(url, "SELECT id FROM hub.inbox WHERE error_code = 'signature_mismatch' ORDER BY id LIMIT 1")
r = run(HUB, "events", "replay", refused_id, env=env)
eq(r.returncode, 1, "events replay of a signature refusal: exit 1")
check("signature" in r.stderr, f"... says why: {r.stderr!r}")
eq(psql(url, "SELECT count(*) FROM hub.orders"), "2", "... and stores nothing")

# Unsigned partners are unaffected.
status, answer = post(plain["path"], order("P-1"), {})
eq(status, 200, f"unsigned partner: 200 ({answer})")

# A request refused for its signature keeps only a prefix of its body (4 KiB) and its full size: anyone can send
# them, up to the body limit each (issue 20, finding 5).
big = order("BIG-1").replace('"note": ""', '"note": "' + "x" * 200_000 + '"')
eq(post(signed["path"], big, {})[0], 401, "a large unsigned request: 401")
last_refusal = "(SELECT max(id) FROM hub.inbox WHERE http_status = 401)"
eq(psql(url, f"SELECT octet_length(body) FROM hub.inbox WHERE id = {last_refusal}"), "4096",
   "inbox: a refused request keeps a 4 KiB prefix of its body")
eq(psql(url, f"SELECT body_size FROM hub.inbox WHERE id = {last_refusal}"), str(len(big.encode())),
   "inbox: ... and its full size")
eq(psql(url, "SELECT count(*) FROM hub.inbox WHERE body_size IS NOT NULL"), "1",
   "inbox: whole bodies have no separate size")

# A signed request sent again with the same webhook-id within the window is answered like an exact repeat, by this
# hub or another on the same database; nothing new is stored, and one inbox row marks the replay (finding 14).
inbox_count = f"SELECT count(*) FROM hub.inbox WHERE partner_id = '{signed['id']}'"
for label, body in (("an accepted request", order("RP-1")), ("a refused request", order("RP-2").replace("B-1", "B-9"))):
    headers = lib_sign(signed_request(body))
    first = post(signed["path"], body, headers)
    orders_before = psql(url, "SELECT count(*) FROM hub.orders")
    inbox_before = int(psql(url, inbox_count))
    other_hub = Service(HUB, "--role", "api", env=env)
    try:
        for n in range(3):
            again = post(signed["path"], body, headers)
            eq(again, first, f"{label}, replay {n + 1}: the first answer")
        status, _, answer = other_hub.request("POST", signed["path"], body.encode(), headers)
        eq((status, answer), first, f"{label}, replayed to another hub: the first answer")
    finally:
        other_hub.stop()
    eq(psql(url, "SELECT count(*) FROM hub.orders"), orders_before, f"{label}: replays store no order")
    eq(int(psql(url, inbox_count)), inbox_before + 1, f"{label}: one inbox row for all the replays")
    eq(psql(url, f"SELECT count(*) FROM hub.inbox WHERE outcome = 'replay' AND headers->>'webhook-id' = "
                 f"'{headers['webhook-id']}'"), "1", f"{label}: ... marked replay")

# Rotation: the new secret works at once, the old one during the grace period.
r = run(HUB, "partner", "rotate-secret", signed["id"], "--json", env=env)
eq(r.returncode, 0, f"rotate-secret: {r.stderr}")
rotated = json.loads(r.stdout)
new_secret = rotated["signing_secret"]
check(new_secret.startswith("whsec_") and new_secret != secret, "rotate-secret prints a new secret")
time.sleep(2.5)  # the hub caches a partner's secrets for 2 seconds
for n, key in enumerate((new_secret, secret)):
    body = order(f"R-{n}")
    status, answer = post(signed["path"], body, lib_sign(signed_request(body, key=key)))
    eq(status, 200, f"after rotate-secret, the {'new' if n == 0 else 'old'} secret: 200 ({answer})")
# Both at once, as a sender rotating its own side would sign.
body = order("R-both")
both = signed_request(body, key=new_secret)
h_new, h_old = lib_sign([both, dict(both, secret=secret)])
h_new["webhook-signature"] += " " + h_old["webhook-signature"]
eq(post(signed["path"], body, h_new)[0], 200, "both secrets' signatures in one header: 200")

# No grace: the old secret stops at once.
r = run(HUB, "partner", "rotate-secret", signed["id"], "--grace-hours", "0", "--json", env=env)
eq(r.returncode, 0, f"rotate-secret --grace-hours 0: {r.stderr}")
newest = json.loads(r.stdout)["signing_secret"]
time.sleep(2.5)
body = order("R-9")
eq(post(signed["path"], body, lib_sign(signed_request(body, key=secret)))[0], 401, "expired secret: 401")
status, answer = post(signed["path"], body, lib_sign(signed_request(body, key=newest)))
eq(status, 200, f"the newest secret: 200 ({answer})")
eq(svc.stop(), 0, "hub stops")

# A hub whose ORDERHUB_SECRET_KEY did not seal the secrets refuses signed webhooks (401) and logs an error.
other_key = os.urandom(32).hex()
wrong_hub = Service(HUB, "--role", "api", env=hub_env(url, ORDERHUB_SECRET_KEY=other_key))
body = order("W-1")
status, _, answer = wrong_hub.request("POST", signed["path"], body.encode(),
                                      lib_sign(signed_request(body, key=newest)))
eq(status, 401, "secrets sealed under another key: 401")
eq(answer, expected, "... with the same refusal body")
eq(wrong_hub.request("POST", plain["path"], order("W-2").encode())[0], 200, "... unsigned partners still work")
eq(wrong_hub.stop(), 0, "that hub stops")
errors = [json.loads(line) for line in wrong_hub.lines if line.startswith("{") and '"error"' in line]
check(any(e.get("partner_id") == signed["id"] and "cannot be opened" in e.get("msg", "") for e in errors),
      "... and logs an error naming the partner")
eq(psql(url, "SELECT count(*) FROM hub.inbox WHERE error_code = 'signature_secret_unreadable'"), "1",
   "... recorded in the inbox")

# secrets rotate-key: every sealed value under a new key in one transaction; the hub then runs with the new key.
new_key = os.urandom(32).hex()
r = run(HUB, "secrets", "rotate-key", "--json", env=hub_env(url, ORDERHUB_NEW_SECRET_KEY=new_key))
eq(r.returncode, 0, f"secrets rotate-key: {r.stderr}")
counts = json.loads(r.stdout)
eq(counts.get("signing_secrets"), 3, "rotate-key: the three signing secrets re-sealed")
check(new_key not in r.stdout + r.stderr and env["ORDERHUB_SECRET_KEY"] not in r.stdout + r.stderr,
      "rotate-key prints no key")
# Again with the old key: nothing opens any more, nothing changes, the row is named.
before = psql(url, "SELECT string_agg(secret_sealed, ',' ORDER BY id) FROM hub.partner_signing_secrets")
r = run(HUB, "secrets", "rotate-key", "--new-key", "-", env=env, input=os.urandom(32).hex() + "\n")
eq(r.returncode, 1, "rotate-key with a key that did not seal the values: exit 1")
check("hub.partner_signing_secrets" in r.stderr and "nothing was changed" in r.stderr, f"... names it: {r.stderr!r}")
eq(psql(url, "SELECT string_agg(secret_sealed, ',' ORDER BY id) FROM hub.partner_signing_secrets"), before,
   "... and changes nothing")
new_hub = Service(HUB, "--role", "api", env=hub_env(url, ORDERHUB_SECRET_KEY=new_key))
body = order("K-1")
status, _, answer = new_hub.request("POST", signed["path"], body.encode(), lib_sign(signed_request(body, key=newest)))
eq(status, 200, f"the hub restarted with the new key accepts signed webhooks ({answer})")
eq(new_hub.stop(), 0, "new-key hub stops")
# Back with --new-key - from standard input.
r = run(HUB, "secrets", "rotate-key", "--new-key", "-", env=hub_env(url, ORDERHUB_SECRET_KEY=new_key),
        input=env["ORDERHUB_SECRET_KEY"] + "\n")
eq(r.returncode, 0, f"rotate-key --new-key - (stdin): {r.stderr}")

finish()

"""No secret leaks: the real orderhub (api and forwarder roles), orderpos and the operator CLI run with a webhook
key, a Standard Webhooks signing secret, POS tokens and passwords and ORDERHUB_SECRET_KEY in play, through
successes and failures (bad signatures, a POS 401 and a failed login, a wrong key). Every log line, every HTTP
answer, every CLI output (except the one-time display of a secret by the command that issues it), and the text
columns an operator reads are searched for each known secret; any hit fails."""
import base64
import hashlib
import hmac
import json
import os
import time

from harness import (HUB, POS, SOURCE, SECRET_KEY, Service, check, create_database, eq, finish, hub_env, psql,
                     run)

hub_url = create_database()
pos_url = create_database()
henv = hub_env(hub_url)
penv = {"ORDERPOS_DATABASE_URL": pos_url}

secrets = {"ORDERHUB_SECRET_KEY": SECRET_KEY, "ORDERHUB_SECRET_KEY (upper case)": SECRET_KEY.upper()}
texts = []  # (where, text) of everything that must not hold a secret


def keep(where, text):
    texts.append((where, text if isinstance(text, str) else json.dumps(text)))


def cli(binary, *args, env, input=None, shows_secret=False, expect=0):
    r = run(binary, *args, env=env, input=input)
    eq(r.returncode, expect, f"{' '.join(args[:2])}: exit {expect} ({r.stderr.strip()})")
    if not shows_secret:
        keep(f"cli: {' '.join(args[:3])}", r.stdout + r.stderr)
    else:
        keep(f"cli stderr: {' '.join(args[:3])}", r.stderr)
    return r


pos_password = "pw-" + base64.urlsafe_b64encode(os.urandom(18)).decode()
wrong_password = "wrong-" + base64.urlsafe_b64encode(os.urandom(18)).decode()
bad_token = "badtoken-" + base64.urlsafe_b64encode(os.urandom(18)).decode()
secrets.update({"POS password": pos_password, "wrong POS password": wrong_password, "bad POS token": bad_token})

cli(HUB, "migrate", env=henv)
cli(POS, "migrate", env=penv)
cli(POS, "menu", "load", os.path.join(SOURCE, "deploy", "demo-menu.json"), env=penv)
cli(POS, "user", "add", "--email", "hub@demo.test", "--password", "-", "--brand", "DEMO", env=penv,
    input=pos_password + "\n")
cli(HUB, "branch", "create", "--id", "DEMO-1", "--brand", "DEMO", env=henv)

signed = json.loads(cli(HUB, "partner", "create", "--name", "Signed", "--signing", "--json", env=henv,
                        shows_secret=True).stdout)
plain = json.loads(cli(HUB, "partner", "create", "--name", "Plain", "--json", env=henv, shows_secret=True).stdout)
signing_secret = signed["signing_secret"]
signing_b64 = signing_secret[len("whsec_"):]
signing_key = base64.b64decode(signing_b64)
secrets.update({"signing secret": signing_secret, "signing secret (base64 part)": signing_b64,
                "signing key (hex)": signing_key.hex()})
signed_path = "/webhooks/" + signed["webhook_url"].rsplit("/webhooks/", 1)[1]
plain_path = "/webhooks/" + plain["webhook_url"].rsplit("/webhooks/", 1)[1]
secrets["signed partner's webhook key"] = signed_path.rsplit("/", 1)[1]
secrets["plain partner's webhook key"] = plain_path.rsplit("/", 1)[1]
# --help never shows a value taken from the environment.
for words in (("serve",), ("pos", "set"), ("partner", "create"), ("partner", "rotate-secret"),
              ("secrets", "rotate-key")):
    cli(HUB, *words, "--help", env=hub_env(hub_url, ORDERHUB_NEW_SECRET_KEY=SECRET_KEY[::-1]))
secrets["the new key given to --help"] = SECRET_KEY[::-1]

pos = Service(POS, env=penv)
pos_base = f"http://127.0.0.1:{pos.port}"
status, _, body = pos.request("POST", "/api/login", {"email": "hub@demo.test", "password": pos_password})
eq(status, 200, "POS login")
secrets["POS token"] = body["access_token"]
status, _, body = pos.request("POST", "/api/login", {"email": "hub@demo.test", "password": wrong_password})
eq(status, 401, "POS login with a wrong password")
keep("POS answer", body)

# A wrong token with good credentials: the forwarder gets a 401, logs in, retries.
cli(HUB, "pos", "set", "--brand", "DEMO", "--base-url", pos_base, "--token", bad_token, "--email", "hub@demo.test",
    "--password", "-", env=henv, input=pos_password + "\n")

api = Service(HUB, "--role", "api", env=henv)
fwd = Service(HUB, "--role", "forwarder", env=henv)


def order(order_id):
    return json.dumps({"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "DEMO-1",
                       "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                                   "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                                   "schedule_date": None, "car_data": None,
                                   "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                                   "items": [{"id": "P-BURGER", "quantity": 1, "price": 24, "options": []}]}})


def sign(body, key=signing_key, ts=None, msg_id="msg_1"):
    ts = str(ts if ts is not None else int(time.time()))
    tag = hmac.new(key, f"{msg_id}.{ts}.{body}".encode(), hashlib.sha256).digest()
    return {"webhook-id": msg_id, "webhook-timestamp": ts, "webhook-signature": "v1," + base64.b64encode(tag).decode()}


def post(path, body, headers=None):
    status, hdrs, answer = api.request("POST", path, body.encode() if isinstance(body, str) else body, headers)
    keep(f"answer {status}", json.dumps(hdrs) + json.dumps(answer))
    return status, answer


status, answer = post(signed_path, order("L-1"), sign(order("L-1")))
eq(status, 200, f"signed order stored ({answer})")
first = answer.get("order_id", "") if isinstance(answer, dict) else ""
eq(post(signed_path, order("L-2"), sign(order("L-2"), key=os.urandom(32)))[0], 401, "wrong signature: 401")
eq(post(signed_path, order("L-2"), sign(order("L-2"), ts=int(time.time()) - 3600))[0], 401, "stale: 401")
eq(post(signed_path, order("L-2"))[0], 401, "unsigned: 401")
eq(post(plain_path, "{not json")[0], 400, "bad JSON: 400")
eq(post(plain_path, order("L-3").replace('"DELIVERY"', '"TELEPORT"'))[0], 422, "invalid: 422")
eq(post("/webhooks/" + secrets["plain partner's webhook key"][::-1], order("L-4"))[0], 404, "unknown key: 404")


def job(order_id):
    return psql(hub_url, f"SELECT state FROM hub.forward_jobs WHERE order_id = '{order_id}'")


def wait_state(order_id, states, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline and job(order_id) not in states:
        time.sleep(0.1)
    return job(order_id)


eq(wait_state(first, {"delivered"}), "delivered", "POS 401, login, delivered")
eq(psql(hub_url, f"SELECT string_agg(outcome, ',' ORDER BY id) FROM hub.pos_delivery_attempts "
                 f"WHERE order_id = '{first}'"), "unauthorized,logged_in,delivered", "the attempts of a POS 401")

# A wrong token and a wrong password: 401, a failed login, auth_failed.
cli(HUB, "pos", "set", "--brand", "DEMO", "--base-url", pos_base, "--token", "-", "--email", "hub@demo.test",
    "--password", wrong_password, env=henv, input=bad_token + "\n")
status, answer = post(plain_path, order("L-5"))
eq(status, 200, "unsigned partner's order stored")
eq(wait_state(answer.get("order_id", ""), {"auth_failed"}), "auth_failed", "failed login: auth_failed")

# A forwarder with another key cannot open the stored token and password.
fwd.stop()
cli(HUB, "pos", "set", "--brand", "DEMO", "--base-url", pos_base, "--token", secrets["POS token"], env=henv)
wrong_key = os.urandom(32).hex()
secrets["another ORDERHUB_SECRET_KEY"] = wrong_key
fwd_wrong = Service(HUB, "--role", "forwarder", env=hub_env(hub_url, ORDERHUB_SECRET_KEY=wrong_key))
status, answer = post(plain_path, order("L-6"))
eq(wait_state(answer.get("order_id", ""), {"auth_failed"}), "auth_failed", "token sealed under another key")
fwd_wrong.stop()

# Operator commands that read what was stored, and their failures.
for args in (("partner", "list"), ("pos", "list"), ("events", "list"), ("order", "list"), ("order", "show", first),
             ("events", "replay", psql(hub_url, "SELECT min(id) FROM hub.inbox WHERE error_code LIKE 'signature%'")),
             ("events", "replay", psql(hub_url, "SELECT min(id) FROM hub.inbox WHERE http_status = 422"))):
    cli(HUB, *args, env=henv, expect=1 if args[:2] == ("events", "replay") else 0)
secrets["a malformed key"] = "zz" * 32
cli(HUB, "partner", "create", "--name", "Keyless", "--signing", env=hub_env(hub_url, ORDERHUB_SECRET_KEY="zz" * 32),
    expect=1)
rotated = cli(HUB, "partner", "rotate-secret", signed["id"], "--json", env=henv, shows_secret=True)
secrets["rotated signing secret"] = json.loads(rotated.stdout)["signing_secret"]
new_key = os.urandom(32).hex()
secrets["new ORDERHUB_SECRET_KEY"] = new_key
cli(HUB, "secrets", "rotate-key", "--new-key", "-", env=hub_env(hub_url, ORDERHUB_SECRET_KEY=wrong_key),
    input=new_key + "\n", expect=1)
cli(HUB, "secrets", "rotate-key", "--new-key", "-", env=henv, input="not-a-key-" + new_key + "\n", expect=1)
cli(HUB, "secrets", "rotate-key", env=hub_env(hub_url, ORDERHUB_NEW_SECRET_KEY=new_key))

# A hub whose key no longer opens the signing secrets: a refusal and an error log line.
time.sleep(2.5)  # the partner cache (2 s) forgets the secrets opened before the rotation
eq(post(signed_path, order("L-7"), sign(order("L-7")))[0], 401, "a hub with the old key after rotate-key: 401")
check(any("cannot be opened" in line for line in api.lines), "... logs an error")
# A customer phone the validator refuses must not be echoed either.
bad_phone = "+9665000000012345"
eq(post(plain_path, order("L-9").replace("+966500000001", bad_phone))[0], 422, "an invalid phone: 422")
api.stop()
for name, svc in (("api", api), ("forwarder", fwd), ("forwarder with another key", fwd_wrong), ("orderpos", pos)):
    if svc is pos:
        pos.stop()
    for line in svc.lines:
        keep(f"{name} log", line)
check(len([t for w, t in texts if w.endswith(" log")]) > 20, "the services logged")

# What an operator or auditor reads from the database.
for sql in ("SELECT coalesce(string_agg(headers::text || coalesce(error_code, ''), ' '), '') FROM hub.inbox",
            "SELECT coalesce(string_agg(concat_ws(' ', url, error, response_excerpt), ' '), '') "
            "FROM hub.pos_delivery_attempts",
            "SELECT coalesce(string_agg(coalesce(last_error, ''), ' '), '') FROM hub.forward_jobs",
            "SELECT coalesce(string_agg(concat_ws(' ', token_sealed, password_sealed, email), ' '), '') "
            "FROM hub.pos_connections",
            "SELECT coalesce(string_agg(secret_sealed, ' '), '') FROM hub.partner_signing_secrets",
            "SELECT coalesce(string_agg(concat_ws(' ', status, detail), ' '), '') FROM hub.order_status_log"):
    keep(f"database: {sql[:60]}", psql(hub_url, sql))

# Full phone numbers: never in a log line or an HTTP answer (the stored order and `order show` keep them).
phones = {"customer phone": "+966500000001", "customer phone without +": "966500000001",
          "refused phone": bad_phone, "refused phone without +": bad_phone[1:]}
phone_hits = [(name, where) for name, value in phones.items() for where, text in texts
              if (where.endswith(" log") or where.startswith("answer")) and value in text]
for name, where in phone_hits:
    print(f"LEAK: {name} in {where}", flush=True)
eq(phone_hits, [], "no full phone number in any log line or HTTP answer")
check(any(" log" in w and '"external_id":"L-1"' in t for w, t in texts), "the phone test saw the order's log lines")

hits = [(name, where) for name, value in secrets.items() for where, text in texts if value and value in text]
for name, where in hits:
    print(f"LEAK: {name} in {where}", flush=True)
eq(hits, [], "no secret in any log line, answer, CLI output or operator-visible column")
print(f"searched {len(texts)} texts for {len(secrets)} secrets")
finish()

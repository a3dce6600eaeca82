"""The merchant dashboard's server side with the real orderhub and PostgreSQL: users and sessions, CSRF, scope
enforced on every JSON call and on the event stream, the resend action and its audit row, live events with
Last-Event-ID resume, the POS-unreachable state of each branch (of the hub's POS environment), and a clean SIGTERM
with a stream open. (tests/browser drives the page itself.)"""
import http.client
import json
import os
import select
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time

from harness import (HUB, SOURCE, Service, check, create_database, eq, finish, hub_env, pg_ctl, pos_health, psql,
                     run)
from openapi_check import watch

hub_url = create_database()
henv = hub_env(hub_url)
eq(run(HUB, "migrate", env=henv).returncode, 0, "migrate")
for branch, brand in (("DEMO-1", "DEMO"), ("DEMO-2", "DEMO"), ("OTHER-1", "OTHER")):
    eq(run(HUB, "branch", "create", "--id", branch, "--brand", brand, env=henv).returncode, 0, f"branch {branch}")
partner = json.loads(run(HUB, "partner", "create", "--name", "Platform", "--label", "plat", "--json",
                         env=henv).stdout)
webhook = "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1]

PASSWORD = "correct horse battery"


def user_add(email, brand, *branches, password=PASSWORD):
    args = ["user", "add", "--email", email, "--brand", brand, "--json"]
    for b in branches:
        args += ["--branch", b]
    return run(HUB, *args, env=henv, input=password + "\n")


r = user_add("Alice@Demo.test", "DEMO", "DEMO-1")
eq(r.returncode, 0, f"user add: {r.stderr}")
alice_id = json.loads(r.stdout)["id"]
eq(json.loads(r.stdout)["email"], "alice@demo.test", "e-mail stored in lower case")
bob_id = json.loads(user_add("bob@demo.test", "DEMO", "DEMO-2").stdout)["id"]
eq(user_add("carol@other.test", "OTHER").returncode, 0, "a user of every branch of another brand")
eq(user_add("dave@demo.test", "DEMO", password="short").returncode, 1, "a short password is refused")
eq(user_add("dave@demo.test", "NOPE").returncode, 1, "an unknown brand is refused")
eq(user_add("dave@demo.test", "DEMO", "OTHER-1").returncode, 1, "a branch of another brand is refused")
eq(user_add("alice@demo.test", "DEMO").returncode, 1, "a second user with the same e-mail is refused")
eq(psql(hub_url, "SELECT count(*) FROM hub.dashboard_users"), "3", "refused users left nothing behind")
stored = psql(hub_url, f"SELECT password_hash FROM hub.dashboard_users WHERE id = '{alice_id}'")
check(stored.startswith("pbkdf2_sha256$600000$") and PASSWORD not in stored, "password stored as a salted PBKDF2 hash")
check("alice@demo.test" in run(HUB, "user", "list", env=henv).stdout, "user list")

# Old events and expired sessions are cleaned up by the serving hub.
psql(hub_url, "INSERT INTO hub.dashboard_events (order_id, branch_id, kind, created_at) "
              "VALUES ('gone', 'DEMO-1', 'status', now() - interval '3 days'), "
              "('kept', 'DEMO-1', 'status', now() - interval '1 day')")
psql(hub_url, f"INSERT INTO hub.dashboard_sessions (token_hash, user_id, expires_at) VALUES "
              f"(repeat('c', 64), '{alice_id}', now() - interval '1 minute'), "
              f"(repeat('d', 64), '{alice_id}', now() + interval '1 hour')")
hub = watch(Service(HUB, "--role", "api", env=henv))  # every JSON answer is checked against schemas/openapi.yaml
deadline = time.time() + 10
while time.time() < deadline and psql(hub_url, "SELECT count(*) FROM hub.dashboard_events") != "1":
    time.sleep(0.1)
eq(psql(hub_url, "SELECT string_agg(order_id, ',') FROM hub.dashboard_events"), "kept", "events past 2 days deleted")
eq(psql(hub_url, "SELECT string_agg(left(token_hash, 1), ',') FROM hub.dashboard_sessions"), "d",
   "expired sessions deleted")
psql(hub_url, "DELETE FROM hub.dashboard_sessions")


def request(method, path, body=None, cookie=None, csrf=None, headers=None):
    h = dict(headers or {})
    if cookie:
        h["Cookie"] = f"orderhub_session={cookie}"
    if csrf:
        h["X-CSRF-Token"] = csrf
    return hub.request(method, path, body, headers=h)


def login(email, password=PASSWORD):
    status, headers, body = request("POST", "/api/dashboard/login", {"email": email, "password": password})
    if status != 200:
        return status, None, None, body
    cookie = headers["set-cookie"]
    token = cookie.split(";", 1)[0].split("=", 1)[1]
    return status, token, body["csrf_token"], cookie


def is_error(body, code):
    return isinstance(body, dict) and body.get("status") == "failed" and body.get("error", {}).get("code") == code


# ---- login, cookies, sessions ----
status, _, _, body = login("alice@demo.test", "wrong password!")
eq(status, 401, "wrong password")
check(is_error(body, "invalid_credentials"), "wrong password: JSON error")
status, _, _, body = login("nobody@demo.test")
eq(status, 401, "unknown e-mail answers like a wrong password")
check(is_error(body, "invalid_credentials"), "unknown e-mail: same code")
status, _, body = request("POST", "/api/dashboard/login", "not json")
eq(status, 400, "malformed login body")
check(is_error(body, "invalid_request"), "malformed login body: JSON error")
status, _, body = request("POST", "/api/dashboard/login", {"email": "alice@demo.test"})
eq((status, [d["path"] for d in body["error"]["details"]]), (400, ["/password"]), "missing password: details")
status, _, body = request("POST", "/api/dashboard/login", {"email": "alice@demo.test", "password": PASSWORD},
                          headers={"Origin": "http://evil.example"})
eq(status, 403, "a cross-site login is refused")

# Guessing: five failures for one e-mail, then 429 with Retry-After (other e-mails are not affected).
for _ in range(5):
    eq(login("mallory@demo.test", "guess number n")[0], 401, "a guess")
status, headers, body = request("POST", "/api/dashboard/login", {"email": "Mallory@demo.test", "password": "x"})
check(status == 429 and is_error(body, "too_many_attempts") and int(headers.get("retry-after", "0")) > 0,
      f"the sixth guess is refused: {status} {body}")

# A burst of logins from one address: two password checks run, two more wait their turn, the rest are told to
# come back.
burst = []
threads = [threading.Thread(target=lambda: burst.append(login("carol@other.test"))) for _ in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
codes = sorted(r[0] for r in burst)
check(set(codes) == {200, 503} and codes.count(200) >= 2, f"a login burst: some pass, some get 503: {codes}")
check(all(is_error(r[3], "busy") for r in burst if r[0] == 503), "503 busy is a JSON error")

status, alice, alice_csrf, cookie = login("ALICE@demo.test")
eq(status, 200, "alice logs in (e-mail case does not matter)")
check("HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie, f"cookie flags: {cookie}")
check("Secure" not in cookie, "no Secure flag without TLS")
eq(psql(hub_url, f"SELECT count(*) FROM hub.dashboard_sessions WHERE token_hash = '{alice}'"), "0",
   "the session token itself is not stored")
eq(psql(hub_url, f"SELECT count(*) FROM hub.dashboard_sessions WHERE user_id = '{alice_id}'"), "1",
   "one session row (its hash)")
_, bob, bob_csrf, _ = login("bob@demo.test")
_, carol, carol_csrf, _ = login("carol@other.test")

status, _, body = request("GET", "/api/dashboard/session")
eq(status, 401, "no cookie: 401")
check(is_error(body, "unauthenticated"), "no cookie: JSON error")
eq(request("GET", "/api/dashboard/session", cookie="forged-token")[0], 401, "a forged cookie: 401")
status, _, body = request("GET", "/api/dashboard/session", cookie=alice)
eq([b["id"] for b in body["user"]["branches"]], ["DEMO-1"], "alice sees DEMO-1 only")
status, _, body = request("GET", "/api/dashboard/session", cookie=carol)
eq([b["id"] for b in body["user"]["branches"]], ["OTHER-1"], "a user without --branch sees every branch of the brand")


# ---- orders from webhooks ----
def order(order_id, branch, schedule=None, car=False):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": branch,
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "no onions",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6,
                        "is_schedule": 1 if schedule else 0, "schedule_date": schedule,
                        "car_data": {"color": "#FF0000", "plate_number": "1234", "plate_letters": "ABC",
                                     "car_brand": "Volvo"} if car else None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-BURGER", "quantity": 2, "price": 12,
                                   "options": [{"id": "M-CHEESE", "price": 3, "quantity": 1}]}]}}


def send(order_id, branch, **kw):
    status, _, body = hub.request("POST", webhook, order(order_id, branch, **kw))
    eq(status, 200, f"stored {order_id}")
    return body.get("order_id", "")


def update(order_id, status_name, at):
    body = {"event": "order_updated", "event_time": at, "branch_id": "DEMO-1", "payload": {"order_id": order_id, "status": status_name}}
    status, _, answer = hub.request("POST", webhook, body)
    eq(status, 200, f"update {order_id} {status_name}: {answer}")


one = send("D-1", "DEMO-1", car=True)
two = send("D-2", "DEMO-2")

status, _, body = request("GET", "/api/dashboard/orders?branch=DEMO-1&filter=all", cookie=alice)
eq((status, [o["id"] for o in body["orders"]]), (200, [one]), "alice lists DEMO-1")
eq(request("GET", "/api/dashboard/orders?branch=DEMO-2", cookie=alice)[0], 403, "alice may not list DEMO-2")
eq(request("GET", "/api/dashboard/orders?branch=DEMO-1", cookie=bob)[0], 403, "bob may not list DEMO-1")
eq(request("GET", "/api/dashboard/orders?branch=DEMO-1", cookie=carol)[0], 403, "another brand's user may not")
status, _, body = request("GET", "/api/dashboard/orders?branch=DEMO-1&filter=bogus", cookie=alice)
check(status == 400 and is_error(body, "invalid_request"), "a bad filter: 400")
eq(request("GET", "/api/dashboard/orders?filter=all", cookie=alice)[0], 400, "no branch: 400")
eq(request("GET", "/api/dashboard/orders?branch=DEMO-1&since=yesterday", cookie=alice)[0], 400, "bad since: 400")
for f in ("today", "active"):
    status, _, body = request("GET", f"/api/dashboard/orders?branch=DEMO-1&filter={f}", cookie=alice)
    eq([o["id"] for o in body["orders"]], [one], f"filter {f}")
status, _, body = request("GET", "/api/dashboard/orders?branch=DEMO-1&filter=problems", cookie=alice)
eq(body["orders"], [], "no problems yet")

status, _, body = request("GET", f"/api/dashboard/orders/{one}", cookie=alice)
eq(status, 200, "order detail")
o = body["order"]
eq(o["customer"]["phone"], "+966*******01", "phone masked")
eq(o["car_data"]["plate_letters"], "ABC", "car data")
eq([(i["id"], i["quantity"], [op["id"] for op in i["options"]]) for i in o["items"]],
   [("P-BURGER", 2, ["M-CHEESE"])], "items with options")
eq([s["status"] for s in o["timeline"]], ["received"], "timeline")
eq(o["attempts"], [], "no POS attempts yet")
check("+966500000001" not in json.dumps(body), "the full phone is not in the detail")
eq(request("GET", f"/api/dashboard/orders/{one}", cookie=bob)[0], 404, "bob cannot open alice's order")
eq(request("GET", f"/api/dashboard/orders/{two}", cookie=alice)[0], 404, "alice cannot open a DEMO-2 order")

eq(request("POST", f"/api/dashboard/orders/{one}/phone", cookie=alice)[0], 403, "phone without CSRF: 403")
status, _, body = request("POST", f"/api/dashboard/orders/{one}/phone", cookie=alice, csrf=alice_csrf)
eq((status, body.get("phone")), (200, "+966500000001"), "phone opened explicitly")
eq(request("POST", f"/api/dashboard/orders/{one}/phone", cookie=bob, csrf=bob_csrf)[0], 404, "bob cannot open it")
eq(request("POST", f"/api/dashboard/orders/{one}/phone", cookie=bob, csrf=alice_csrf)[0], 403,
   "a CSRF token of another session is refused")

# ---- resend: same rules as `orderhub order resend`, an operator row with the user's id ----
status, _, body = request("POST", f"/api/dashboard/orders/{one}/resend", cookie=alice, csrf=alice_csrf)
check(status == 409 and is_error(body, "not_resendable"), f"a queued order is not resent: {status} {body}")
psql(hub_url, f"UPDATE hub.forward_jobs SET state = 'rejected', attempts = 1, last_error = 'unknown item' "
              f"WHERE order_id = '{one}'")
status, _, body = request("GET", "/api/dashboard/orders?branch=DEMO-1&filter=problems", cookie=alice)
eq([(o["id"], o["problem"]) for o in body["orders"]], [(one, "rejected")], "the rejected order is a problem")
eq(request("POST", f"/api/dashboard/orders/{one}/resend", cookie=alice)[0], 403, "resend without CSRF: 403")
eq(request("POST", f"/api/dashboard/orders/{one}/resend", cookie=alice, csrf=alice_csrf,
           headers={"Origin": "http://evil.example"})[0], 403, "resend from another origin: 403")
eq(request("POST", f"/api/dashboard/orders/{one}/resend", cookie=bob, csrf=bob_csrf)[0], 404,
   "bob cannot resend alice's order")
eq(psql(hub_url, f"SELECT state FROM hub.forward_jobs WHERE order_id = '{one}'"), "rejected",
   "refused resends changed nothing")
status, _, body = request("POST", f"/api/dashboard/orders/{one}/resend", cookie=alice, csrf=alice_csrf)
eq((status, body.get("previous_state"), body.get("state")), (200, "rejected", "pending"), "resend")
eq(psql(hub_url, f"SELECT state || '|' || attempts FROM hub.forward_jobs WHERE order_id = '{one}'"), "pending|0",
   "the job is pending again")
eq(psql(hub_url, f"SELECT source || '|' || actor || '|' || detail FROM hub.order_status_log "
                 f"WHERE order_id = '{one}' AND status = 'forward_requeued'"),
   f"operator|{alice_id}|resend after rejected", "audit row: operator, the user's id")
psql(hub_url, f"UPDATE hub.forward_jobs SET state = 'cancelled' WHERE order_id = '{two}'")
psql(hub_url, f"UPDATE hub.orders SET delivery_status = 'cancelled' WHERE id = '{two}'")
status, _, body = request("POST", f"/api/dashboard/orders/{two}/resend", cookie=bob, csrf=bob_csrf)
check(status == 409 and "cancelled" in body["error"]["message"], "a cancelled order is not resent")


# ---- the event stream ----
class Stream:
    """An SSE client on a raw socket (select and recv: a timed-out socket file cannot be read again)."""

    def __init__(self, cookie, query="", last_id=None, sock=None, port=None):
        self.sock = sock or hub.raw_socket()
        port = port or hub.port
        extra = f"Last-Event-ID: {last_id}\r\n" if last_id is not None else ""
        self.sock.sendall((f"GET /api/dashboard/events{query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                           f"Cookie: orderhub_session={cookie}\r\nAccept: text/event-stream\r\n{extra}\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}

    def _readable(self, timeout):
        # A TLS socket may hold decrypted bytes that select() does not see.
        pending = getattr(self.sock, "pending", None)
        return (pending is not None and pending() > 0) or bool(select.select([self.sock], [], [], timeout)[0])

    def _line(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0 or not self._readable(left):
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()

    def next_event(self, timeout):
        """The next `order` event as (id, data), or None after `timeout` seconds or at the end of the stream."""
        deadline = time.time() + timeout
        fields = {}
        while (line := self._line(deadline)) is not None:
            if line == "":
                if fields.get("event") == "order":
                    return int(fields["id"]), json.loads(fields["data"])
                fields = {}
            elif not line.startswith(":") and ":" in line:
                k, v = line.split(":", 1)
                fields[k] = v.lstrip(" ")
        return None

    def events_until_quiet(self, quiet=1.5):
        out = []
        while (e := self.next_event(quiet)) is not None:
            out.append(e)
        return out

    def events_until(self, done, timeout=10, quiet=0.5):
        """The events until `done(events)` holds (at most `timeout` seconds: that bounds a hang, a loaded machine
        may take seconds), then those that follow within `quiet` seconds (one too many shows)."""
        out = []
        deadline = time.time() + timeout
        while not done(out) and (e := self.next_event(max(0, deadline - time.time()))) is not None:
            out.append(e)
        return out + self.events_until_quiet(quiet)

    def at_end(self, timeout):
        """True when the server closed the stream within `timeout` seconds."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not self._readable(max(0, deadline - time.time())):
                return False
            try:
                if not self.sock.recv(65536):
                    return True
            except ConnectionError:
                return True
        return False

    def close(self):
        self.sock.close()


s = Stream(alice, "?branch=DEMO-2")
eq(s.status, 403, "alice may not follow DEMO-2")
s.close()
s = Stream(alice, "", last_id="abc")
eq(s.status, 400, "a bad Last-Event-ID: 400")
s.close()
s = Stream("forged")
eq(s.status, 401, "no session: no stream")
s.close()

time.sleep(1)  # the feed has passed everything above: a new stream starts with what happens next
a = Stream(alice, "?branch=DEMO-1")
eq((a.status, a.headers.get("content-type")), (200, "text/event-stream"), "alice follows DEMO-1")
b = Stream(bob)
eq(b.status, 200, "bob follows his branches")
started = time.time()
three = send("D-3", "DEMO-1", schedule="2030-01-01 12:00:00")
first = a.next_event(10)  # bounds a hang; how soon is tests/load/board-bench.sh's question
latency = time.time() - started
check(first is not None and first[1]["order"]["id"] == three, f"a new order reaches the open stream: {first}")
print(f"measured: webhook-to-event {latency:.3f} s")
eq((first[1]["kind"], first[1]["detail"], first[1]["order"]["is_schedule"]), ("status", "received", True),
   "a new-order event with its schedule")
four = send("D-4", "DEMO-2")
update("D-3", "assigned", "2024-05-01 18:05:00")
got = a.events_until(lambda got: any(e[1]["detail"] == "assigned" for e in got))
eq([(e[1]["order"]["id"], e[1]["detail"]) for e in got], [(three, "assigned")], "alice sees only DEMO-1 changes")
last_seen = got[-1][0] if got else first[0]
got_b = b.events_until(lambda got: any(e[1]["order"]["id"] == four for e in got))
ids_b = {e[1]["order"]["id"] for e in got_b}
eq(ids_b, {four}, "bob sees only DEMO-2 changes")
psql(hub_url, f"UPDATE hub.forward_jobs SET state = 'dead', attempts = 12, last_error = 'connection refused' "
              f"WHERE order_id = '{three}'")
e = a.next_event(10)
check(e is not None and e[1]["kind"] == "job" and e[1]["order"]["problem"] == "unreachable",
      f"a POS outcome reaches the board: {e}")
last_seen = e[0] if e else last_seen
a.close()

# Resume: what happened while the board was away arrives after Last-Event-ID, nothing before it.
update("D-3", "at_pick_up", "2024-05-01 18:10:00")
update("D-3", "on_the_way", "2024-05-01 18:15:00")
send("D-5", "DEMO-2")
time.sleep(0.5)
a = Stream(alice, "?branch=DEMO-1", last_id=last_seen)
got = a.events_until(lambda got: len(got) >= 2)
eq([e[1]["detail"] for e in got], ["at_pick_up", "on_the_way"], "resume after Last-Event-ID")
check(all(e[0] > last_seen for e in got), "nothing at or before Last-Event-ID again")
a.close()
a = Stream(alice, f"?branch=DEMO-1&last_event_id={last_seen}")
eq([e[1]["detail"] for e in a.events_until(lambda got: len(got) >= 2)], ["at_pick_up", "on_the_way"],
   "resume with the last_event_id parameter")
a.close()
b.close()
c = Stream(carol, "", last_id=0)
eq(c.events_until_quiet(1.5), [], "another brand's user replays none of it")
c.close()

# ---- the POS connection's health: the banner of branches whose POS the forwarders cannot reach ----
def branch_states(cookie, query=""):
    status, _, body = request("GET", "/api/dashboard/branches" + query, cookie=cookie)
    return status, body.get("branches") if isinstance(body, dict) else body


reachable = {"pos_unreachable_since": None, "orders_waiting": None}
eq(branch_states(alice), (200, [{"id": "DEMO-1", **reachable}]), "alice: DEMO-1's POS is reachable")
eq(branch_states(carol), (200, [{"id": "OTHER-1", **reachable}]), "carol: every branch of her brand")
eq(branch_states(alice, "?branch=DEMO-1"), (200, [{"id": "DEMO-1", **reachable}]), "one branch")
eq(branch_states(alice, "?branch=DEMO-2")[0], 403, "alice may not ask about DEMO-2")
eq(branch_states("forged")[0], 401, "no session: 401")
eq(request("POST", "/api/dashboard/branches", cookie=alice, csrf=alice_csrf)[0], 405, "POST: 405")

# Waiting: the branch's jobs pending or in flight (`one` was resent, `three` is dead).
seven = send("D-7", "DEMO-1")
eight = send("D-8", "DEMO-1")
psql(hub_url, f"UPDATE hub.forward_jobs SET state = 'in_flight', lease_until = now() + interval '1 minute' "
              f"WHERE order_id = '{eight}'")
pos_health(hub_url, "DEMO", "staging", "2024-05-01 13:00:00+00")
pos_health(hub_url, "OTHER", "staging", "2024-05-01 13:00:00+00")
eq(branch_states(alice)[1], [{"id": "DEMO-1", **reachable}], "a breaker of another environment does not count")
pos_health(hub_url, "DEMO", "production", "2024-05-01 14:02:00+00")
down = {"pos_unreachable_since": "2024-05-01T14:02:00.000Z"}
eq(branch_states(alice), (200, [{"id": "DEMO-1", **down, "orders_waiting": 3}]),
   "alice: DEMO-1's POS unreachable since 14:02, three orders waiting (pending and in flight)")
eq(branch_states(bob)[1], [{"id": "DEMO-2", **down, "orders_waiting": 2}],
   "bob: the brand's other branch too, with its own count (cancelled jobs do not wait)")
eq(branch_states(carol)[1], [{"id": "OTHER-1", **reachable}], "another brand's branch: no banner")
psql(hub_url, f"UPDATE hub.forward_jobs SET state = 'delivered' WHERE order_id = '{seven}'")
eq(branch_states(alice)[1][0]["orders_waiting"], 2, "a delivered order no longer waits")
pos_health(hub_url, "DEMO", "production", None)
eq(branch_states(alice)[1], [{"id": "DEMO-1", **reachable}], "the breaker closed: the banner goes")
eq(branch_states(bob)[1], [{"id": "DEMO-2", **reachable}], "for every branch of the brand")

# ---- logout and expiry ----
eq(request("POST", "/api/dashboard/logout", cookie=alice)[0], 403, "logout without CSRF: 403")
status, headers, _ = request("POST", "/api/dashboard/logout", cookie=alice, csrf=alice_csrf)
eq(status, 200, "logout")
check("Max-Age=0" in headers.get("set-cookie", ""), "logout clears the cookie")
eq(request("GET", "/api/dashboard/session", cookie=alice)[0], 401, "after logout the session is gone")
_, alice2, _, _ = login("alice@demo.test")
eq(request("GET", "/api/dashboard/session", cookie=alice2)[0], 200, "a new session")
psql(hub_url, "UPDATE hub.dashboard_sessions SET expires_at = now() - interval '1 second'")
eq(request("GET", "/api/dashboard/session", cookie=alice2)[0], 401, "an expired session: 401")
eq(request("GET", f"/api/dashboard/orders/{one}", cookie=bob)[0], 401, "every session expired: 401")

# ---- the page ----
status, headers, body = hub.request("GET", "/dashboard/")
eq((status, headers.get("content-type")), (200, "text/html; charset=utf-8"), "the page")
check(headers.get("content-security-policy", "").startswith("default-src 'self'"), "a strict CSP")
eq(hub.request("GET", "/dashboard")[1].get("location"), "/dashboard/", "/dashboard redirects")
eq(hub.request("GET", "/dashboard/app.js")[1].get("content-type"), "text/javascript; charset=utf-8", "app.js type")
eq(hub.request("GET", "/dashboard/nope.js")[0], 404, "unknown file: 404")
eq(hub.request("POST", "/dashboard/")[0], 405, "POST to the page: 405")

# ---- PostgreSQL away: 503 with Retry-After, then the board works again by itself ----
_, erin, _, _ = login("carol@other.test")
pg_ctl("stop")
try:
    status, headers, body = request("GET", "/api/dashboard/session", cookie=erin)
    check(status == 503 and is_error(body, "database_unavailable") and headers.get("retry-after") == "5",
          f"database down: 503 ({status} {body})")
finally:
    pg_ctl("start")
deadline = time.time() + 20
while time.time() < deadline and request("GET", "/api/dashboard/session", cookie=erin)[0] != 200:
    time.sleep(0.2)
eq(request("GET", "/api/dashboard/session", cookie=erin)[0], 200, "back once the database is")

# ---- over TLS: the cookie is Secure, and the event stream works the same ----
certs = tempfile.mkdtemp(prefix="dashboard-certs-")
subprocess.run([os.path.join(SOURCE, "deploy", "make-cert.sh"), certs], check=True, capture_output=True)
tls = Service(HUB, "--role", "api", env={**henv, "ORDERHUB_TLS_CERT": f"{certs}/server.pem",
                                         "ORDERHUB_TLS_KEY": f"{certs}/server.key",
                                         "ORDERHUB_POS_ENVIRONMENT": "staging"})
ctx = ssl.create_default_context(cafile=f"{certs}/ca.pem")
conn = http.client.HTTPSConnection("127.0.0.1", tls.port, context=ctx, timeout=10)
conn.request("POST", "/api/dashboard/login", body=json.dumps({"email": "bob@demo.test", "password": PASSWORD}),
             headers={"Content-Type": "application/json"})
resp = conn.getresponse()
cookie = resp.getheader("Set-Cookie") or ""
resp.read()
conn.close()
eq(resp.status, 200, "login over HTTPS")
check("Secure" in cookie and "HttpOnly" in cookie, f"the cookie is Secure over TLS: {cookie}")
bob_tls = cookie.split(";", 1)[0].split("=", 1)[1]
conn = http.client.HTTPSConnection("127.0.0.1", tls.port, context=ctx, timeout=10)
conn.request("GET", "/api/dashboard/branches", headers={"Cookie": f"orderhub_session={bob_tls}"})
resp = conn.getresponse()
eq(json.loads(resp.read()).get("branches"), [{"id": "DEMO-2", "pos_unreachable_since": "2024-05-01T13:00:00.000Z",
                                              "orders_waiting": 2}],
   "a hub serving --pos-environment staging reports the staging connection")
conn.close()
time.sleep(1)
raw = ctx.wrap_socket(socket.create_connection(("127.0.0.1", tls.port), timeout=10), server_hostname="127.0.0.1")
t = Stream(bob_tls, "?branch=DEMO-2", sock=raw, port=tls.port)
eq(t.status, 200, "a stream over TLS")
six = send("D-6", "DEMO-2")
e = t.next_event(10)
check(e is not None and e[1]["order"]["id"] == six, f"an event over TLS: {e}")
started = time.time()
eq(tls.stop(signal.SIGTERM, timeout=15), 0, "the TLS hub exits 0 with a stream open")
check(time.time() - started < 10, "and within 10 s")
check(t.at_end(2), "the TLS stream was closed")
t.close()

# ---- SIGTERM with an open stream: the hub still exits cleanly and quickly ----
_, dave, _, _ = login("carol@other.test")
s = Stream(dave)
eq(s.status, 200, "a stream is open")
started = time.time()
code = hub.stop(signal.SIGTERM, timeout=15)
elapsed = time.time() - started
eq(code, 0, "exit 0 on SIGTERM with a stream open")
if code != 0:
    print(hub.log()[-6000:])
check(elapsed < 10, f"stopped within 10 s: {elapsed:.2f} s")
check(s.at_end(2), "the stream was closed")
s.close()

log = hub.log()
for secret in (PASSWORD, alice, alice2, bob, carol, "+966500000001"):
    check(secret not in log, "no password, session token or phone in the log")
finish()

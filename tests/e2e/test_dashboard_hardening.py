"""The dashboard's answers to the findings of the outside security review (issue 20), with the real orderhub and
PostgreSQL: control characters refused before any other step (a NUL in the e-mail no longer gets a fresh login
throttle), password checks shared fairly between client addresses, a busy event stream that still ends on logout,
disable, expiry and follows the user's scope, impossible dates a 400, and a Secure cookie with HSTS when the public
URL is https://."""
import http.client
import json
import select
import threading
import time

from harness import HUB, Service, check, create_database, eq, finish, hub_env, psql, run
from openapi_check import watch

hub_url = create_database()
henv = hub_env(hub_url)
eq(run(HUB, "migrate", env=henv).returncode, 0, "migrate")
for branch in ("DEMO-1", "DEMO-2"):
    eq(run(HUB, "branch", "create", "--id", branch, "--brand", "DEMO", env=henv).returncode, 0, f"branch {branch}")
partner = json.loads(run(HUB, "partner", "create", "--name", "Platform", "--label", "plat", "--json",
                         env=henv).stdout)
webhook = "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1]

PASSWORD = "correct horse battery"
users = {}
for name, branches in (("alice", ["DEMO-1"]), ("bob", ["DEMO-1"]), ("dave", ["DEMO-1"]), ("erin", ["DEMO-1"]),
                       ("frank", []), ("grace", [])):
    args = ["user", "add", "--email", f"{name}@demo.test", "--brand", "DEMO", "--json"]
    for b in branches:
        args += ["--branch", b]
    r = run(HUB, *args, env=henv, input=PASSWORD + "\n")
    eq(r.returncode, 0, f"user add {name}: {r.stderr}")
    users[name] = json.loads(r.stdout)["id"]

# Re-check sessions every second (the default is 15 s) so that the test need not wait long.
hub = watch(Service(HUB, "--role", "api", "--dashboard-session-check", "1s", env=henv))  # answers vs openapi.yaml


def request(method, path, body=None, cookie=None, csrf=None, headers=None, source=None, server=None):
    server = server or hub
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30,
                                      source_address=(source, 0) if source else None)
    h = dict(headers or {})
    if cookie:
        h["Cookie"] = f"orderhub_session={cookie}"
    if csrf:
        h["X-CSRF-Token"] = csrf
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=h)
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = raw.decode(errors="replace")
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, parsed


def login(email, password=PASSWORD, source=None, server=None):
    status, headers, body = request("POST", "/api/dashboard/login", {"email": email, "password": password},
                                    source=source, server=server)
    if status != 200:
        return status, None, None, body
    cookie = headers["set-cookie"]
    return status, cookie.split(";", 1)[0].split("=", 1)[1], body["csrf_token"], cookie


def is_error(body, code):
    return isinstance(body, dict) and body.get("status") == "failed" and body.get("error", {}).get("code") == code


# ---- finding 1: control characters are refused before any other step ----
# libpq ends a text parameter at its first NUL: "alice@demo.test\0<n>" was checked as alice, each <n> with a fresh
# throttle entry. Now it is a 400 and counts nowhere.
for n in range(8):
    status, _, body = request("POST", "/api/dashboard/login", {"email": f"alice@demo.test\u0000{n}",
                                                               "password": "guess number n"})
    check(status == 400 and is_error(body, "invalid_request") and
          [d["path"] for d in body["error"]["details"]] == ["/email"],
          f"a NUL in the e-mail is a 400 naming /email: {status} {body}")
for bad in ("alice@demo.test\n", "alice@demo.test\u001b[2J", "ali\u0007ce@demo.test", "alice@demo.test\u0085"):
    status, _, body = request("POST", "/api/dashboard/login", {"email": bad, "password": PASSWORD})
    check(status == 400 and is_error(body, "invalid_request"), f"control character in {bad!r}: 400 ({status})")
eq(login("alice@demo.test")[0], 200, "alice still logs in: the refused attempts counted nowhere")
for _ in range(5):
    eq(login("alice@demo.test", "guess number n")[0], 401, "a wrong password")
eq(login("alice@demo.test")[0], 429, "five failures throttle the e-mail")
eq(request("POST", "/api/dashboard/login", {"email": "alice@demo.test\u00001", "password": PASSWORD})[0], 400,
   "a NUL variant of a throttled e-mail is refused too (not checked against alice's password)")

_, bob, bob_csrf, _ = login("bob@demo.test")
for path in ("/api/dashboard/orders?branch=DEMO-1%00x", "/api/dashboard/orders?branch=DEMO-1%0d%0aX",
             "/api/dashboard/branches?branch=%1b", "/api/dashboard/events?branch=DEMO-1%00",
             "/api/dashboard/orders?branch=%ff%fe"):
    status, _, body = request("GET", path, cookie=bob)
    check(status == 400 and is_error(body, "invalid_request"), f"{path}: 400 invalid_request ({status} {body})")

# ---- finding 11: an impossible date is a 400, not a logged 500 ----
def order(external_id, branch):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": branch,
            "payload": {"id": external_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 0, "discount": 0, "total": 24, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-1", "quantity": 1, "price": 24, "options": []}]}}


eq(hub.request("POST", webhook, order("TODAY-1", "DEMO-1"))[0], 200, "an order of DEMO-1")
for since in ("2026-02-30T00:00:00Z", "2026-13-01T00:00Z", "2025-02-29T10:00Z", "2026-01-01T24:00Z",
              "2026-01-01T10:61Z", "2026-01-01T10:00:61Z", "2026-01-01T10:00+25:00", "0000-01-01T00:00Z"):
    query = f"branch=DEMO-1&filter=today&since={since.replace('+', '%2B')}"
    status, _, body = request("GET", f"/api/dashboard/orders?{query}", cookie=bob)
    check(status == 400 and is_error(body, "invalid_request") and
          [d["path"] for d in body["error"]["details"]] == ["since"], f"since={since}: 400 ({status} {body})")
for since in ("2024-02-29T00:00:00Z", "2026-03-01T00:00:00.5+03:00", "2026-12-31T23:59:59-14:00"):
    query = f"branch=DEMO-1&filter=today&since={since.replace('+', '%2B')}"
    status, _, body = request("GET", f"/api/dashboard/orders?{query}", cookie=bob)
    eq(status, 200, f"since={since} is a real time")
check('"status":500' not in hub.log(), "no 500 in the log")

# ---- finding 1: each client address gets its share of the password checks ----
# One client (127.0.0.2) sends logins as fast as it can; real users on another address still get in.
stop = threading.Event()
flood_codes = []


def flood(n):
    i = 0
    while not stop.is_set():
        i += 1
        try:
            status = request("POST", "/api/dashboard/login", {"email": f"x{n}-{i}@evil.test", "password": "guess it"},
                             source="127.0.0.2")[0]
        except OSError:
            status = 0
        flood_codes.append(status)
        if status == 503:
            time.sleep(0.01)


flooders = [threading.Thread(target=flood, args=(n,)) for n in range(6)]
for t in flooders:
    t.start()
time.sleep(1)
real = [login(f"{name}@demo.test")[0] for name in ("bob", "dave", "erin", "frank", "bob", "dave")]
stop.set()
for t in flooders:
    t.join()
eq(real, [200] * 6, "every real login got through the flood")
check(flood_codes.count(401) > 0 and flood_codes.count(503) > 0,
      f"the flooding address got its share (401) and was told to wait beyond it (503): "
      f"{ {c: flood_codes.count(c) for c in set(flood_codes)} }")


# ---- finding 2: a busy event stream ends on logout, disable and expiry, and follows the user's scope ----
class Stream:
    """An SSE client on a raw socket."""

    def __init__(self, cookie, query=""):
        self.sock = hub.raw_socket()
        self.sock.sendall((f"GET /api/dashboard/events{query} HTTP/1.1\r\nHost: 127.0.0.1:{hub.port}\r\n"
                           f"Cookie: orderhub_session={cookie}\r\nAccept: text/event-stream\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        self.status = int(head.decode().split("\r\n")[0].split()[1])
        self.ended = False

    def _line(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                return None
            try:
                chunk = self.sock.recv(65536)
            except ConnectionError:
                chunk = b""
            if not chunk:
                self.ended = True
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()

    def read(self, seconds):
        """The events (name, data) of the next `seconds`, or up to the end of the stream."""
        deadline = time.time() + seconds
        out, fields = [], {}
        while (line := self._line(deadline)) is not None:
            if line == "":
                if "event" in fields:
                    out.append((fields["event"], json.loads(fields.get("data", "null"))))
                fields = {}
            elif not line.startswith(":") and ":" in line:
                k, v = line.split(":", 1)
                fields[k] = v.lstrip(" ")
        return out

    def close(self):
        self.sock.close()


busy = threading.Event()
sent = [0]


def keep_busy():
    """A new DEMO-1 order every 0.2 s: the streams of DEMO-1 are never quiet."""
    while not busy.is_set():
        sent[0] += 1
        hub.request("POST", webhook, order(f"BUSY-{sent[0]}", "DEMO-1"))
        time.sleep(0.2)


feeder = threading.Thread(target=keep_busy)
feeder.start()
time.sleep(1)


def ends_with_session_ended(stream, what):
    got = stream.read(12)
    names = [e[0] for e in got]
    check("order" in names, f"{what}: the stream was busy ({len(got)} events)")
    check(stream.ended and names[-1:] == ["session_ended"], f"{what}: the stream ended with session_ended: "
                                                           f"ended={stream.ended} last={names[-3:]}")
    stream.close()


try:
    _, bob, bob_csrf, _ = login("bob@demo.test")
    s = Stream(bob, "?branch=DEMO-1")
    eq(s.status, 200, "bob follows DEMO-1")
    check(any(e[0] == "order" for e in s.read(1.5)), "bob's stream is busy")
    eq(request("POST", "/api/dashboard/logout", cookie=bob, csrf=bob_csrf)[0], 200, "bob logs out")
    ends_with_session_ended(s, "logout")

    _, dave, _, _ = login("dave@demo.test")
    s = Stream(dave, "?branch=DEMO-1")
    eq(s.status, 200, "dave follows DEMO-1")
    eq(run(HUB, "user", "disable", users["dave"], env=henv).returncode, 0, "dave is disabled")
    ends_with_session_ended(s, "disable")

    _, erin, _, _ = login("erin@demo.test")
    s = Stream(erin)
    eq(s.status, 200, "erin follows her branches")
    psql(hub_url, f"UPDATE hub.dashboard_sessions SET expires_at = now() WHERE user_id = '{users['erin']}'")
    ends_with_session_ended(s, "expiry")

    # frank sees every branch of DEMO; then he is limited to DEMO-2. His stream of everything drops DEMO-1's events,
    # and his stream of DEMO-1 ends.
    _, frank, _, _ = login("frank@demo.test")
    every = Stream(frank)
    one = Stream(frank, "?branch=DEMO-1")
    eq((every.status, one.status), (200, 200), "frank follows all his branches, and DEMO-1")
    check(any(e[1]["order"]["branch_id"] == "DEMO-1" for e in every.read(1.5) if e[0] == "order"),
          "frank sees DEMO-1's orders")
    psql(hub_url, f"INSERT INTO hub.dashboard_user_branches (user_id, branch_id) VALUES ('{users['frank']}', "
                  "'DEMO-2')")
    one.read(12)
    check(one.ended, "frank's stream of DEMO-1 ended when DEMO-1 left his scope")
    one.close()
    every.read(3)  # whatever was on its way before the next check
    later = every.read(2)
    eq({e[1]["order"]["branch_id"] for e in later if e[0] == "order"}, set(),
       "after the check, no DEMO-1 event reaches frank")
    hub.request("POST", webhook, order("MARK-2", "DEMO-2"))
    got = [e for e in every.read(3) if e[0] == "order"]
    check(not every.ended and [e[1]["order"]["external_id"] for e in got] == ["MARK-2"],
          f"frank's stream goes on with DEMO-2: {[e[1]['order']['external_id'] for e in got]}")
    every.close()
finally:
    busy.set()
    feeder.join()

# ---- finding 8: an https:// public URL makes the cookie Secure and adds HSTS, whatever the listener speaks ----
status, headers, _ = request("GET", "/api/dashboard/session")
check("strict-transport-security" not in headers, "no HSTS with an http:// public URL")
proxied = watch(Service(HUB, "--role", "api", env={**henv, "ORDERHUB_PUBLIC_URL": "https://hub.example.test"}))
status, headers, body = request("POST", "/api/dashboard/login", {"email": "grace@demo.test", "password": PASSWORD},
                                server=proxied)
eq(status, 200, "grace logs in behind a TLS-terminating proxy")
cookie = headers.get("set-cookie", "")
check("Secure" in cookie.split("; ") and "HttpOnly" in cookie, f"the cookie is Secure: {cookie}")
check(headers.get("strict-transport-security", "").startswith("max-age="), f"HSTS on the login answer: {headers}")
for method, path in (("GET", "/dashboard/"), ("GET", "/api/dashboard/session"), ("GET", "/healthz"),
                     ("GET", "/nope"), ("POST", "/webhooks/nope")):
    status, headers, _ = request(method, path, body={} if method == "POST" else None, server=proxied)
    check(headers.get("strict-transport-security", "").startswith("max-age="), f"HSTS on {method} {path} ({status})")
grace = cookie.split(";", 1)[0].split("=", 1)[1]
grace_csrf = request("GET", "/api/dashboard/session", cookie=grace, server=proxied)[2]["csrf_token"]
status, headers, _ = request("POST", "/api/dashboard/logout", cookie=grace, csrf=grace_csrf, server=proxied)
check(status == 200 and "Secure" in headers.get("set-cookie", "").split("; "), "the clearing cookie is Secure too")
eq(proxied.stop(), 0, "the proxied hub stops")

eq(hub.stop(), 0, "the hub stops")
log = hub.log()
check(PASSWORD not in log, "no password in the log")
check("\u0000" not in log and "\\u0000" not in log, "no NUL reached the log")
finish()

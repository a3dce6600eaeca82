"""Plumbing for the reliability scenarios: a throwaway PostgreSQL cluster per scenario (so it may be killed),
the real orderhub and orderpos processes, a load generator that behaves like a delivery platform (retries every
non-200 answer), a fault proxy for the POS, and the reconciliation that proves nothing acknowledged was lost or
doubled. Standard library only; traffic to 127.0.0.1 only; every loop bounded in time."""
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HUB = os.environ.get("ORDERHUB_BIN", os.path.join(ROOT, "build", "bin", "orderhub"))
POS = os.environ.get("ORDERPOS_BIN", os.path.join(ROOT, "build", "bin", "orderpos"))
PG_LOCAL = os.path.join(ROOT, "deploy", "pg-local.sh")
PSQL = "/usr/lib/postgresql/15/bin/psql"
SECRET_KEY = os.urandom(32).hex()
SHORT = os.environ.get("ORDERHUB_RELIABILITY_SHORT") == "1"

_procs = []


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Cluster:
    """A PostgreSQL 15 cluster of the scenario's own, destroyed at exit."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="orderhub-rel-")
        self.url = subprocess.check_output([PG_LOCAL, "start", self.dir, "orderhub"], text=True).strip()
        self.pos_url = subprocess.check_output([PG_LOCAL, "url", self.dir, "orderpos"], text=True).strip()

    def ctl(self, action):
        subprocess.run([PG_LOCAL, action, self.dir], check=True, capture_output=True, timeout=120)

    def postmaster_pid(self):
        data = os.path.realpath(os.path.join(self.dir, "data"))
        with open(os.path.join(data, "postmaster.pid")) as f:
            return int(f.readline())

    def kill9(self):
        os.kill(self.postmaster_pid(), signal.SIGKILL)

    def destroy(self):
        subprocess.run([PG_LOCAL, "destroy", self.dir], capture_output=True, timeout=120)


def psql(url, sql):
    out = subprocess.run([PSQL, "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"psql: {out.stderr.strip()}")
    return out.stdout.strip()


def run(binary, *args, env=None, input=None):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run([binary, *args], capture_output=True, text=True, env=e, input=input, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"{os.path.basename(binary)} {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Proc:
    """A service process (orderhub/orderpos serve, haproxy, ...) with its log in a file; stopped by PID."""

    def __init__(self, name, argv, env=None, ready_url=None, logdir=None):
        e = dict(os.environ)
        e.update(env or {})
        self.name = name
        self.log_path = os.path.join(logdir or tempfile.gettempdir(), f"{name}-{os.getpid()}-{time.time_ns()}.log")
        self.log_file = open(self.log_path, "w")
        self.proc = subprocess.Popen(argv, env=e, stdout=self.log_file, stderr=subprocess.STDOUT)
        _procs.append(self.proc)
        if ready_url:
            wait_http(ready_url, 30, what=name)

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def signal(self, sig):
        if self.alive():
            os.kill(self.proc.pid, sig)

    def stop(self, timeout=15):
        self.signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None

    def kill9(self):
        self.signal(signal.SIGKILL)
        self.proc.wait(timeout=15)


def wait_http(url, timeout, what="service", status=200):
    import urllib.request
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == status:
                    return
        except Exception as e:  # noqa: BLE001 - waiting for readiness
            last = e
        time.sleep(0.1)
    raise RuntimeError(f"{what} not ready at {url}: {last}")


def _kill_all():
    for p in _procs:
        if p.poll() is None:
            p.kill()
            p.wait()


import atexit  # noqa: E402

atexit.register(_kill_all)


class Setup:
    """A cluster, a migrated and provisioned hub and POS, ready to start services."""

    def __init__(self, logdir):
        self.logdir = logdir
        self.cluster = Cluster()
        atexit.register(self.cluster.destroy)
        self.henv = {"ORDERHUB_DATABASE_URL": self.cluster.url, "ORDERHUB_SECRET_KEY": SECRET_KEY,
                     "ORDERHUB_LOG_FORMAT": "json"}
        self.penv = {"ORDERPOS_DATABASE_URL": self.cluster.pos_url, "ORDERHUB_LOG_FORMAT": "json"}
        run(HUB, "migrate", env=self.henv)
        run(POS, "migrate", env=self.penv)
        run(POS, "menu", "load", os.path.join(ROOT, "deploy", "demo-menu.json"), env=self.penv)
        run(POS, "user", "add", "--email", "hub@rel.test", "--password", "-", "--brand", "DEMO", env=self.penv,
            input="rel-password\n")
        run(HUB, "branch", "create", "--id", "DEMO-1", "--brand", "DEMO", env=self.henv)
        p = json.loads(run(HUB, "partner", "create", "--name", "Load Platform", "--label", "load", "--json",
                           env=self.henv))
        self.webhook_path = "/webhooks/" + p["webhook_url"].rsplit("/webhooks/", 1)[1]
        self.pos_port = free_port()

    def set_pos(self, port):
        run(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{port}", "--email",
            "hub@rel.test", "--password", "-", env=self.henv, input="rel-password\n")

    def add_brands(self, brands):
        """More brands beside DEMO, each with one branch `<brand>-1` (in the hub and in the POS menu, the demo
        menu's products and modifiers under each brand) and one POS user `hub@<brand>.rel.test` whose password is
        `rel-password`. The POS menu is loaded again with DEMO and every brand given (one file, so that DEMO's
        menu stays as it is). Returns {brand: branch id}."""
        with open(os.path.join(ROOT, "deploy", "demo-menu.json")) as f:
            demo = json.load(f)
        menu = {"brands": [], "branches": [], "products": [], "modifiers": []}
        for brand in ["DEMO", *brands]:
            if brand == "DEMO":
                names = demo["brands"]
                branches = [{**b, "brand_id": brand} for b in demo["branches"]]
            else:
                names = [{"id": brand, "name": brand.title()}]
                branches = [{"id": f"{brand}-1", "name": f"{brand.title()} branch", "brand_id": brand}]
            menu["brands"] += names
            menu["branches"] += branches
            menu["products"] += [{**p, "brand_id": brand, "branches": [b["id"] for b in branches]}
                                 for p in demo["products"]]
            menu["modifiers"] += [{**m, "brand_id": brand} for m in demo["modifiers"]]
        path = os.path.join(self.logdir, "menu-brands.json")
        with open(path, "w") as f:
            json.dump(menu, f)
        run(POS, "menu", "load", path, env=self.penv)
        for brand in brands:
            run(POS, "user", "add", "--email", f"hub@{brand.lower()}.rel.test", "--password", "-", "--brand", brand,
                env=self.penv, input="rel-password\n")
            run(HUB, "branch", "create", "--id", f"{brand}-1", "--brand", brand, env=self.henv)
        return {brand: f"{brand}-1" for brand in brands}

    def set_pos_token(self, brand, port, token):
        """The POS connection of `brand`: http://127.0.0.1:`port` with a bearer token (no login credentials)."""
        run(HUB, "pos", "set", "--brand", brand, "--base-url", f"http://127.0.0.1:{port}", "--token", "-",
            env=self.henv, input=token + "\n")

    def start_pos(self, port=None):
        port = port or self.pos_port
        return Proc("orderpos", [POS, "serve", "--listen", f"127.0.0.1:{port}"], env=self.penv,
                    ready_url=f"http://127.0.0.1:{port}/healthz", logdir=self.logdir)

    def start_hub(self, port, *args, name="orderhub", ready=True):
        """`orderhub serve` on `port`. The load generator is one partner that can exceed the default rate limit
        (1,000 requests/s) on a fast machine, and a 429 would then be taken for the fault under test: a hub gets a
        rate limit out of reach unless the scenario sets its own (s6 tests the limit itself)."""
        if "--rate-limit-per-second" not in args:
            args = (*args, "--rate-limit-per-second", "1000000", "--rate-limit-burst", "1000000")
        return Proc(name, [HUB, "serve", "--listen", f"127.0.0.1:{port}", *args], env=self.henv,
                    ready_url=f"http://127.0.0.1:{port}/readyz" if ready else None, logdir=self.logdir)

    def start_haproxy(self, front_port, hub_ports):
        """HAProxy with the deployment's own configuration (deploy/haproxy/haproxy.cfg), only its addresses
        changed to this run's ports."""
        return start_haproxy(self.logdir, front_port, hub_ports)


HAPROXY = "/usr/sbin/haproxy"


def haproxy_config(front_port, hub_ports):
    """deploy/haproxy/haproxy.cfg with the frontend bound to `front_port`, one server per hub port, and a global
    connection bound that fits a test machine's file-descriptor limit (HAProxy needs two per connection)."""
    out = []
    with open(os.path.join(ROOT, "deploy", "haproxy", "haproxy.cfg")) as f:
        lines = f.read().splitlines()
    servers_written = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("maxconn ") and not line.startswith("    " * 2):
            out.append("    maxconn 2000")
        elif stripped.startswith("bind "):
            out.append(f"    bind 127.0.0.1:{front_port}")
        elif stripped.startswith("server "):
            if not servers_written:
                out += [f"    server hub{i + 1} 127.0.0.1:{p} check" for i, p in enumerate(hub_ports)]
                servers_written = True
        else:
            out.append(line)
    if not servers_written:
        raise RuntimeError("deploy/haproxy/haproxy.cfg has no server lines to replace")
    return "\n".join(out) + "\n"


def start_haproxy(logdir, front_port, hub_ports):
    cfg = os.path.join(logdir, f"haproxy-{front_port}.cfg")
    with open(cfg, "w") as f:
        f.write(haproxy_config(front_port, hub_ports))
    subprocess.run([HAPROXY, "-c", "-q", "-f", cfg], check=True, timeout=30)
    proxy = Proc("haproxy", [HAPROXY, "-db", "-f", cfg], logdir=logdir)
    wait_http(f"http://127.0.0.1:{front_port}/readyz", 30, what="haproxy")
    return proxy


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


# ---------------------------------------------------------------------------------------------------------
# The load generator: a platform that sends order_created and order_updated and retries until 200.

STATUSES = ["assigned", "at_pick_up", "on_the_way", "delivered"]


def order_body(external_id, branch_id="DEMO-1"):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": branch_id,
            "payload": {"id": external_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 33, "tax": 4.95, "discount": 0, "total": 37.95, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": "Load", "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-BURGER", "quantity": 1, "price": 24,
                                   "options": [{"id": "M-CHEESE", "price": 3, "quantity": 1}]},
                                  {"id": "P-FRIES", "quantity": 1, "price": 9, "options": []}]}}


def update_body(external_id, status, second, branch_id="DEMO-1"):
    return {"event": "order_updated", "event_time": f"2024-05-01 18:{10 + second // 60:02d}:{second % 60:02d}",
            "branch_id": branch_id, "payload": {"order_id": external_id, "status": status}}


async def http_post(port, path, body, timeout=10.0):
    """One POST on a fresh connection. Returns (status, parsed body); (None, text) when no answer arrived; or
    ("cut", text) when an answer started but did not arrive whole."""
    data = json.dumps(body).encode()
    raw = b""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
        try:
            writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
            await writer.drain()
            while True:
                chunk = await asyncio.wait_for(reader.read(65536), timeout)
                if not chunk:
                    break
                raw += chunk
        finally:
            writer.close()
    except Exception as e:  # noqa: BLE001 - every transport failure is a non-answer the platform retries
        if not raw:
            return None, f"{type(e).__name__}: {e}"
    head, sep, payload = raw.partition(b"\r\n\r\n")
    if not raw:
        return None, "closed without an answer"
    length = None
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    if not sep or length is None or len(payload) < length:
        return "cut", f"incomplete answer {raw[:80]!r}"
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return "cut", f"bad answer {raw[:80]!r}"
    try:
        return status, json.loads(payload[:length])
    except ValueError:
        return status, payload.decode(errors="replace")


class Platform:
    """Sends orders and updates from `workers` concurrent senders for `seconds`, retrying every non-200 like a
    platform would, and records every acknowledgement."""

    def __init__(self, port_fn, path, workers=16, update_ratio=0.5, retry_ratio=0.2, prefix="O", pace=0.0,
                 branch_id="DEMO-1"):
        self.branch_id = branch_id  # the branch every order and update names
        self.pace = pace  # seconds each worker waits between requests (a steady rate instead of flat out)
        self.port_fn = port_fn  # called per request: the port to use now (several hubs, a proxy...)
        self.path = path
        self.workers = workers
        self.update_ratio = update_ratio
        self.retry_ratio = retry_ratio
        self.prefix = prefix
        self.next_id = 0
        self.acked = {}           # external id -> hub order id
        self.acked_updates = set()  # (external id, status, event_time)
        self.update_seconds = {}  # external id -> next second for its updates
        self.sent = 0
        self.non200 = {}
        self.bad_answers = []     # 200s that lie (wrong id, wrong shape)
        self.latencies = []
        self.gave_up = 0
        self.cut_off = []         # answers that started but did not arrive whole
        self.refusal_codes = {}   # "status error-code" -> count, for every non-200 answer that arrived

    def _note(self, status):
        key = str(status)
        self.non200[key] = self.non200.get(key, 0) + 1

    async def _until_ok(self, body, deadline):
        while time.time() < deadline:
            started = time.time()
            status, answer = await http_post(self.port_fn(), self.path, body)
            self.sent += 1
            if status == 200:
                self.latencies.append(time.time() - started)
                return answer
            if status == "cut":
                self.cut_off.append(answer)
            elif isinstance(status, int):
                code = answer.get("error", {}).get("code") if isinstance(answer, dict) else None
                self.refusal_codes[f"{status} {code}"] = self.refusal_codes.get(f"{status} {code}", 0) + 1
            self._note(status)
            await asyncio.sleep(0.2 + random.random() * 0.2)
        self.gave_up += 1
        return None

    async def _worker(self, stop_at, drain_until):
        while time.time() < stop_at:
            if self.pace:
                await asyncio.sleep(self.pace)
            r = random.random()
            if self.acked and r < self.update_ratio:
                ext = random.choice(list(self.acked))
                second = self.update_seconds.get(ext, 0)
                if second >= len(STATUSES):
                    continue
                self.update_seconds[ext] = second + 1
                body = update_body(ext, STATUSES[second], second, self.branch_id)
                if await self._until_ok(body, drain_until) is not None:
                    self.acked_updates.add((ext, STATUSES[second], body["event_time"]))
            elif self.acked and r < self.update_ratio + self.retry_ratio:
                ext = random.choice(list(self.acked))  # an exact retry of an acknowledged order
                answer = await self._until_ok(order_body(ext, self.branch_id), drain_until)
                if answer is not None and answer.get("order_id") != self.acked[ext]:
                    self.bad_answers.append(f"retry of {ext} answered {answer}")
            else:
                self.next_id += 1
                ext = f"{self.prefix}-{self.next_id}"
                answer = await self._until_ok(order_body(ext, self.branch_id), drain_until)
                if answer is None:
                    continue
                if not isinstance(answer, dict) or answer.get("status") != "success" or not answer.get("order_id"):
                    self.bad_answers.append(f"{ext}: {answer}")
                else:
                    self.acked[ext] = answer["order_id"]

    def run(self, seconds, drain=60):
        """Sends for `seconds`; requests under way may keep retrying `drain` more seconds."""
        stop_at = time.time() + seconds
        drain_until = stop_at + drain

        async def main():
            await asyncio.gather(*(self._worker(stop_at, drain_until) for _ in range(self.workers)))
        asyncio.run(main())

    def run_in_thread(self, seconds, drain=60):
        t = threading.Thread(target=self.run, args=(seconds, drain), daemon=True)
        t.start()
        return t

    def p99_ms(self):
        if not self.latencies:
            return 0.0
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(len(xs) * 0.99))] * 1000


# ---------------------------------------------------------------------------------------------------------
# Reconciliation.

def wait_delivered(setup, timeout):
    deadline = time.time() + timeout
    left = None
    while time.time() < deadline:
        left = int(psql(setup.cluster.url, "SELECT count(*) FROM hub.forward_jobs WHERE state <> 'delivered'"))
        if left == 0:
            return 0
        time.sleep(0.5)
    return left


def reconcile(name, setup, platform, delivery_timeout=120, expect_delivery=True):
    """Checks every promise; prints the one-line summary; returns the list of problems."""
    url, pos_url = setup.cluster.url, setup.cluster.pos_url
    problems = list(platform.bad_answers) + [f"answer cut off: {c}" for c in platform.cut_off[:10]]
    stored = {}
    for line in psql(url, "SELECT external_id || '|' || id || '|' || "
                          "(SELECT count(*) FROM hub.order_items i WHERE i.order_id = o.id) || '|' || "
                          "(SELECT count(*) FROM hub.order_item_options x WHERE x.order_id = o.id) || '|' || "
                          "(SELECT count(*) FROM hub.forward_jobs j WHERE j.order_id = o.id) || '|' || "
                          "(SELECT count(*) FROM hub.order_status_log s WHERE s.order_id = o.id "
                          " AND s.status = 'received') FROM hub.orders o").splitlines():
        ext, oid, items, options, jobs, received = line.split("|")
        if ext in stored:
            problems.append(f"order {ext} stored twice")
        stored[ext] = oid
        if (items, options, jobs, received) != ("2", "1", "1", "1"):
            problems.append(f"order {ext} is partial: items={items} options={options} jobs={jobs} log={received}")
    lost = [ext for ext in platform.acked if ext not in stored]
    wrong_id = [ext for ext, oid in platform.acked.items() if ext in stored and stored[ext] != oid]
    problems += [f"acknowledged order {ext} is not stored" for ext in lost[:10]]
    problems += [f"order {ext} answered with another id than stored" for ext in wrong_id[:10]]
    logged = set(tuple(l.split("|")) for l in psql(
        url, "SELECT o.external_id || '|' || s.status || '|' || to_char(s.event_time AT TIME ZONE 'UTC', "
             "'YYYY-MM-DD HH24:MI:SS') FROM hub.order_status_log s JOIN hub.orders o ON o.id = s.order_id "
             "WHERE s.source = 'platform' AND s.status <> 'received'").splitlines() if l)
    missing_updates = [u for u in platform.acked_updates if u not in logged]
    problems += [f"acknowledged update {u} is not in the status log" for u in missing_updates[:10]]
    doubled_updates = psql(url, "SELECT count(*) FROM (SELECT order_id, status, event_time FROM hub.order_status_log "
                                "WHERE source = 'platform' GROUP BY 1, 2, 3 HAVING count(*) > 1) d")
    if doubled_updates != "0":
        problems.append(f"{doubled_updates} status updates logged twice")
    delivered = 0
    doubled = 0
    if expect_delivery:
        left = wait_delivered(setup, delivery_timeout)
        if left:
            problems.append(f"{left} orders not delivered to the POS within {delivery_timeout} s")
        counts = {}
        for line in psql(pos_url, "SELECT partner_reference || '|' || count(*) FROM pos.orders "
                                  "GROUP BY partner_reference").splitlines():
            ref, n = line.split("|")
            counts[ref.split(":", 1)[1]] = int(n)
        delivered = sum(1 for ext in stored if counts.get(ext, 0) >= 1)
        doubled = sum(1 for n in counts.values() if n > 1)
        undelivered = [ext for ext in stored if counts.get(ext, 0) == 0]
        problems += [f"stored order {ext} never reached the POS" for ext in undelivered[:10]]
        if doubled:
            problems.append(f"{doubled} orders reached the POS more than once")
    ok = len(platform.acked)
    print(f"{name}: sent={platform.sent} ok={ok} stored={len(stored)} delivered={delivered} "
          f"updates_ok={len(platform.acked_updates)} non200={json.dumps(platform.non200, sort_keys=True)} "
          f"gave_up={platform.gave_up} lost={len(lost)} doubled={doubled} p99_ms={platform.p99_ms():.1f}",
          flush=True)
    for p in problems[:30]:
        print(f"PROBLEM: {p}", flush=True)
    return problems


def finish(problems):
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    sys.exit(1 if problems else 0)


def forwarder_id(proc, timeout=10):
    """The forwarder id a hub process logged at start ("forwarder started")."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(proc.log_path) as f:
            for line in f:
                if '"forwarder started"' in line:
                    return json.loads(line)["forwarder"]
        time.sleep(0.1)
    raise RuntimeError(f"{proc.name} logged no forwarder id")


def pos_login(port, email, password="rel-password"):
    """A bearer token from a running orderpos (POST /api/login)."""
    import urllib.request
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/login", method="POST",
                                 data=json.dumps({"email": email, "password": password}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())["access_token"]


def scrape_metrics(port, timeout=2):
    """GET /metrics of a service on 127.0.0.1: {(name, ((label, value), ...)): value}; {} when it did not answer."""
    import re
    import urllib.request
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as r:
            text = r.read().decode()
    except Exception:  # noqa: BLE001 - a missed scrape is a gap, not a failure
        return {}
    out = {}
    for line in text.splitlines():
        m = re.match(r'^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)', line)
        if not m or line.startswith("#"):
            continue
        labels = tuple(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        try:
            out[(m.group(1), labels)] = float(m.group(3))
        except ValueError:
            pass
    return out


def json_log(path):
    """The JSON lines of a service's log (other lines skipped), each with `epoch` (seconds) from its `time`."""
    import datetime
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            if not line.startswith("{"):
                continue
            try:
                entry = json.loads(line)
                t = entry.get("time", "")
                entry["epoch"] = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                    tzinfo=datetime.timezone.utc).timestamp() if t else None
            except ValueError:
                continue
            out.append(entry)
    return out


def percentile(values, p):
    xs = sorted(values)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


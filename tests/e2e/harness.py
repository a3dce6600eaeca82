"""Shared plumbing for the end-to-end tests: throwaway databases, the real binaries on free loopback ports,
HTTP on 127.0.0.1 only, and processes stopped by PID. Standard library only."""
import atexit
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time

HUB = os.environ.get("ORDERHUB_BIN", "build/bin/orderhub")
POS = os.environ.get("ORDERPOS_BIN", "build/bin/orderpos")
SOURCE = os.environ.get("ORDERHUB_SOURCE_DIR", os.getcwd())
PSQL = "/usr/lib/postgresql/15/bin/psql"

_failures = []
_passes = 0
_procs = []


def admin_url():
    url = os.environ.get("ORDERHUB_TEST_DATABASE_URL")
    if not url:
        sys.exit("ORDERHUB_TEST_DATABASE_URL is not set: run the e2e tests via tests/run.sh")
    return url


def with_database(url, db):
    scheme, rest = url.split("://", 1)
    host = rest.split("/", 1)[0].split("?", 1)[0]
    return f"{scheme}://{host}/{db}"


def psql(url, sql):
    out = subprocess.run([PSQL, "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"psql failed: {out.stderr.strip()}")
    return out.stdout.strip()


def pos_health(url, brand, environment, since, host="http://127.0.0.1:9"):
    """Writes what a forwarder writes when its circuit breaker for a brand's POS host opens (`since`: an ISO time)
    or closes (`since` None): the row of hub.pos_connection_health that the dashboard's banner reads."""
    state, at = ("open", f"'{since}'") if since else ("closed", "NULL")
    psql(url, "INSERT INTO hub.pos_connection_health (brand_id, environment, host, state, unreachable_since, "
              f"last_error, forwarder) VALUES ('{brand}', '{environment}', '{host}', '{state}', {at}, "
              "'connection refused', 'test') ON CONFLICT (brand_id, environment) DO UPDATE SET state = "
              "EXCLUDED.state, unreachable_since = EXCLUDED.unreachable_since, updated_at = now()")


def pg_ctl(action):
    """Stops or starts the test cluster (deploy/pg-local.sh stop|start), for outage tests."""
    pgdir = os.environ.get("ORDERHUB_TEST_PG_DIR")
    if not pgdir:
        sys.exit("ORDERHUB_TEST_PG_DIR is not set: run the e2e tests via tests/run.sh")
    out = subprocess.run([os.path.join(SOURCE, "deploy", "pg-local.sh"), action, pgdir], capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"pg-local.sh {action} failed: {out.stderr}")


SECRET_KEY = os.urandom(32).hex()


def hub_env(url, **more):
    env = {"ORDERHUB_DATABASE_URL": url, "ORDERHUB_PUBLIC_URL": "http://127.0.0.1:1",
           "ORDERHUB_SECRET_KEY": SECRET_KEY}
    env.update(more)
    return env


def create_database():
    """A fresh database, dropped at exit."""
    name = f"e2e_{os.getpid()}_{random.randrange(1 << 30)}"
    psql(admin_url(), f'CREATE DATABASE "{name}"')
    atexit.register(lambda: psql(admin_url(), f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    return with_database(admin_url(), name)


def run(binary, *args, env=None, input=None, timeout=60):
    """Runs a CLI command; returns CompletedProcess with text output."""
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([binary, *args], capture_output=True, text=True, env=e, input=input, timeout=timeout)


def demo_hub(partner_name="Platform"):
    """A fresh migrated hub database with branch DEMO-1 of brand DEMO and one partner: (url, env, webhook key)."""
    url = create_database()
    env = hub_env(url)
    eq(run(HUB, "migrate", env=env).returncode, 0, "migrate")
    eq(run(HUB, "branch", "create", "--id", "DEMO-1", "--brand", "DEMO", env=env).returncode, 0, "branch create")
    created = run(HUB, "partner", "create", "--name", partner_name, "--json", env=env)
    eq(created.returncode, 0, "partner create")
    return url, env, json.loads(created.stdout)["webhook_url"].rsplit("/webhooks/", 1)[1]


class Service:
    """A real orderhub/orderpos `serve` process on a free loopback port; stopped by PID."""

    def __init__(self, binary, *args, env=None, listen="127.0.0.1:0", read_log=True):
        e = dict(os.environ)
        e.update(env or {})
        e.setdefault("ORDERHUB_LOG_FORMAT", "json")
        self.proc = subprocess.Popen([binary, "serve", "--listen", listen, *args], env=e,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _procs.append(self.proc)
        self.lines = []
        self.port = None
        deadline = time.time() + 30
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.lines.append(line)
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("msg") == "listening":
                self.port = int(rec["address"].rsplit(":", 1)[1])
                break
        if self.port is None:
            self.proc.kill()
            raise RuntimeError(f"{binary} did not start: {''.join(self.lines)}")
        # Keep reading the log (unless a test wants a reader that stalls: read_log=False, then read_log_now()).
        self._reader = threading.Thread(target=self._drain, daemon=True)
        if read_log:
            self._reader.start()

    def read_log_now(self):
        """Starts reading a log left unread by read_log=False."""
        if self._reader.ident is None:
            self._reader.start()

    def _drain(self):
        for line in self.proc.stderr:
            self.lines.append(line)

    def request(self, method, path, body=None, headers=None, timeout=30):
        """Returns (status, headers dict with lower-case names, parsed JSON body or raw text)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = body if isinstance(body, (bytes, type(None))) else (
            body.encode() if isinstance(body, str) else json.dumps(body).encode())
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        raw = resp.read()
        conn.close()
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = raw.decode(errors="replace")
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, parsed

    def raw_socket(self):
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """Sends `sig` to the PID and returns the exit code; the rest of stderr is in self.lines."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
        if self._reader.ident is not None:
            self._reader.join(timeout=5)
        return self.proc.returncode

    def log(self):
        return "".join(self.lines)


def _kill_all():
    for p in _procs:
        if p.poll() is None:
            p.kill()
            p.wait()


atexit.register(_kill_all)


def check(cond, what):
    """Records one assertion; the script fails at the end if any failed."""
    global _passes
    if cond:
        _passes += 1
    else:
        _failures.append(what)
        print(f"FAIL: {what}", flush=True)


def eq(actual, expected, what):
    check(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")


def finish():
    print(f"{_passes} passed, {len(_failures)} failed")
    sys.exit(1 if _failures else 0)

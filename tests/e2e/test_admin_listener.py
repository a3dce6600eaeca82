"""What the public listener tells anyone (issue 20, finding 12): /readyz says ready or not ready and nothing more;
with --admin-listen, /metrics (which names partners) and the detailed /readyz move to a separate listener, and the
public one no longer serves /metrics. Without --admin-listen /metrics stays on the main listener."""
import http.client
import json

from harness import HUB, Service, check, create_database, eq, finish, hub_env, psql, run

url = create_database()
env = hub_env(url)


def admin_port(svc):
    """The admin listener's port, from its "admin listening" log line."""
    for line in svc.lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("msg") == "admin listening":
            return int(rec["address"].rsplit(":", 1)[1])
    return None


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", path)
    resp = conn.getresponse()
    raw = resp.read().decode(errors="replace")
    conn.close()
    return resp.status, raw


def not_ready_body(body, what):
    """A public 503 from /readyz: the product's failure shape, saying only that the hub is not ready."""
    check(isinstance(body, dict) and body.get("error", {}).get("code") == "not_ready", f"{what}: {body}")
    message = body.get("error", {}).get("message", "") if isinstance(body, dict) else ""
    eq(message, "not ready", f"{what}: the message tells nothing about the database")


# Not migrated: the public /readyz says "not ready" without the reason (the migration state, or an exception's text).
svc = Service(HUB, env=env)
status, _, body = svc.request("GET", "/readyz")
eq(status, 503, "public /readyz before migrate")
not_ready_body(body, "public /readyz before migrate")
status, _, text = svc.request("GET", "/metrics")
eq(status, 200, "without --admin-listen /metrics stays on the main listener")
check("orderhub_ready 0" in text, "the metrics say not ready")
eq(svc.stop(), 0, "exit code")

r = run(HUB, "migrate", env=env)
eq(r.returncode, 0, f"migrate: {r.stderr}")

# A bad --admin-listen is a one-line user error.
r = run(HUB, "serve", "--listen", "127.0.0.1:0", "--admin-listen", "nonsense", env=env)
eq(r.returncode, 1, "a bad --admin-listen exits 1")
check("admin" in r.stderr, f"the message names the option: {r.stderr.strip()}")

svc = Service(HUB, "--admin-listen", "127.0.0.1:0", env=env)
port = admin_port(svc)
check(port is not None and port != svc.port, f"the admin listener has its own port: {port}")
eq(svc.request("GET", "/readyz")[0], 200, "public /readyz ready")
status, _, body = svc.request("GET", "/metrics")
eq(status, 404, "with --admin-listen the public listener does not serve /metrics")
if port:
    status, text = get(port, "/metrics")
    eq(status, 200, "admin /metrics")
    check("orderhub_ready 1" in text and "orderhub_db_pool_workers" in text, "admin /metrics is the hub's")
    status, text = get(port, "/readyz")
    eq(status, 200, "admin /readyz")
    eq(json.loads(text), {"status": "ready"}, "admin /readyz body")
    eq(get(port, "/healthz")[0], 200, "admin /healthz")
    eq(get(port, "/webhooks/anything")[0], 404, "the admin listener serves no webhooks")
    eq(get(port, "/api/me")[0], 404, "nor the dashboard")
eq(svc.stop(), 0, "exit code with an admin listener")

# A hub whose schema is behind: the admin /readyz tells why, the public one does not.
psql(url, "DELETE FROM hub.schema_migrations WHERE version = (SELECT max(version) FROM hub.schema_migrations)")
svc = Service(HUB, "--admin-listen", "127.0.0.1:0", env=env)
port = admin_port(svc)
status, _, body = svc.request("GET", "/readyz")
eq(status, 503, "public /readyz with a migration missing")
not_ready_body(body, "public /readyz with a migration missing")
if port:
    status, text = get(port, "/readyz")
    eq(status, 503, "admin /readyz with a migration missing")
    check("migration" in text and "not applied" in text, f"the admin /readyz says which: {text}")
eq(svc.stop(), 0, "exit code")

finish()

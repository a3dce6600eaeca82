"""GET /metrics on the real orderhub and orderpos: valid Prometheus text exposition format, counters that move by
exactly what was sent (webhooks by event, outcome and status; forwarding attempts and outcomes; rate-limit
refusals per partner), outbox depth by state read from the database, readiness, at most one database read per
second however often it is scraped, and every metric the alert rules of deploy/prometheus/alerts.yml use."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import time

from harness import HUB, POS, SOURCE, Service, check, create_database, eq, finish, hub_env, psql, run
from metrics_text import ExpositionError, parse, value

# The reader itself refuses what Prometheus refuses.
for bad in ("x 1\n",                                            # no TYPE
            "# TYPE x gauge\nx{a=\"\\q\"} 1\n",                 # bad escape
            "# TYPE x gauge\nx 1\nx 2\n",                       # a series twice
            "# TYPE x counter\nx one\n",                        # not a number
            "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"):
    try:
        parse(bad)
        check(False, f"the reader refuses {bad!r}")
    except ExpositionError:
        check(True, "")

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
cli(POS, "user", "add", "--email", "hub@demo.test", "--password", "s3cret-pass", "--brand", "DEMO", env=penv)
cli(HUB, "branch", "create", "--id", "DEMO-1", "--brand", "DEMO", env=henv)
cli(HUB, "branch", "create", "--id", "NOPOS-1", "--brand", "NOPOS", env=henv)  # no POS connection: auth_failed
partner = json.loads(cli(HUB, "partner", "create", "--name", "Platform", "--json", env=henv).stdout)
hook = "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1]
limited = json.loads(cli(HUB, "partner", "create", "--name", "Flood", "--json", env=henv).stdout)
limited_hook = "/webhooks/" + limited["webhook_url"].rsplit("/webhooks/", 1)[1]
cli(HUB, "partner", "limit", limited["id"], "--per-second", "1", "--burst", "2", env=henv)

pos = Service(POS, env=penv)
status, _, body = pos.request("POST", "/api/login", {"email": "hub@demo.test", "password": "s3cret-pass"})
eq(status, 200, "POS login")
cli(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{pos.port}", "--token", "-", env=henv,
    input=body["access_token"] + "\n")

hub = Service(HUB, env=henv)


def scrape(svc=hub):
    status, headers, text = svc.request("GET", "/metrics")
    eq(status, 200, "GET /metrics")
    check(headers.get("content-type", "").startswith("text/plain; version=0.0.4"),
          f"exposition content type ({headers.get('content-type')})")
    try:
        return parse(text)
    except ExpositionError as e:
        check(False, f"/metrics parses as the text exposition format: {e}\n{text}")
        return {}, {}


def order(order_id, branch="DEMO-1"):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": branch,
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                        "schedule_date": None, "car_data": None,
                        "customer": {"name": "Sara", "phone": "+966500000001", "address": None},
                        "items": [{"id": "P-BURGER", "quantity": 1, "price": 24, "options": []}]}}


def update(order_id, status="on_the_way"):
    return {"event": "order_updated", "event_time": "2024-05-01 18:10:00", "branch_id": "DEMO-1",
            "payload": {"order_id": order_id, "status": status}}


families0, before = scrape()
eq(value(before, "orderhub_ready"), 1, "ready")
eq(value(before, "orderhub_database_up"), 1, "database up")

sent = [(order("M-1"), 200), (order("M-2"), 200), (order("M-3"), 200), (order("M-1"), 200),  # 3 new, 1 repeat
        (b"{not json", 400), ({"event": "order_created", "branch_id": "DEMO-1", "payload": {}}, 422),
        (update("M-1"), 200), (update("NO-SUCH"), 404), (order("M-4", "NOPOS-1"), 200)]
hub_ids = []
for body, expected in sent:
    status, headers, answer = hub.request("POST", hook, body)
    eq(status, expected, f"webhook answered {expected}")
    if isinstance(answer, dict) and answer.get("order_id"):
        hub_ids.append(answer["order_id"])
eq(hub.request("POST", "/webhooks/no-such-key", order("M-9"))[0], 404, "unknown key")
flood = [hub.request("POST", limited_hook, b"{}")[0] for _ in range(6)]
refused = flood.count(429)
check(refused >= 3, f"the flood partner is rate limited ({flood})")


def job_state(hub_id):
    return psql(hub_url, f"SELECT state FROM hub.forward_jobs WHERE order_id = '{hub_id}'")


deadline = time.time() + 30
while time.time() < deadline and [job_state(i) for i in set(hub_ids)].count("delivered") < 3:
    time.sleep(0.1)
while time.time() < deadline and "auth_failed" not in [job_state(i) for i in set(hub_ids)]:
    time.sleep(0.1)
eq(sorted(job_state(i) for i in set(hub_ids)), ["auth_failed", "delivered", "delivered", "delivered"],
   "three orders delivered, one without a POS connection")
time.sleep(1.2)  # the outbox figures are read at most once a second
families, after = scrape()


def delta(name, **labels):
    return value(after, name, **labels) - value(before, name, **labels)


W = "orderhub_webhook_requests_total"
for labels, n in ((dict(event="order_created", outcome="created", status="200"), 4),
                  (dict(event="order_created", outcome="duplicate", status="200"), 1),
                  (dict(event="other", outcome="invalid", status="400"), 1),
                  (dict(event="order_created", outcome="invalid", status="422"), 1),
                  (dict(event="order_updated", outcome="appended", status="200"), 1),
                  (dict(event="order_updated", outcome="order_not_found", status="404"), 1),
                  (dict(event="other", outcome="unknown_key", status="404"), 1),
                  (dict(event="other", outcome="rate_limited", status="429"), refused)):
    eq(delta(W, **labels), n, f"{W}{labels}")
# The flood's accepted requests ({} is an unknown event: 422) count too.
eq(delta(W, event="other", outcome="invalid", status="422"), 6 - refused, "the flood's accepted requests")
eq(delta("orderhub_http_requests_total", route="webhooks", status="200"), 6, "webhook 200s by route")
eq(delta("orderhub_webhook_request_duration_seconds_count", event="order_created"), 6, "created latency count")
eq(delta("orderhub_webhook_request_duration_seconds_count", event="order_updated"), 2, "updated latency count")
check(delta("orderhub_webhook_request_duration_seconds_sum", event="order_created") > 0, "latency sum moved")
eq(delta("orderhub_forward_attempts_total", result="delivered"), 3, "three delivering attempts")
eq(delta("orderhub_forward_claims_finished_total", state="delivered"), 3, "three claims delivered")
eq(delta("orderhub_forward_claims_finished_total", state="auth_failed"), 1, "one claim auth_failed")
eq(delta("orderhub_forward_latency_seconds_count"), 3, "three commit-to-POS latencies")
check(0 < delta("orderhub_forward_latency_seconds_sum") < 30, "commit-to-POS latency is plausible")
eq(delta("orderhub_forward_attempt_duration_seconds_count"), 3, "three POS exchanges timed")
eq(value(after, "orderhub_outbox_jobs", state="auth_failed"), 1, "outbox: one auth_failed job")
eq(value(after, "orderhub_outbox_jobs", state="dead"), 0, "outbox: no dead job (series present at 0)")
check(("orderhub_outbox_jobs", frozenset({("state", "dead")})) in after, "outbox dead series exists")
eq(value(after, "orderhub_outbox_jobs", state="pending"), 0, "outbox: nothing pending")
check(value(after, "orderhub_outbox_oldest_job_age_seconds", state="auth_failed") > 1, "age of the auth_failed job")
eq(value(after, "orderhub_rate_limited_by_partner_total", partner=limited["id"]), refused,
   "refusals of the flood partner")
eq(value(after, "orderhub_rate_limited_total"), refused, "refusals in total")
check(("orderhub_rate_limited_by_partner_total", frozenset({("partner", partner["id"])})) not in after,
      "no series for a partner never refused")
check(delta("orderhub_db_pool_wait_seconds_count") > 10, "database jobs' queue waits observed")
check(delta("orderhub_db_pool_jobs_total") > 10, "database jobs counted")
eq(value(after, "orderhub_db_pool_workers"), 4, "pool workers")
# One request at a time is no load: the pipeline has its connection and sent nothing.
eq(value(after, "orderhub_ingest_pipeline_up"), 1, "the ingest pipeline has its connection")
eq(value(after, "orderhub_ingest_pipeline_requests_total"), 0, "no load, no request through the pipeline")
eq(value(after, "orderhub_ingest_pipeline_connections_lost_total"), 0, "the pipeline lost no connection")
check(value(after, "orderhub_http_connections") >= 1, "open connections (this scrape's)")
# One network thread, plain HTTP, a host that allows io_uring (the unit tests' burst ring requires it): the ring.
eq(value(after, "orderhub_http_io_uring"), 1, "the listener's bursts go through io_uring")
check(delta("orderhub_http_requests_total", route="metrics", status="200") >= 1, "scrapes are counted")
text = hub.request("GET", "/metrics")[2]
for secret in (hook.rsplit("/", 1)[1], limited_hook.rsplit("/", 1)[1], "+966500000001"):
    check(secret not in text, "no webhook key or phone number in /metrics")
eq(hub.request("POST", "/metrics")[0], 405, "POST /metrics: 405")

# The request log line says who, what and which order.
lines = [json.loads(l) for l in hub.lines if l.startswith("{")]
created = [l for l in lines if l.get("msg") == "request" and l.get("outcome") == "created"]
eq(len(created), 4, "one request line per stored order")
if created:
    c = created[0]
    eq((c.get("partner"), c.get("event"), c.get("external_id"), c.get("status")),
       (partner["id"], "order_created", "M-1", 200), "request line: partner, event, platform order id, status")
    check(c.get("order_id") in hub_ids and c.get("request_id") and c.get("latency_us", -1) >= 0 and c.get("time")
          and c.get("level") == "info", f"request line: hub order id, request id, latency, time, level ({c})")
    fwd = [l for l in lines if l.get("msg") == "forward attempt" and l.get("order_id") == c.get("order_id")]
    eq([(f.get("outcome"), f.get("http_status"), f.get("external_id")) for f in fwd], [("delivered", 201, "M-1")],
       "the same order's forward attempt line, found by its order id")
    stored = psql(hub_url, f"SELECT request_id FROM hub.inbox WHERE order_id = '{c.get('order_id')}' "
                           "ORDER BY id LIMIT 1")
    eq(stored, c.get("request_id"), "the inbox row holds the request line's request id")

# Scrapes in a burst read the database at most once a second.
api = Service(HUB, "--role", "api", env=henv)
reads = "orderhub_metrics_database_reads_total"
_, s0 = scrape(api)
for _ in range(5):
    _, s1 = scrape(api)
check(value(s1, reads) - value(s0, reads) <= 1, "five scrapes within a second: at most one database read")
time.sleep(1.1)
_, s2 = scrape(api)
eq(value(s2, reads) - value(s1, reads), 1,
   "a scrape after a second reads again")
check(("orderhub_rate_limited_total", frozenset()) in s2, "api role: rate-limit total present")
api.stop()

# A hub on a database without migrations is not ready.
bare = Service(HUB, "--role", "api", env=hub_env(create_database()))
_, s = scrape(bare)
eq(value(s, "orderhub_ready"), 0, "not ready before migrate")
bare.stop()

# Every metric the alert rules use exists in a real scrape; the file is YAML with the rules expected.
rules_path = os.path.join(SOURCE, "deploy", "prometheus", "alerts.yml")
rules_text = open(rules_path).read()
exprs = "\n".join(l for l in rules_text.split("\n") if not l.lstrip().startswith("#"))
used = set(re.findall(r"\b(orderhub_[a-z_]+[a-z])", exprs))
exposed = set(families)
for name in sorted(used):
    base = re.sub(r"_(bucket|sum|count)$", "", name)
    check(name in exposed or base in exposed, f"alerts.yml uses {name}, which /metrics exposes")
check(len(used) >= 4, f"alerts.yml uses the hub's metrics ({sorted(used)})")
import yaml  # noqa: E402 - python3-yaml, installed by deploy/install-deps.sh

# The rule files parse and name the alerts the operations issue asks for.
doc = yaml.safe_load(rules_text)
alerts = {r["alert"]: r for g in doc["groups"] for r in g["rules"]}
for name in ("OrderHubJobsDead", "OrderHubJobsAuthFailed", "OrderHubOldestPendingJobOld", "OrderHubHigh5xxRatio",
             "OrderHubNotReady", "OrderHubOrdersRejected"):
    check(name in alerts and alerts[name].get("expr"), f"alert {name} defined with an expression")
# Orders the POS rejected: a series the forwarder really counts (state="rejected"), with the operator's next steps.
rejected = alerts.get("OrderHubOrdersRejected", {})
check(re.search(r'orderhub_forward_claims_finished_total\{state="rejected"\}', rejected.get("expr", "")),
      f"the rejected-orders alert counts rejected claims ({rejected.get('expr')})")
check(("orderhub_forward_claims_finished_total", frozenset({("state", "rejected")})) in after,
      "/metrics exposes the rejected claims' series")
check("order resend" in rejected.get("annotations", {}).get("description", ""),
      "the rejected-orders alert says what to do")
scrape_doc = yaml.safe_load(open(os.path.join(SOURCE, "deploy", "prometheus", "prometheus.yml")).read())
check("alerts.yml" in json.dumps(scrape_doc.get("rule_files")), "the scrape example loads alerts.yml")

# orderpos counts its requests too.
_, p0 = scrape(pos)
pos.request("POST", "/api/login", {"email": "hub@demo.test", "password": "wrong"})
pos.request("GET", "/nowhere")
_, p1 = scrape(pos)
eq(value(p1, "orderpos_http_requests_total", route="login", status="401")
   - value(p0, "orderpos_http_requests_total", route="login", status="401"), 1, "orderpos: a 401 login counted")
eq(value(p1, "orderpos_http_requests_total", route="other", status="404")
   - value(p0, "orderpos_http_requests_total", route="other", status="404"), 1, "orderpos: a 404 counted")
check(value(p1, "orderpos_http_requests_total", route="orders", status="201") >= 3, "orderpos: orders counted")

hub.stop()

# ORDERHUB_LOG_FORMAT=text: the same lines for humans, key=value. With ORDERHUB_IO_URING=off: no ring, said at start
# and on /metrics.
probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
env = dict(os.environ)
env.update(henv)
env["ORDERHUB_LOG_FORMAT"] = "text"
env["ORDERHUB_IO_URING"] = "off"
text_hub = subprocess.Popen([HUB, "serve", "--role", "api", "--listen", f"127.0.0.1:{port}"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
try:
    deadline = time.time() + 20
    answered = None
    while time.time() < deadline and answered is None:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("POST", hook, body=json.dumps(order("T-1")), headers={"Content-Type": "application/json"})
            answered = conn.getresponse().status
            conn.close()
        except OSError:
            time.sleep(0.1)
    eq(answered, 200, "a text-logging hub stores an order")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/metrics")
    _, off_metrics = parse(conn.getresponse().read().decode())
    conn.close()
    check(("orderhub_http_io_uring", frozenset()) in off_metrics, "orderhub_http_io_uring reported")
    eq(value(off_metrics, "orderhub_http_io_uring"), 0, "ORDERHUB_IO_URING=off: no ring")
finally:
    text_hub.send_signal(signal.SIGTERM)
    err = text_hub.communicate(timeout=15)[1]
request_lines = [l for l in err.split("\n") if " info request " in l]
check(any(l.startswith("20") and "route=/webhooks/{key}" in l and "status=200" in l and "event=order_created" in l
          and "external_id=T-1" in l and f"partner={partner['id']}" in l for l in request_lines),
      f"text log: one key=value request line ({err[-800:]})")
check(not any(l.startswith("{") for l in err.split("\n")), "text log: no JSON lines")
check("io_uring is off (--io-uring)" in err, "ORDERHUB_IO_URING=off: said at start")
check("+966500000001" not in err, "text log: no phone number")

pos.stop()
finish()

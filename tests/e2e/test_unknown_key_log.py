"""Unknown webhook keys in the access log (issue 20, finding 3): a flood of random keys must not write a line per
request. Each webhook refused for an unknown key is counted and summed up in one `requests refused` line a second
(count, period, the first refused request's id); every other request keeps its own `request` line; the metrics
still count every refused request; no key reaches the log. Refusals past a connection's budget still get their
404 JSON answer."""
import http.client
import json
import os
import time

from harness import HUB, Service, check, demo_hub, eq, finish
from metrics_text import parse, value

_, henv, real_key = demo_hub()

hub = Service(HUB, "--role", "api", env=henv)


def metric(name, **labels):
    status, _, text = hub.request("GET", "/metrics")
    eq(status, 200, "/metrics")
    return value(parse(text)[1], name, **labels)


W = "orderhub_webhook_requests_total"
before = metric(W, event="other", outcome="unknown_key", status="404")

# Unknown keys, each on its own connection with its own request id, and a few on one keep-alive connection: past
# the connection's budget (4 at once, one more a second) a refusal waits about a second before its answer, which
# still comes.
keys = [os.urandom(24).hex() for _ in range(5)]
ids = [f"unknown-key-test-{i}" for i in range(len(keys))]
for key, rid in zip(keys, ids):
    status, _, body = hub.request("POST", f"/webhooks/{key}", {}, headers={"X-Request-Id": rid})
    eq(status, 404, "an unknown key is 404")
    eq(body.get("error", {}).get("code") if isinstance(body, dict) else None, "unknown_key", "its JSON error")
conn = http.client.HTTPConnection("127.0.0.1", hub.port, timeout=30)
same = [os.urandom(24).hex() for _ in range(6)]
answers = []
for key in same:
    conn.request("POST", f"/webhooks/{key}", body=b"{}", headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    answers.append((r.status, json.loads(r.read()).get("error", {}).get("code")))
conn.close()
eq(answers, [(404, "unknown_key")] * len(same), "every refusal on one connection, past its budget too, is a 404 JSON")
refused = len(keys) + len(same)

# Other requests keep their lines: a real webhook that is not an order (422), a bad path and /healthz.
status, _, _ = hub.request("POST", f"/webhooks/{real_key}", {}, headers={"X-Request-Id": "real-partner-1"})
eq(status, 422, "a real key with an empty object is 422")
eq(hub.request("GET", "/healthz")[0], 200, "/healthz")

eq(metric(W, event="other", outcome="unknown_key", status="404") - before, refused, "metrics count every refusal")


def records():
    out = []
    for line in list(hub.lines):
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def summed():
    return sum(r.get("count", 0) for r in records() if r.get("msg") == "requests refused")


# The summary is written once a second: wait for it (bounded), not for a time.
deadline = time.time() + 15
while summed() < refused and time.time() < deadline:
    time.sleep(0.1)
recs = records()
summaries = [r for r in recs if r.get("msg") == "requests refused"]
eq(summed(), refused, "the summary lines count every unknown-key refusal")
check(all(r.get("route") == "/webhooks/{key}" and r.get("status") == 404 and r.get("outcome") == "unknown_key"
          and isinstance(r.get("period_ms"), int) and r.get("count", 0) > 0 for r in summaries),
      f"each summary names the route, status, outcome, period and a count: {summaries}")
eq(summaries[0].get("first_request_id") if summaries else None, ids[0], "the first summary names the first refusal's id")
check(len(summaries) < refused, f"fewer lines than refusals ({len(summaries)} for {refused})")
request_lines = [r for r in recs if r.get("msg") == "request"]
check(not any(r.get("outcome") == "unknown_key" for r in request_lines), "no per-request line for an unknown key")
check(not any(r.get("request_id") in ids for r in request_lines), "the refused requests have no line of their own")
check(any(r.get("request_id") == "real-partner-1" and r.get("status") == 422 for r in request_lines),
      "a real partner's refused webhook keeps its own line")
check(any(r.get("route") == "/healthz" for r in request_lines), "/healthz keeps its line")

# What is counted when the hub stops is written before it exits.
status, _, _ = hub.request("POST", f"/webhooks/{os.urandom(24).hex()}", {}, headers={"X-Request-Id": "at-the-end"})
eq(status, 404, "one more unknown key")
eq(hub.stop(), 0, "the hub stops cleanly")
eq(summed(), refused + 1, "the last refusals are summed up at stop")
text = hub.log()
check(all(k not in text for k in keys + same) and real_key not in text, "no webhook key in the log")
finish()

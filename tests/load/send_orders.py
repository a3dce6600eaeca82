#!/usr/bin/env python3
"""Sends order_created webhooks to a hub on 127.0.0.1 for the load benchmarks (standard library only).

  send_orders.py --url http://127.0.0.1:PORT/webhooks/KEY --count N [--rate R] [--connections C]
                 [--prefix P] [--body FILE]

Request i carries the body FILE (default: the interface's example order_created) with payload.id = P-i. With
--rate R, request i is sent at start + i/R seconds (a fixed schedule, like wrk2's constant throughput: a slow
answer does not slow the schedule down as long as a connection is free); without it, as fast as C keep-alive
connections allow. Prints one JSON object: sent, ok (HTTP 200), non200, errors, seconds, rate, how late the
schedule ran (max_late_ms), and the answers' latency: p50_ms, p99_ms, max_ms from sending each request to its answer,
and sched_p50_ms, sched_p99_ms from its due time on the schedule (with --rate; like wrk2, a request that waited for
a free connection counts its wait). Exits 1 when anything but 200 came back.
"""
import argparse
import http.client
import json
import math
import os
import sys
import threading
import time
import urllib.parse

EXAMPLE_ID = '"ORD-2024-000123"'


def percentile(seconds, q):
    """The q-quantile (nearest rank) of `seconds`, in milliseconds; None when empty."""
    if not seconds:
        return None
    ordered = sorted(seconds)
    i = min(len(ordered) - 1, max(0, math.ceil(len(ordered) * q) - 1))
    return round(ordered[i] * 1000, 2)


def order_template(path):
    """The body at `path` cut around the example's payload.id: (head, tail), so that head + json.dumps(id) + tail
    is the body with that id; exits when the id is not in it."""
    with open(path, encoding="utf-8") as f:
        template = f.read()
    if EXAMPLE_ID not in template:
        sys.exit(f"{path}: the example's payload.id {EXAMPLE_ID} is not in it")
    return template.split(EXAMPLE_ID, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--rate", type=float, default=0)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--prefix", default="S")
    ap.add_argument("--body", default=os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "examples",
                                                   "order-created.json"))
    args = ap.parse_args()
    url = urllib.parse.urlsplit(args.url)
    if url.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("send_orders.py sends to loopback addresses only")
    head, tail = order_template(args.body)

    lock = threading.Lock()
    state = {"next": 0, "ok": 0, "non200": 0, "errors": 0, "late": 0.0, "statuses": {}, "lat": [], "sched": []}
    start = time.monotonic() + 0.2

    def take():
        with lock:
            i = state["next"]
            if i >= args.count:
                return None
            state["next"] = i + 1
            return i

    def worker():
        conn = None
        while (i := take()) is not None:
            if args.rate > 0:
                due = start + i / args.rate
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                late = time.monotonic() - due
            else:
                late = 0.0
                due = None
            body = (head + json.dumps(f"{args.prefix}-{i}") + tail).encode()
            sent_at = time.monotonic()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
                conn.request("POST", url.path, body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                status = resp.status
            except (OSError, http.client.HTTPException):
                status = None
                if conn is not None:
                    conn.close()
                conn = None
            answered_at = time.monotonic()
            with lock:
                state["lat"].append(answered_at - sent_at)
                if due is not None:
                    state["sched"].append(answered_at - due)
                state["late"] = max(state["late"], late)
                if status == 200:
                    state["ok"] += 1
                elif status is None:
                    state["errors"] += 1
                else:
                    state["non200"] += 1
                    state["statuses"][status] = state["statuses"].get(status, 0) + 1
        if conn is not None:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(args.connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - start
    out = {"sent": state["next"], "ok": state["ok"], "non200": state["non200"], "errors": state["errors"],
           "statuses": state["statuses"], "seconds": round(seconds, 3), "rate": round(state["ok"] / seconds, 1),
           "max_late_ms": round(state["late"] * 1000, 1),
           "p50_ms": percentile(state["lat"], 0.50), "p99_ms": percentile(state["lat"], 0.99),
           "max_ms": percentile(state["lat"], 1.0),
           "sched_p50_ms": percentile(state["sched"], 0.50), "sched_p99_ms": percentile(state["sched"], 0.99)}
    print(json.dumps(out))
    sys.exit(0 if state["ok"] == args.count else 1)


if __name__ == "__main__":
    main()

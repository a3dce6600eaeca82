#!/usr/bin/env python3
"""How soon a stored order reaches an open merchant board (issue 11: "within one second"), for board-bench.sh
(standard library only).

  board_latency.py --url http://127.0.0.1:PORT --webhook /webhooks/KEY --email E --probes N [--interval S]
                   [--prefix P] [--body FILE] [--ingest-url http://127.0.0.1:OTHER]

The board user's password is read from the environment (BOARD_PASSWORD), never from the command line. It logs in
(POST /api/dashboard/login), opens the user's event stream (GET /api/dashboard/events, text/event-stream, on a
raw socket read by a thread of its own) and then sends N order_created webhooks one after the other, one every S
seconds (default 0.1), each with payload.id = P-i, to --ingest-url when given (another hub process on the same
database), else to --url. For each it notes when it was sent, when its 200 answer came
(with the hub's order id) and when the stream delivered the order's first event; an order whose event has not
come 10 s after the last answer counts as lost. Prints one JSON object: probes, answered (200), delivered, lost,
and in milliseconds the p50/p95/p99/max of answer -> event (the board's own delay: the order is committed when
the hub answers) and of send -> event (what a platform's clock would see). Exits 1 when an answer was not 200 or
an event was lost.
"""
import argparse
import http.client
import json
import os
import select
import socket
import sys
import threading
import time
import urllib.parse

from send_orders import order_template, percentile


def login(host, port, email, password):
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request("POST", "/api/dashboard/login", body=json.dumps({"email": email, "password": password}),
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    body = resp.read()
    if resp.status != 200:
        sys.exit(f"login: HTTP {resp.status} {body[:200]!r}")
    cookie = resp.getheader("Set-Cookie", "")
    conn.close()
    return cookie.split(";", 1)[0].split("=", 1)[1]


class Stream(threading.Thread):
    """Reads the SSE stream; notes the monotonic time each order id was first seen in an `order` event."""

    def __init__(self, host, port, session):
        super().__init__(daemon=True)
        self.sock = socket.create_connection((host, port), timeout=30)
        self.sock.sendall((f"GET /api/dashboard/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
                           f"Cookie: orderhub_session={session}\r\nAccept: text/event-stream\r\n\r\n").encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                sys.exit("the event stream closed before its header")
            buf += chunk
        head, _, self.buf = buf.partition(b"\r\n\r\n")
        status = int(head.split(b"\r\n", 1)[0].split()[1])
        if status != 200:
            sys.exit(f"the event stream: HTTP {status}")
        self.seen = {}
        self.lock = threading.Lock()
        self.stopping = False

    def run(self):
        fields = {}
        while not self.stopping:
            while b"\n" not in self.buf:
                if not select.select([self.sock], [], [], 0.2)[0]:
                    if self.stopping:
                        return
                    continue
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                self.buf += chunk
            now = time.monotonic()
            line, _, self.buf = self.buf.partition(b"\n")
            line = line.decode().rstrip("\r")
            if line == "":
                if fields.get("event") == "order":
                    order_id = json.loads(fields["data"])["order"]["id"]
                    with self.lock:
                        self.seen.setdefault(order_id, now)
                fields = {}
            elif not line.startswith(":") and ":" in line:
                k, v = line.split(":", 1)
                fields[k] = v.lstrip(" ")

    def when(self, order_id):
        with self.lock:
            return self.seen.get(order_id)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--webhook", required=True)
    ap.add_argument("--email", required=True)
    ap.add_argument("--probes", type=int, default=200)
    ap.add_argument("--interval", type=float, default=0.1)
    ap.add_argument("--prefix", default="BOARD")
    ap.add_argument("--ingest-url", default=None)
    ap.add_argument("--body", default=os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "examples",
                                                   "order-created.json"))
    args = ap.parse_args()
    url = urllib.parse.urlsplit(args.url)
    ingest = urllib.parse.urlsplit(args.ingest_url or args.url)
    if url.hostname not in ("127.0.0.1", "localhost", "::1") or ingest.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("board_latency.py sends to loopback addresses only")
    password = os.environ.get("BOARD_PASSWORD")
    if not password:
        sys.exit("set BOARD_PASSWORD to the board user's password")
    head, tail = order_template(args.body)

    stream = Stream(url.hostname, url.port, login(url.hostname, url.port, args.email, password))
    stream.start()
    conn = http.client.HTTPConnection(ingest.hostname, ingest.port, timeout=30)
    probes = []  # (sent, answered, order_id)
    bad = 0
    start = time.monotonic()
    for i in range(args.probes):
        wait = start + i * args.interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        body = (head + json.dumps(f"{args.prefix}-{i}") + tail).encode()
        sent = time.monotonic()
        conn.request("POST", args.webhook, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        answer = resp.read()
        answered = time.monotonic()
        if resp.status != 200:
            bad += 1
            continue
        probes.append((sent, answered, json.loads(answer)["order_id"]))
    conn.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(stream.when(p[2]) is None for p in probes):
        time.sleep(0.05)
    stream.stopping = True
    stream.join(timeout=5)
    after_answer, after_send = [], []
    for sent, answered, order_id in probes:
        t = stream.when(order_id)
        if t is not None:
            after_answer.append(max(0.0, t - answered))
            after_send.append(t - sent)
    out = {"probes": args.probes, "answered": len(probes), "delivered": len(after_answer),
           "lost": len(probes) - len(after_answer),
           "answer_to_event_p50_ms": percentile(after_answer, 0.50),
           "answer_to_event_p95_ms": percentile(after_answer, 0.95),
           "answer_to_event_p99_ms": percentile(after_answer, 0.99),
           "answer_to_event_max_ms": percentile(after_answer, 1.0),
           "send_to_event_p50_ms": percentile(after_send, 0.50),
           "send_to_event_p99_ms": percentile(after_send, 0.99),
           "send_to_event_max_ms": percentile(after_send, 1.0)}
    print(json.dumps(out))
    sys.exit(0 if bad == 0 and out["lost"] == 0 else 1)


if __name__ == "__main__":
    main()

"""The connection bound (--max-connections, product.md section 8): past it each new connection gets an
immediate 503 JSON error with Retry-After and is closed, the process keeps running (a GCC 12 coroutine bug
once crashed it on the first refusal), and freed slots are usable again. Both binaries share the listener."""
import time

from harness import HUB, POS, Service, check, create_database, eq, finish

LIMIT = 4
for binary, prefix, name in ((HUB, "ORDERHUB", "orderhub"), (POS, "ORDERPOS", "orderpos")):
    url = create_database()
    env = {f"{prefix}_DATABASE_URL": url, "ORDERHUB_SECRET_KEY": "ab" * 32}
    svc = Service(binary, "--max-connections", str(LIMIT), env=env)
    held = [svc.raw_socket() for _ in range(LIMIT)]
    for s in held:  # each held connection is a session in progress (a request under way)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    time.sleep(0.3)
    answers = []
    for _ in range(25):
        try:
            answers.append(svc.request("GET", "/healthz", timeout=10))
        except OSError as e:  # a refusal must be an answer, not a reset
            answers.append((None, {}, str(e)))
    eq([a[0] for a in answers], [503] * 25, f"{name}: every connection past the bound gets 503")
    # Each binary renders errors in its own interface's shape: the hub's {"error": {"code"}}, the POS's {"code"}.
    def code(body):
        return body.get("error", {}).get("code") if binary == HUB else body.get("code")
    check(all(isinstance(a[2], dict) and code(a[2]) == "too_many_connections" for a in answers),
          f"{name}: 503 body names the limit: {answers[0][2]}")
    check(all(a[1].get("retry-after") == "1" for a in answers), f"{name}: 503 carries Retry-After")
    # Exactly one Retry-After: the error renderer's own 503 hint must not stand beside the server's.
    # The refusal is written at once, before any request is read: send nothing, so that the close is not a reset.
    with svc.raw_socket() as s:
        raw = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            raw += chunk
    head = raw.split(b"\r\n\r\n", 1)[0].lower()
    eq(head.count(b"\r\nretry-after:"), 1, f"{name}: one Retry-After header in {head!r}")
    check(svc.proc.poll() is None, f"{name} still running after refusing connections")
    for s in held:
        s.close()
    deadline = time.time() + 5
    status = None
    while time.time() < deadline and status != 200:
        status = svc.request("GET", "/healthz")[0]
        time.sleep(0.05)
    eq(status, 200, f"{name}: freed slots take new connections")
    eq(svc.stop(), 0, f"{name} exits 0 on SIGTERM")

finish()

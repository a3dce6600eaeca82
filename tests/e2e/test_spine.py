"""Both binaries start, answer /healthz and /readyz, refuse oversized bodies and slow clients with JSON errors,
print --help, and exit 0 on SIGTERM."""
import signal
import time

from harness import HUB, POS, Service, check, create_database, eq, finish, run

for binary, prefix, name in ((HUB, "ORDERHUB", "orderhub"), (POS, "ORDERPOS", "orderpos")):
    url = create_database()
    env = {f"{prefix}_DATABASE_URL": url, "ORDERHUB_SECRET_KEY": "ab" * 32}

    # --help everywhere, without secrets; a missing database URL is one line, exit 1.
    h = run(binary, "--help")
    eq(h.returncode, 0, f"{name} --help exit")
    check("serve" in h.stdout and "migrate" in h.stdout, f"{name} --help lists commands")
    h = run(binary, "serve", "--help", env={f"{prefix}_DATABASE_URL": "postgresql://u:SECRETPW@127.0.0.1/x"})
    eq(h.returncode, 0, f"{name} serve --help exit")
    check("SECRETPW" not in h.stdout + h.stderr, f"{name} serve --help hides the database URL's value")
    r = run(binary, "serve", env={f"{prefix}_DATABASE_URL": ""})
    eq(r.returncode, 1, f"{name} serve without a database URL exits 1")
    eq(len(r.stderr.strip().splitlines()), 1, f"{name} serve without a database URL prints one line")
    check(f"{prefix}_DATABASE_URL" in r.stderr, f"{name}: the message names the variable")
    eq(run(binary, "nonsense").returncode, 2, f"{name} unknown command exits 2")
    eq(run(binary, "serve", "--bogus", env=env).returncode, 2, f"{name} unknown option exits 2")

    # Not migrated yet: alive but not ready.
    svc = Service(binary, env=env)
    status, _, body = svc.request("GET", "/healthz")
    eq(status, 200, f"{name} /healthz")
    eq(body, {"status": "ok"}, f"{name} /healthz body")
    status, headers, body = svc.request("GET", "/readyz")
    eq(status, 503, f"{name} /readyz before migrate")
    eq(headers.get("content-type"), "application/json", f"{name} /readyz 503 is JSON")
    eq(svc.stop(), 0, f"{name} exit code on SIGTERM")

    m = run(binary, "migrate", env=env)
    eq(m.returncode, 0, f"{name} migrate: {m.stderr}")
    m2 = run(binary, "migrate", "--json", env=env)
    eq(m2.returncode, 0, f"{name} second migrate")
    check('"applied":[]' in m2.stdout, f"{name} second migrate applies nothing: {m2.stdout}")

    svc = Service(binary, "--max-body-bytes", "4096", "--request-timeout", "700", env=env)
    status, _, body = svc.request("GET", "/readyz")
    eq(status, 200, f"{name} /readyz after migrate")
    eq(body, {"status": "ready"}, f"{name} /readyz body")
    status, _, body = svc.request("GET", "/no/such/path")
    eq(status, 404, f"{name} unknown path")
    check(isinstance(body, dict), f"{name} 404 is JSON")
    status, headers, _ = svc.request("POST", "/healthz", body=b"{}")
    eq(status, 405, f"{name} POST /healthz")
    eq(headers.get("allow"), "GET", f"{name} 405 names the allowed method")

    # Oversized body: refused from the Content-Length alone, with a JSON error.
    status, headers, body = svc.request("POST", "/webhooks/x" if name == "orderhub" else "/api/orders",
                                        body=b"x" * 5000)
    eq(status, 413, f"{name} oversized body")
    check(isinstance(body, dict), f"{name} 413 is JSON: {body!r}")
    eq(headers.get("connection"), "close", f"{name} 413 closes the connection")

    # Oversized headers.
    status, _, body = svc.request("GET", "/healthz", headers={"X-Big": "a" * 20000})
    eq(status, 431, f"{name} oversized headers")

    # A slow client that never finishes its request is answered 408 and cut off.
    s = svc.raw_socket()
    s.sendall(b"POST /api/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    started = time.time()
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    check(data.startswith(b"HTTP/1.1 408"), f"{name} slow client gets 408: {data[:60]!r}")
    check(data.rstrip().endswith(b"}"), f"{name} 408 has a JSON body")
    check(time.time() - started < 10, f"{name} slow client is cut off")

    # Garbage instead of HTTP.
    s = svc.raw_socket()
    s.sendall(b"\x00\x01garbage\r\n\r\n")
    data = s.recv(4096)
    s.close()
    check(data.startswith(b"HTTP/1.1 400"), f"{name} garbage gets 400: {data[:40]!r}")

    # Still healthy after all that; then a clean stop.
    eq(svc.request("GET", "/healthz")[0], 200, f"{name} healthy after refusals")
    eq(svc.stop(signal.SIGINT), 0, f"{name} exit code on SIGINT")
    check('"msg":"stopped"' in svc.log(), f"{name} logs its stop")

finish()

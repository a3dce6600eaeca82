"""The HTTPS listener (issue 7): TLS 1.2+ only, certificate files re-read on SIGHUP without dropping open
connections (a broken file keeps the old pair in use), and slow clients cut off by the request time-out whether
they trickle their headers or their body."""
import hashlib
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)  # TLS 1.0/1.1 clients are the point here

from harness import HUB, SOURCE, Service, check, create_database, eq, finish, hub_env, run

certs = tempfile.mkdtemp(prefix="e2e-https-")
subprocess.run([os.path.join(SOURCE, "deploy", "make-cert.sh"), certs], check=True, capture_output=True)
live = os.path.join(certs, "live")
os.makedirs(live)


def install(name):
    # Written next to the live files, then renamed over them: a reload never sees half a file.
    for ext in ("pem", "key"):
        shutil.copy(os.path.join(certs, f"{name}.{ext}"), os.path.join(live, f"new.{ext}"))
        os.replace(os.path.join(live, f"new.{ext}"), os.path.join(live, f"cert.{ext}"))


def fingerprint_of_file(name):
    with open(os.path.join(certs, f"{name}.pem")) as f:
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(f.read())).hexdigest()


def client_context(max_version=None):
    ctx = ssl.create_default_context(cafile=os.path.join(certs, "ca.pem"))
    ctx.check_hostname = False  # `wrong.pem` is for another host name; the chain is what is checked here
    if max_version:
        # Let this client offer old protocols, so a refusal can only come from the server.
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = max_version
    return ctx


def connect(port, ctx=None):
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return (ctx or client_context()).wrap_socket(raw, server_hostname="localhost")


def get(tls, path="/healthz"):
    tls.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += tls.recv(4096)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
    while len(body) < length:
        body += tls.recv(4096)
    return int(head.split(b" ")[1])


install("server")
url = create_database()
env = hub_env(url, ORDERHUB_TLS_CERT=os.path.join(live, "cert.pem"), ORDERHUB_TLS_KEY=os.path.join(live, "cert.key"))
eq(run(HUB, "migrate", env=env).returncode, 0, "migrate")
svc = Service(HUB, "--role", "api", "--request-timeout", "1500", env=env)

kept = connect(svc.port)
eq(get(kept), 200, "HTTPS /healthz")
check(kept.version() in ("TLSv1.2", "TLSv1.3"), f"negotiated {kept.version()}")
eq(hashlib.sha256(kept.getpeercert(binary_form=True)).hexdigest(), fingerprint_of_file("server"),
   "the configured certificate is served")
for old in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
    try:
        connect(svc.port, client_context(max_version=old)).close()
        check(False, f"a {old.name} client was accepted")
    except (ssl.SSLError, ConnectionError):
        check(True, f"{old.name} refused")
plain = socket.create_connection(("127.0.0.1", svc.port), timeout=10)
plain.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
try:
    answer = plain.recv(100)
except OSError:
    answer = b""
check(not answer.startswith(b"HTTP/"), f"plain HTTP on the TLS port gets no HTTP answer: {answer[:40]!r}")
plain.close()

# SIGHUP re-reads the files: new connections get the new certificate, the open one keeps working.
install("wrong")
svc.proc.send_signal(signal.SIGHUP)
deadline = time.time() + 10
served = None
while time.time() < deadline:
    c = connect(svc.port)
    served = hashlib.sha256(c.getpeercert(binary_form=True)).hexdigest()
    c.close()
    if served == fingerprint_of_file("wrong"):
        break
    time.sleep(0.1)
eq(served, fingerprint_of_file("wrong"), "after SIGHUP new connections get the new certificate")
eq(get(kept), 200, "a connection opened before the reload still answers")

# A broken certificate file: the reload is refused, the pair in use stays, the process keeps serving.
with open(os.path.join(live, "cert.pem"), "w") as f:
    f.write("-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n")
svc.proc.send_signal(signal.SIGHUP)
time.sleep(1)
c = connect(svc.port)
eq(hashlib.sha256(c.getpeercert(binary_form=True)).hexdigest(), fingerprint_of_file("wrong"),
   "a broken file on SIGHUP leaves the working certificate in use")
eq(get(c), 200, "and the listener keeps answering")
c.close()
kept.close()

# Slow clients: headers trickled one byte at a time, or a body that never completes, are cut off with 408.
for what, first, trickle in (("headers", b"GET /healthz HTTP/1.1\r\nHost: x\r\n", b"X"),
                             ("body", b"POST /webhooks/k HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
                              b" ")):
    c = connect(svc.port)
    c.sendall(first)
    started = time.time()
    data = b""
    c.settimeout(0.3)
    while time.time() - started < 10:
        try:
            chunk = c.recv(4096)
            if not chunk:
                break
            data += chunk
        except socket.timeout:
            try:
                c.sendall(trickle)  # keeps the connection busy: only the whole-request time-out can end it
            except OSError:
                break
        except OSError:
            break
    took = time.time() - started
    c.close()
    check(data.startswith(b"HTTP/1.1 408"), f"slow {what}: 408 ({data[:40]!r})")
    check(data.rstrip().endswith(b"}"), f"slow {what}: the 408 has a JSON body")
    check(took < 5, f"slow {what}: cut off after {took:.1f} s (time-out 1.5 s)")

eq(svc.stop(), 0, "exit 0 on SIGTERM")
check("tls certificates reloaded" in "\n".join(svc.lines), "the reload is logged")
check("tls certificates not reloaded" in "\n".join(svc.lines), "the refused reload is logged")
finish()

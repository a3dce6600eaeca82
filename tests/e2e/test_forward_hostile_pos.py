"""A POS whose answers are not clean text: excerpts cut inside a UTF-8 character, NUL bytes, bytes that are not
UTF-8 at all, an order id with a NUL in it. Each answer must still be recorded (attempt row, job state, status
log), because an answer that cannot be recorded leaves its claim to expire and the order to be sent again, and
again, for ever. The POS here is a stub on a loopback port that answers by partner_reference."""
import http.server
import json
import threading
import time

from harness import HUB, Service, check, create_database, eq, finish, hub_env, psql, run

PREFIX = b'{"success":false,"message":"'
# Two-byte characters from an odd offset: the hub's excerpts (300 bytes of a reason, 500 of a response) both fall
# inside a character.
PAD = b"x" * (1 - len(PREFIX) % 2)
ARABIC = "\u0627\u0644\u0645\u0646\u062a\u062c \u063a\u064a\u0631 \u0645\u062a\u0648\u0641\u0631 ".encode()

ANSWERS = {
    # reference suffix: (HTTP status, body bytes)
    "SPLIT": (422, PREFIX + PAD + "é".encode() * 400 + b'"}'),
    "ARABIC": (422, PREFIX + PAD + ARABIC * 40 + b'"}'),
    "NUL": (422, b'{"success":false,"message":"bad\x00product \xff\xfe"}'),
    "LATIN1": (503, b"Service indisponible: r\xe9essayez plus tard"),
    "NULID": (201, b'{"success":true,"message":"Order created","order_id":"A\\u0000B"}'),
    "CLEAN": (201, b'{"success":true,"message":"Order created","order_id":"POS-CLEAN"}'),
}


class StubPos(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        ref = json.loads(body).get("partner_reference", "")
        status, answer = ANSWERS.get(ref.rsplit("-", 1)[-1], (500, b"unknown reference"))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


stub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StubPos)
threading.Thread(target=stub.serve_forever, daemon=True).start()

hub_url = create_database()
henv = hub_env(hub_url)
eq(run(HUB, "migrate", env=henv).returncode, 0, "hub migrate")
eq(run(HUB, "branch", "create", "--id", "DEMO-1", "--brand", "DEMO", env=henv).returncode, 0, "branch create")
partner = json.loads(run(HUB, "partner", "create", "--name", "Platform", "--label", "plat", "--json",
                         env=henv).stdout)
webhook = "/webhooks/" + partner["webhook_url"].rsplit("/webhooks/", 1)[1]
r = run(HUB, "pos", "set", "--brand", "DEMO", "--base-url", f"http://127.0.0.1:{stub.server_port}", "--token", "-",
        env=henv, input="stub-token\n")
eq(r.returncode, 0, f"pos set: {r.stderr}")


def order(order_id):
    return {"event": "order_created", "event_time": "2024-05-01 18:00:00", "branch_id": "DEMO-1",
            "payload": {"id": order_id, "payment_method": "card", "order_type": "DELIVERY", "note": "",
                        "subtotal": 24, "tax": 3.6, "discount": 0, "total": 27.6, "is_schedule": 0,
                        "schedule_date": None, "car_data": None, "customer": None,
                        "items": [{"id": "P-BURGER", "quantity": 1, "price": 24, "options": []}]}}


hub = Service(HUB, env=henv)
ids = {}
for suffix in ANSWERS:
    status, _, body = hub.request("POST", webhook, order(f"O-{suffix}"))
    eq(status, 200, f"stored O-{suffix}")
    ids[suffix] = body["order_id"]


def attempts(hub_id):
    return int(psql(hub_url, f"SELECT count(*) FROM hub.pos_delivery_attempts WHERE order_id = '{hub_id}'"))


expected = {"SPLIT": "rejected", "ARABIC": "rejected", "NUL": "rejected", "LATIN1": "pending",
            "NULID": "delivered", "CLEAN": "delivered"}
deadline = time.time() + 30
while time.time() < deadline:
    states = {s: psql(hub_url, f"SELECT state FROM hub.forward_jobs WHERE order_id = '{i}'") for s, i in ids.items()}
    if states == expected and all(attempts(i) >= 1 for i in ids.values()):
        break
    time.sleep(0.2)
for suffix, state in expected.items():
    eq(states[suffix], state, f"O-{suffix}: the POS's answer is recorded")
    check(attempts(ids[suffix]) >= 1, f"O-{suffix}: its attempt is recorded")

# What was recorded is text: valid UTF-8 (PostgreSQL accepted it), no control characters, cut on a character.
for suffix in ("SPLIT", "ARABIC", "NUL"):
    row = psql(hub_url, f"SELECT octet_length(response_excerpt) || '|' || octet_length(error) || '|' || "
                        f"(response_excerpt ~ '[[:cntrl:]]') || '|' || (error ~ '[[:cntrl:]]') "
                        f"FROM hub.pos_delivery_attempts WHERE order_id = '{ids[suffix]}' ORDER BY id LIMIT 1")
    excerpt_bytes, error_bytes, excerpt_cntrl, error_cntrl = row.split("|")
    check(0 < int(excerpt_bytes) <= 500, f"O-{suffix}: the response excerpt is at most 500 bytes ({row})")
    check(0 < int(error_bytes) <= 400, f"O-{suffix}: the error is a bounded excerpt ({row})")
    eq((excerpt_cntrl, error_cntrl), ("false", "false"), f"O-{suffix}: no control characters")
split = psql(hub_url, f"SELECT response_excerpt FROM hub.pos_delivery_attempts WHERE order_id = '{ids['SPLIT']}'")
check(split.endswith("é") and "\ufffd" not in split, "a cut inside a character drops that character")
nul = psql(hub_url, f"SELECT response_excerpt FROM hub.pos_delivery_attempts WHERE order_id = '{ids['NUL']}'")
check("bad product" in nul and "\ufffd" in nul, f"NUL becomes a space, bytes that are not UTF-8 U+FFFD: {nul!r}")
latin = psql(hub_url, f"SELECT error FROM hub.pos_delivery_attempts WHERE order_id = '{ids['LATIN1']}'")
check("Service indisponible: r\ufffdessayez" in latin, f"a Latin-1 answer is kept readable: {latin!r}")
eq(psql(hub_url, f"SELECT pos_order_id FROM hub.forward_jobs WHERE order_id = '{ids['NULID']}'"), "A B",
   "a control character in the POS order id becomes a space")
eq(psql(hub_url, f"SELECT string_agg(status, ',' ORDER BY id) FROM hub.order_status_log "
                 f"WHERE order_id = '{ids['ARABIC']}'"), "received,pos_rejected", "the rejection is in the status log")

eq(hub.stop(), 0, "hub exits 0")
check("could not record a delivery" not in hub.log(), "every answer was recorded at the first try")
stub.shutdown()
finish()

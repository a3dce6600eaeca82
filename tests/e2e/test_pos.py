"""The real orderpos binary answers every row of the product contract's answer table (product.md section 7), and
its admin commands load menus idempotently and atomically, add users and list the orders received."""
import json
import os
import tempfile
import threading

from harness import POS, Service, check, create_database, eq, finish, psql, run

url = create_database()
env = {"ORDERPOS_DATABASE_URL": url}
tmp = tempfile.mkdtemp(prefix="pos_e2e_")


def write(name, content):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(content if isinstance(content, str) else json.dumps(content))
    return path


def snapshot():
    """Every menu row with its xmin: equal snapshots mean that nothing was written."""
    rows = []
    for table in ("pos.brands", "pos.branches", "pos.products", "pos.product_branches", "pos.modifiers"):
        rows.append(psql(url, "SELECT string_agg(t.xmin::text || ' ' || t::text, E'\\n' ORDER BY t::text) "
                              f"FROM {table} t"))
    return "\n".join(rows)


MENU = {
    "brands": [{"id": "BRAND-A", "name": "Brand A"}, {"id": "BRAND-B", "name": "Brand B"}],
    "branches": [{"id": "BR-1", "brand_id": "BRAND-A", "name": "Olaya"},
                 {"id": "BR-2", "brand_id": "BRAND-A", "name": "Malaz"},
                 {"id": "BR-B", "brand_id": "BRAND-B", "name": "Elsewhere"}],
    "products": [{"id": "P-1", "brand_id": "BRAND-A", "name": "Burger", "price": 20.0, "branches": ["BR-1", "BR-2"]},
                 {"id": "P-2", "brand_id": "BRAND-A", "name": "Fries", "price": 7.5, "branches": ["BR-2"]},
                 {"id": "P-B", "brand_id": "BRAND-B", "name": "Other", "price": 1, "branches": ["BR-B"]}],
    "modifiers": [{"id": "M-1", "brand_id": "BRAND-A", "name": "Cheese", "price": 2.5, "extra": "ignored"},
                  {"id": "M-2", "brand_id": "BRAND-A", "name": "Bacon", "price": 4}],
}

# --- admin commands --------------------------------------------------------------------------------------------
for words in (["user", "add"], ["menu", "load"], ["orders", "list"], ["migrate"], ["serve"]):
    h = run(POS, *words, "--help")
    eq(h.returncode, 0, f"orderpos {' '.join(words)} --help exit")
    check("--json" in h.stdout, f"orderpos {' '.join(words)} --help lists --json")

eq(run(POS, "migrate", env=env).returncode, 0, "migrate")
menu_path = write("menu.json", MENU)
r = run(POS, "menu", "load", menu_path, "--json", env=env)
eq(r.returncode, 0, f"menu load: {r.stderr}")
first = json.loads(r.stdout)
eq(first["changed"], True, "first load changes the database")
eq(first["products"], {"inserted": 3, "updated": 0, "deleted": 0}, "first load inserts the products")
before = snapshot()
r = run(POS, "menu", "load", menu_path, "--json", env=env)
eq(r.returncode, 0, "second menu load")
eq(json.loads(r.stdout)["changed"], False, "second load reports no change")
eq(snapshot(), before, "second load writes no row")
r = run(POS, "menu", "load", menu_path, env=env)
check("nothing changed" in r.stdout, f"text output of an unchanged load: {r.stdout!r}")

# A malformed file: exit 1, the JSON path of each problem, nothing changed (even the valid changes in it).
bad = json.loads(json.dumps(MENU))
bad["products"][0]["price"] = 99  # a valid change that must not be applied
del bad["products"][1]["price"]
bad["modifiers"][1]["brand_id"] = "BRAND-Z"
bad["products"][2]["branches"] = ["BR-1"]
r = run(POS, "menu", "load", write("bad.json", bad), env=env)
eq(r.returncode, 1, "malformed menu exits 1")
for path in ("/products/1/price", "/modifiers/1/brand_id", "/products/2/branches/0"):
    check(path in r.stderr, f"malformed menu names {path}: {r.stderr!r}")
check("nothing was loaded" in r.stderr, "malformed menu says nothing was loaded")
r = run(POS, "menu", "load", write("bad.json", bad), "--json", env=env)
eq(r.returncode, 1, "malformed menu --json exits 1")
eq(json.loads(r.stdout)["loaded"], False, "malformed menu --json says not loaded")
check(any("/products/1/price" in e for e in json.loads(r.stdout)["errors"]), "--json lists the problems")
r = run(POS, "menu", "load", write("syntax.json", '{"brands": ['), env=env)
eq(r.returncode, 1, "menu with a JSON syntax error exits 1")
check("invalid JSON" in r.stderr, f"syntax error message: {r.stderr!r}")
conflict = {"brands": [{"id": "BRAND-C"}], "branches": [{"id": "BR-1"}]}
r = run(POS, "menu", "load", write("conflict.json", conflict), env=env)
eq(r.returncode, 1, "a branch of another brand exits 1")
check("/branches/0/brand_id" in r.stderr, f"conflict names its path: {r.stderr!r}")
eq(run(POS, "menu", "load", os.path.join(tmp, "missing.json"), env=env).returncode, 1, "missing file exits 1")
eq(run(POS, "menu", "load", env=env).returncode, 2, "menu load without a file exits 2")
eq(snapshot(), before, "refused loads changed nothing")

# Users: password from stdin, never echoed; duplicates and unknown brands refused.
r = run(POS, "user", "add", "--email", "ops@a.example", "--password", "-", "--brand", "BRAND-A", "--json",
        env=env, input="pw-of-brand-a\n")
eq(r.returncode, 0, f"user add: {r.stderr}")
check("pw-of-brand-a" not in r.stdout + r.stderr, "user add never echoes the password")
eq(json.loads(r.stdout)["brand_id"], "BRAND-A", "user add --json")
check("pw-of-brand-a" not in psql(url, "SELECT password_hash FROM pos.users"), "the password is stored hashed")
check(psql(url, "SELECT password_hash FROM pos.users").startswith("pbkdf2_sha256$600000$"), "PBKDF2, 600000 rounds")
eq(run(POS, "user", "add", "--email", "ops@b.example", "--password", "pw-of-brand-b", "--brand", "BRAND-B",
       env=env).returncode, 0, "user add for brand B")
eq(run(POS, "user", "add", "--email", "victim@a.example", "--password", "victim-pass", "--brand", "BRAND-A",
       env=env).returncode, 0, "user add for the throttling check")
r = run(POS, "user", "add", "--email", "OPS@a.example", "--password", "another-pw", "--brand", "BRAND-A", env=env)
eq(r.returncode, 1, "duplicate email (any case) exits 1")
eq(run(POS, "user", "add", "--email", "x@a.example", "--password", "12345678", "--brand", "NOPE",
       env=env).returncode, 1, "unknown brand exits 1")
eq(run(POS, "user", "add", "--email", "x@a.example", "--password", "short", "--brand", "BRAND-A",
       env=env).returncode, 1, "short password exits 1")
eq(run(POS, "user", "add", "--email", "x@a.example", env=env).returncode, 2, "missing options exit 2")

# --- HTTP -------------------------------------------------------------------------------------------------------
svc = Service(POS, env=env)


def login(email, password):
    return svc.request("POST", "/api/login", {"email": email, "password": password})


status, headers, body = login("ops@a.example", "pw-of-brand-a")
eq(status, 200, "login with right credentials")
eq(sorted(body), ["access_token"], "login answers only access_token")
token_a = body["access_token"]
check(len(token_a) >= 43, "the token carries at least 256 bits")
eq(headers.get("content-type"), "application/json", "login is JSON")
eq(login("OPS@A.example", "pw-of-brand-a")[0], 200, "emails are case-insensitive")
token_b = login("ops@b.example", "pw-of-brand-b")[2]["access_token"]
stored = psql(url, "SELECT string_agg(token_hash, ',') FROM pos.tokens")
check(token_a not in stored, "tokens are stored hashed")

WRONG = {"status": "These credentials do not match our records."}
status, _, body = login("ops@a.example", "wrong-password")
eq((status, body), (401, WRONG), "wrong password: the documented body")
status, _, body = login("nobody@a.example", "wrong-password")
eq((status, body), (401, WRONG), "unknown email: the same body")
status, _, body = svc.request("POST", "/api/login", {"email": "ops@a.example"})
eq(status, 422, "login without password")
check("password" in body.get("errors", {}), f"login 422 names the field: {body}")
eq(svc.request("POST", "/api/login", "{not json")[0], 400, "login with malformed JSON")

# Throttling: after five failures the right password is refused too, with the same answer.
for _ in range(5):
    login("victim@a.example", "wrong-password")
status, _, body = login("victim@a.example", "victim-pass")
eq((status, body), (401, WRONG), "throttled email: the right password gets the same 401")
eq(psql(url, "SELECT failure_count FROM pos.login_failures WHERE email = 'victim@a.example'"), "5",
   "failures are recorded per email")
eq(login("ops@a.example", "pw-of-brand-a")[0], 200, "other emails are not throttled")

ORDER = {
    "branch_id": "BR-1", "brand_id": "BRAND-A", "partner_reference": "talabat:1001", "note": "No onions",
    "total": 57.5, "subtotal": 50, "tax": 7.5, "status": "ACCEPTED",
    "customer": {"name": "Sara", "phone": "+966500000000"},
    "products": [{"id": "P-1", "quantity": 2, "total": 45, "note": None,
                  "modifiers": [{"id": "M-1", "quantity": 1, "total": 2.5, "note": "extra"},
                                {"id": "M-2", "quantity": 2, "total": 8}]},
                 {"id": "P-1", "quantity": 1, "total": 5}],
}


def order(body, token=None, headers=None):
    h = dict(headers or {})
    if token:
        h["Authorization"] = f"Bearer {token}"
    return svc.request("POST", "/api/orders", body, headers=h)


UNAUTH = {"success": False, "message": "Unauthenticated."}
eq(order(ORDER)[::2], (401, UNAUTH), "order without a token")
eq(order(ORDER, token="not-a-token")[::2], (401, UNAUTH), "order with an unknown token")
eq(order(ORDER, headers={"Authorization": f"Basic {token_a}"})[::2], (401, UNAUTH), "order with another scheme")
eq(order("{not json")[::2], (401, UNAUTH), "no token: 401 before the body is read")

status, _, body = order(ORDER, token=token_b)
eq(status, 403, "token of another brand")
eq(body.get("success"), False, "403 has success false")

bad = json.loads(json.dumps(ORDER))
del bad["branch_id"]
bad["total"] = "57.5"
bad["products"][0]["quantity"] = "2"
bad["products"][0]["modifiers"][1]["id"] = 5
bad["products"][1]["modifiers"] = [{"quantity": 1, "total": 1}]
status, _, body = order(bad, token=token_a)
eq(status, 422, "missing and mistyped fields")
eq(body.get("success"), False, "422 has success false")
check(isinstance(body.get("message"), str) and body["message"], "422 has a summary message")
eq(sorted(body.get("errors", {})), ["branch_id", "products.0.modifiers.1.id", "products.0.quantity",
                                    "products.1.modifiers.0.id", "total"], "422 keys are dotted paths")
check(all(isinstance(v, list) and v and all(isinstance(s, str) for s in v) for v in body["errors"].values()),
      "422 errors are lists of messages")

menu_bad = json.loads(json.dumps(ORDER))
menu_bad["products"] = [
    {"id": "P-9", "quantity": 1, "total": 1},                                                    # unknown product
    {"id": "P-1", "quantity": 1, "total": 1, "modifiers": [{"id": "M-1", "quantity": 1, "total": 1},
                                                           {"id": "M-9", "quantity": 1, "total": 1}]},
    {"id": "P-2", "quantity": 1, "total": 1},                                                    # not in BR-1
]
status, _, body = order(menu_bad, token=token_a)
eq(status, 422, "menu problems")
errors = body.get("errors", {})
eq(sorted(errors), ["products.0.id", "products.1.modifiers.1.id", "products.2.id"], "every menu problem at once")
check(any("P-2" in m and "BR-1" in m for m in errors.get("products.2.id", [])),
      f"the unavailable product is named: {errors.get('products.2.id')}")
mixed = json.loads(json.dumps(menu_bad))
mixed["tax"] = -1
status, _, body = order(mixed, token=token_a)
eq(sorted(body.get("errors", {})), ["products.0.id", "products.1.modifiers.1.id", "products.2.id", "tax"],
   "request and menu problems in one answer")
unknown_brand = dict(ORDER, brand_id="BRAND-Z")
status, _, body = order(unknown_brand, token=token_a)
eq((status, sorted(body.get("errors", {}))), (422, ["brand_id"]), "unknown brand is a 422 on brand_id")
status, _, body = order(dict(ORDER, branch_id="BR-B"), token=token_a)
eq((status, sorted(body.get("errors", {}))), (422, ["branch_id"]), "a branch of another brand is a 422")
eq(psql(url, "SELECT count(*) FROM pos.orders"), "0", "refused orders store nothing")

status, headers, body = order(ORDER, token=token_a)
eq(status, 201, "a valid order")
eq(sorted(body), ["message", "order_id", "success"], "201 body keys")
eq((body.get("success"), body.get("message")), (True, "Order created"), "201 body")
order_id = body.get("order_id")
check(isinstance(order_id, str) and order_id, "201 has an order id")
status, _, body = order(ORDER, token=token_a)
eq((status, body.get("success"), body.get("order_id")), (200, True, order_id), "repeat: 200 with the same order_id")
eq(psql(url, "SELECT count(*) FROM pos.orders"), "1", "repeat stores no second order")
eq(psql(url, f"SELECT status FROM pos.orders WHERE id = '{order_id}'"), "ACCEPTED", "status from the request")
eq(psql(url, f"SELECT raw_request->>'partner_reference' FROM pos.orders WHERE id = '{order_id}'"), "talabat:1001",
   "the raw request is kept")

# 20 concurrent identical requests: one order, one 201, every answer with its id.
answers = []
lock = threading.Lock()
CONCURRENT = dict(ORDER, partner_reference="talabat:concurrent", status=None)


def post():
    a = order(CONCURRENT, token=token_a)
    with lock:
        answers.append(a)


threads = [threading.Thread(target=post) for _ in range(20)]
for t in threads:
    t.start()
for t in threads:
    t.join()
eq(sorted(a[0] for a in answers), [200] * 19 + [201], "20 concurrent identical orders: one 201, nineteen 200")
eq(len({a[2].get("order_id") for a in answers}), 1, "20 concurrent identical orders: one order id")
eq(psql(url, "SELECT count(*) FROM pos.orders WHERE partner_reference = 'talabat:concurrent'"), "1",
   "20 concurrent identical orders: one order stored")
eq(psql(url, "SELECT status FROM pos.orders WHERE partner_reference = 'talabat:concurrent'"), "PENDING",
   "status defaults to PENDING")

# Method, path and body errors: all JSON.
status, headers, body = svc.request("GET", "/api/orders")
eq(status, 405, "GET /api/orders")
eq(headers.get("allow"), "POST", "405 names POST")
check(isinstance(body, dict) and body.get("success") is False, "405 is JSON")
eq(svc.request("PUT", "/api/login", b"{}")[0], 405, "PUT /api/login")
status, _, body = svc.request("POST", "/api/nothing", b"{}")
eq(status, 404, "unknown path")
check(isinstance(body, dict), "404 is JSON")
status, headers, body = order("{\"branch_id\": ", token=token_a)
eq(status, 400, "malformed JSON")
check(isinstance(body, dict) and body.get("success") is False, "400 is JSON")
eq(order("[]", token=token_a)[0], 422, "a JSON array is a 422")
eq(order('{"brand_id": "BRAND-A", "note": "a\\u0000b"}', token=token_a)[0], 400, "a NUL character is refused")

eq(svc.stop(), 0, "orderpos stops on SIGTERM")
log = svc.log()
for secret in (token_a, token_b, "pw-of-brand-a", "victim-pass", "+966500000000"):
    check(secret not in log, "the log holds no token, password or phone")

# orders list shows what was received.
r = run(POS, "orders", "list", "--json", env=env)
eq(r.returncode, 0, f"orders list --json: {r.stderr}")
listed = json.loads(r.stdout)["orders"]
eq(len(listed), 2, "orders list shows both orders")
first_order = next(o for o in listed if o["id"] == order_id)
eq((first_order["brand_id"], first_order["branch_id"], first_order["partner_reference"], first_order["status"]),
   ("BRAND-A", "BR-1", "talabat:1001", "ACCEPTED"), "orders list: the order")
eq(first_order["customer"], {"name": "Sara", "phone": "+966500000000"}, "orders list: the customer")
eq([(p["id"], p["quantity"], [m["id"] for m in p["modifiers"]]) for p in first_order["products"]],
   [("P-1", 2, ["M-1", "M-2"]), ("P-1", 1, [])], "orders list: lines and modifiers in order")
eq(first_order["total"], 57.5, "orders list: the total")
r = run(POS, "orders", "list", env=env)
eq(r.returncode, 0, "orders list")
check(order_id in r.stdout and "talabat:1001" in r.stdout, f"orders list text: {r.stdout!r}")

finish()

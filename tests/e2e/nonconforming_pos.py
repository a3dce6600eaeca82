"""A POS written for the `pos verify` test: standard library only, on 127.0.0.1 at a port the system picks. In mode
"conform" it answers like the interface (and orderpos) asks; every other mode makes exactly one kind of mistake
that vendors make, so that exactly one rule of `orderhub pos verify` must fail."""
import http.server
import json
import re
import threading
import time

EMAIL = "vendor@pos.example"
PASSWORD = "vendor-password-1"
TOKEN = "fake-token-of-brand-a-0123456789"
OTHER_TOKEN = "fake-token-of-brand-b-9876543210"
BRAND, OTHER_BRAND = "BRAND-A", "BRAND-B"
BRANCH = "BR-1"
PRODUCTS = {"P-1": {"BR-1"}, "P-2": {"BR-2"}}  # product -> branches it is sold in
MODIFIERS = {"M-1"}
MISMATCH = "These credentials do not match our records."

# mode -> the one rule of `pos verify` that it breaks
MISTAKES = {
    "no_token_ok": "orders.no_token",            # an order without any Authorization header is accepted
    "accept_unknown_token": "orders.wrong_token",  # any well-formed bearer token is accepted
    "other_brand_ok": "orders.other_brand",      # a token of another brand may order for this one
    "login_text": "login.wrong_password",        # a wrong password gets 401 without the credentials text
    "unknown_email_404": "login.unknown_email",  # an unknown e-mail is told apart from a wrong password
    "repeat_new_id": "orders.repeat",            # the same partner_reference makes a second order
    "unknown_product_ok": "orders.unknown_product",  # an unknown product is accepted
    "modifier_500": "orders.unknown_modifier",   # an unknown modifier crashes the POS: 500
    "unavailable_ok": "orders.unavailable_product",  # a product not sold in the branch is accepted
    "html_missing": "orders.missing_field",      # a missing field gets an HTML error page
    "mistyped_500": "orders.mistyped_field",     # a string where an integer belongs crashes the POS: 500
}


class FakePos:
    def __init__(self):
        self.mode = "conform"
        self.delay = 0.0
        self.orders = {}     # partner_reference -> order id
        self.received = []   # every order body accepted
        self.lock = threading.Lock()
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if fake.delay:
                    time.sleep(fake.delay)
                if self.path == "/api/login":
                    status, body, ctype = fake.login(raw)
                elif self.path == "/api/orders":
                    status, body, ctype = fake.order(self.headers.get("Authorization"), raw)
                else:
                    status, body, ctype = 404, {"message": "not found"}, "application/json"
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    # --- /api/login -------------------------------------------------------------------------------------------
    def login(self, raw):
        try:
            req = json.loads(raw)
        except ValueError:
            return 400, {"message": "malformed JSON"}, "application/json"
        email, password = req.get("email"), req.get("password")
        if email == EMAIL and password == PASSWORD:
            return 200, {"access_token": TOKEN}, "application/json"
        if self.mode == "unknown_email_404" and email != EMAIL:
            return 404, {"status": "No account with this e-mail."}, "application/json"
        if self.mode == "login_text":
            return 401, {"status": "Unauthorized"}, "application/json"
        return 401, {"status": MISMATCH}, "application/json"

    # --- /api/orders ------------------------------------------------------------------------------------------
    def brand_of(self, authorization):
        if authorization is None:
            return BRAND if self.mode == "no_token_ok" else None
        m = re.fullmatch(r"Bearer (\S+)", authorization)
        if not m:
            return None
        token = m.group(1)
        if token == TOKEN:
            return BRAND
        if token == OTHER_TOKEN:
            return OTHER_BRAND
        return BRAND if self.mode == "accept_unknown_token" else None

    def problems(self, order):
        """(missing, mistyped) field names of the order body."""
        fields = {"branch_id": str, "brand_id": str, "partner_reference": str, "status": str, "products": list,
                  "total": (int, float), "subtotal": (int, float), "tax": (int, float)}
        missing = [k for k in fields if k not in order]
        mistyped = [k for k, t in fields.items() if k in order and not isinstance(order[k], t)]
        for i, p in enumerate(order.get("products") or []):
            if not isinstance(p.get("id"), str):
                mistyped.append(f"products.{i}.id")
            if not isinstance(p.get("quantity"), int) or isinstance(p.get("quantity"), bool):
                mistyped.append(f"products.{i}.quantity")
            for j, m in enumerate(p.get("modifiers") or []):
                if not isinstance(m.get("id"), str) or not isinstance(m.get("quantity"), int):
                    mistyped.append(f"products.{i}.modifiers.{j}")
        return missing, mistyped

    def order(self, authorization, raw):
        json_type = "application/json"
        brand = self.brand_of(authorization)
        if brand is None:
            return 401, {"success": False, "message": "Unauthenticated."}, json_type
        try:
            order = json.loads(raw)
        except ValueError:
            return 400, {"success": False, "message": "malformed JSON"}, json_type
        if not isinstance(order, dict):
            return 400, {"success": False, "message": "not an object"}, json_type
        if order.get("brand_id") != brand and self.mode != "other_brand_ok":
            return 403, {"success": False, "message": "This action is unauthorized."}, json_type
        missing, mistyped = self.problems(order)
        if missing:
            if self.mode == "html_missing":
                return 422, "<html><body><h1>The given data was invalid.</h1></body></html>", "text/html"
            return 422, {"success": False, "message": "missing", "errors": {k: ["required"] for k in missing}}, json_type
        if mistyped:
            if self.mode == "mistyped_500":
                return 500, "<html><body>Whoops, looks like something went wrong.</body></html>", "text/html"
            return 422, {"success": False, "message": "mistyped", "errors": {k: ["type"] for k in mistyped}}, json_type
        errors = {}
        for i, p in enumerate(order["products"]):
            if p["id"] not in PRODUCTS:
                if self.mode != "unknown_product_ok":
                    errors[f"products.{i}.id"] = ["The selected id is invalid."]
            elif order["branch_id"] not in PRODUCTS[p["id"]] and self.mode != "unavailable_ok":
                errors[f"products.{i}.id"] = [f"Product {p['id']} is not available in branch {order['branch_id']}."]
            for j, m in enumerate(p.get("modifiers") or []):
                if m["id"] not in MODIFIERS:
                    if self.mode == "modifier_500":
                        return 500, {"message": "Server Error"}, json_type
                    errors[f"products.{i}.modifiers.{j}.id"] = ["The selected id is invalid."]
        if errors:
            return 422, {"success": False, "message": "invalid", "errors": errors}, json_type
        with self.lock:
            ref = order["partner_reference"]
            if ref in self.orders and self.mode != "repeat_new_id":
                return 200, {"success": True, "message": "Order already received", "order_id": self.orders[ref]}, \
                    json_type
            order_id = f"ORD-{len(self.received) + 1}"
            self.orders[ref] = order_id
            self.received.append(order)
        return 201, {"success": True, "message": "Order created", "order_id": order_id}, json_type

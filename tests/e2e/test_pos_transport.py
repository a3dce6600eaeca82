"""`orderhub pos set` and plain http:// (issue 20, finding 15): the bearer token and the password would cross the
network in clear, so an http:// base URL is taken only for a loopback host (127.0.0.0/8, ::1, localhost) unless
`--allow-insecure-http` says so; `pos list` shows which connections are insecure. Refusals change nothing."""
import json

from harness import HUB, check, create_database, eq, finish, hub_env, psql, run

hub_url = create_database()
henv = hub_env(hub_url)
eq(run(HUB, "migrate", env=henv).returncode, 0, "migrate")
for brand in ("LOOP", "REMOTE", "TLS"):
    eq(run(HUB, "branch", "create", "--id", f"{brand}-1", "--brand", brand, env=henv).returncode, 0, f"brand {brand}")


def pos_set(brand, url, *extra, environment="production"):
    return run(HUB, "pos", "set", "--brand", brand, "--environment", environment, "--base-url", url, "--token", "-",
               *extra, "--json", env=henv, input="tok-secret-value\n")


for url in ("http://10.0.0.5:9090", "http://pos.example.com", "http://192.168.1.10", "http://[2001:db8::1]:80",
            "http://0.0.0.0:9090", "http://localhost.example.com"):
    r = pos_set("REMOTE", url)
    check(r.returncode != 0 and "--allow-insecure-http" in r.stderr, f"{url}: the refusal names the flag: {r.stderr}")
    check("tok-secret-value" not in r.stdout + r.stderr, "the refusal does not print the token")
eq(psql(hub_url, "SELECT count(*) FROM hub.pos_connections"), "0", "refused connections stored nothing")

for i, url in enumerate(("http://127.0.0.1:9090", "http://127.8.9.10", "http://[::1]:9090", "http://localhost:9090",
                         "http://LOCALHOST")):
    r = pos_set("LOOP", url, environment=f"e{i}")
    eq(r.returncode, 0, f"{url}: loopback over http is taken: {r.stderr}")
r = pos_set("TLS", "https://pos.example.com")
eq(r.returncode, 0, f"https to a remote host is taken: {r.stderr}")
r = pos_set("REMOTE", "http://pos.example.com:8080", "--allow-insecure-http")
eq(r.returncode, 0, f"--allow-insecure-http takes a remote http URL: {r.stderr}")
eq(json.loads(r.stdout).get("insecure"), True, "pos set says the connection is insecure")

listed = json.loads(run(HUB, "pos", "list", "--json", env=henv).stdout)
eq({(c["brand"], c["environment"]): c["insecure"] for c in listed},
   {**{("LOOP", f"e{i}"): False for i in range(5)}, ("TLS", "production"): False, ("REMOTE", "production"): True},
   "pos list marks the remote http connection insecure, and only it")
text = run(HUB, "pos", "list", env=henv).stdout
check("insecure" in text.splitlines()[0], f"the text listing has an insecure column: {text.splitlines()[0]}")

# A connection stored by an earlier version (no flag) is still shown for what it is.
psql(hub_url, "UPDATE hub.pos_connections SET base_url = 'http://10.1.2.3' WHERE brand_id = 'TLS'")
listed = json.loads(run(HUB, "pos", "list", "--json", env=henv).stdout)
eq([c["insecure"] for c in listed if c["brand"] == "TLS"], [True], "an http:// URL to a remote host is insecure")

help_text = run(HUB, "pos", "set", "--help", env=henv).stdout
check("--allow-insecure-http" in help_text, "--help documents --allow-insecure-http")
finish()

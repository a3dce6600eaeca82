"""Per-partner rate limits: a token bucket per partner answers 429 with Retry-After past its burst; a partner's
own limit (`partner limit`) overrides the hub's default; other partners are not affected."""
import json

from harness import HUB, Service, check, create_database, eq, finish, hub_env, run

url = create_database()
env = hub_env(url)
eq(run(HUB, "migrate", env=env).returncode, 0, "migrate")
eq(run(HUB, "branch", "create", "--id", "B1", "--brand", "BR", env=env).returncode, 0, "branch")


def partner(name):
    p = json.loads(run(HUB, "partner", "create", "--name", name, "--json", env=env).stdout)
    return p["id"], "/webhooks/" + p["webhook_url"].rsplit("/webhooks/", 1)[1]


(id1, p1), (id2, p2) = partner("Busy"), partner("Calm")
BAD = {"event": "order_created"}  # refused with 422 after the limit check: cheap and enough here

svc = Service(HUB, "--role", "api", "--rate-limit-per-second", "1", "--rate-limit-burst", "5", env=env)
codes = [svc.request("POST", p1, BAD)[0] for _ in range(8)]
eq(codes[:5], [422] * 5, "the burst passes")
check(429 in codes[5:], f"then 429: {codes}")
status, headers, body = svc.request("POST", p1, BAD)
eq(status, 429, "still limited")
check(headers.get("retry-after", "").isdigit() and int(headers["retry-after"]) >= 1, "Retry-After in seconds")
check(body.get("status") == "failed" and body.get("error", {}).get("code") == "rate_limited" and
      body.get("order_id") == "", f"429 body: {body}")
eq(svc.request("POST", p2, BAD)[0], 422, "another partner is not limited")
eq(svc.stop(), 0, "stop")

r = run(HUB, "partner", "limit", id1, "--per-second", "100", "--burst", "50", "--json", env=env)
eq(r.returncode, 0, f"partner limit: {r.stderr}")
svc = Service(HUB, "--role", "api", "--rate-limit-per-second", "1", "--rate-limit-burst", "5", env=env)
codes = [svc.request("POST", p1, BAD)[0] for _ in range(20)]
eq(codes, [422] * 20, "the partner's own limit applies")
eq(svc.stop(), 0, "stop")
eq(run(HUB, "partner", "limit", id1, "--default", env=env).returncode, 0, "back to the default")
eq(run(HUB, "partner", "limit", "nobody", "--per-second", "5", env=env).returncode, 1, "unknown partner: 1")
eq(run(HUB, "partner", "limit", id1, env=env).returncode, 2, "no rate: 2")
finish()

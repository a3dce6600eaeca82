"""`orderhub maintain`: monthly partitions ahead for the inbox and the attempt log, rows of the default partition
moved into them, months past retention dropped whole; orders and the status log never touched."""
import json

from harness import HUB, check, create_database, eq, finish, hub_env, psql, run

url = create_database()
env = hub_env(url)
eq(run(HUB, "migrate", env=env).returncode, 0, "migrate")
psql(url, "INSERT INTO hub.partners (id, name, label, key_hash) VALUES ('p', 'P', 'p', repeat('a', 64))")
# Requests received before any monthly partition existed, one of them long ago.
psql(url, "INSERT INTO hub.inbox (partner_id, request_id, body, http_status, outcome, received_at) VALUES "
          "('p', 'now', 'x', 200, 'stored', now()), ('p', 'old', 'y', 400, 'rejected', '2020-01-15 10:00+00')")
eq(psql(url, "SELECT count(*) FROM hub.inbox_default"), "2", "rows start in the default partition")

r = run(HUB, "maintain", "--json", env=env)
eq(r.returncode, 0, f"maintain: {r.stderr}")
out = json.loads(r.stdout)
eq(len(out["inbox"]["created"]), 3, "this month and two ahead for the inbox")
eq(len(out["pos_delivery_attempts"]["created"]), 3, "and for the attempt log")
this_month = out["inbox"]["created"][0]
eq(psql(url, "SELECT tableoid::regclass::text FROM hub.inbox WHERE request_id = 'now'"), f"hub.{this_month}",
   "this month's row moved into its partition")
eq(psql(url, "SELECT count(*) FROM hub.inbox"), "2", "no row lost in the move")

again = json.loads(run(HUB, "maintain", "--json", env=env).stdout)
eq(again["inbox"]["created"], [], "a second run creates nothing")

# A month past retention is dropped whole; a recent one is kept.
psql(url, "CREATE TABLE hub.inbox_y2020m01 (LIKE hub.inbox INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
psql(url, "WITH m AS (DELETE FROM hub.inbox_default WHERE request_id = 'old' RETURNING *) "
          "INSERT INTO hub.inbox_y2020m01 SELECT * FROM m")
psql(url, "ALTER TABLE hub.inbox ATTACH PARTITION hub.inbox_y2020m01 "
          "FOR VALUES FROM ('2020-01-01 00:00+00') TO ('2020-02-01 00:00+00')")
kept = json.loads(run(HUB, "maintain", "--inbox-retention-days", "0", "--json", env=env).stdout)
eq(kept["inbox"]["dropped"], [], "retention 0 keeps everything")
dropped = json.loads(run(HUB, "maintain", "--json", env=env).stdout)
eq(dropped["inbox"]["dropped"], ["inbox_y2020m01"], "the 2020 month is dropped")
eq(psql(url, "SELECT count(*) FROM hub.inbox"), "1", "only its rows went")
check(this_month not in dropped["inbox"]["dropped"], "this month is kept")
# New rows land in the monthly partition through the parent table.
psql(url, "INSERT INTO hub.inbox (partner_id, request_id, body, http_status, outcome) "
          "VALUES ('p', 'later', 'z', 200, 'stored')")
eq(psql(url, "SELECT tableoid::regclass::text FROM hub.inbox WHERE request_id = 'later'"), f"hub.{this_month}",
   "new rows go to the monthly partition")
eq(run(HUB, "maintain", "--months-ahead", "x", env=env).returncode, 2, "bad usage: exit 2")
finish()

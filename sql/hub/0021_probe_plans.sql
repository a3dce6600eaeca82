-- Three statement triggers look up hub.orders once per row of their transition table, by key: the status log's
-- guard (0020) and the dashboard's attempt and job events (0009). Their LATERAL ... LIMIT 1 keeps each lookup a
-- probe, but plpgsql keeps the plan it made first until the next ANALYZE of hub.orders, and a table analyzed while
-- (nearly) empty got a sequential scan inside the probe: every statement then read all of hub.orders once per row.
-- Measured (docs/performance.md): an ANALYZE of a new database, then 64 connections of webhooks for 15 s, the
-- guard took 21.5 ms per statement and the hub stored 1,255 orders/s instead of about 8,000, until autovacuum
-- analyzed the table again (up to a minute later, at any rate of orders in between). Sequential scans are off while
-- these functions run, so their plans probe the key's index whatever the statistics say.
ALTER FUNCTION hub.refuse_status_rows_without_order() SET enable_seqscan = off;
ALTER FUNCTION hub.dashboard_events_from_attempt_rows() SET enable_seqscan = off;
ALTER FUNCTION hub.dashboard_events_from_job_rows() SET enable_seqscan = off;

-- Observability and auditing.
--
-- /metrics reads the outbox depth by state about once a second: this partial index holds only the open jobs
-- (pending, in flight, or waiting for an operator), so the read never touches the delivered and cancelled
-- ones, which are nearly the whole table.
CREATE INDEX forward_jobs_open_idx ON hub.forward_jobs (state, created_at)
    WHERE state NOT IN ('delivered', 'cancelled');

-- `orderhub audit --branch B --since T --until T` and auditors' per-branch queries over a time range.
CREATE INDEX order_status_log_branch_time_idx ON hub.order_status_log (branch_id, event_time);

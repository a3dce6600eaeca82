-- Performance (issue 23): a board's status events are read from the status log itself instead of being copied into
-- hub.dashboard_events by a statement trigger. The copy cost every status-log row a second heap row, three index
-- entries and a plpgsql call (without it insert_orders executes in 0.95 x the time and writes 0.92 x the WAL per
-- order, docs/performance.md); the log already holds what the event said (order, branch, status) and is never changed
-- or deleted.
--
-- One id sequence for both tables keeps the Server-Sent Events id one counter: an event is a dashboard_events row
-- (an attempt, a job's state, and the status events copied before this migration) or a status-log row from
-- hub.status_events_from() on (hub.dashboard_event_log, below). Rows from before keep their ids; both columns draw from
-- hub.event_ids from here on, which starts above every id either table holds, so no id is shared and none is
-- seen twice.

CREATE SEQUENCE hub.event_ids AS bigint;
GRANT USAGE ON SEQUENCE hub.event_ids TO orderhub_app, orderhub_operator;

ALTER TABLE hub.dashboard_events ALTER COLUMN id DROP IDENTITY;
ALTER TABLE hub.dashboard_events ALTER COLUMN id SET DEFAULT nextval('hub.event_ids');
ALTER TABLE hub.order_status_log ALTER COLUMN id DROP IDENTITY;
ALTER TABLE hub.order_status_log ALTER COLUMN id SET DEFAULT nextval('hub.event_ids');
ALTER SEQUENCE hub.event_ids OWNED BY hub.dashboard_events.id;

DROP TRIGGER order_status_log_dashboard ON hub.order_status_log;
DROP FUNCTION hub.dashboard_events_from_status_rows();

DO $$
DECLARE
    from_id bigint;
BEGIN
    -- The ALTER TABLEs above hold both tables until the migration commits: no row with an old id is written after.
    SELECT greatest((SELECT coalesce(max(id), 0) FROM hub.dashboard_events),
                    (SELECT coalesce(max(id), 0) FROM hub.order_status_log)) + 1 INTO from_id;
    PERFORM setval('hub.event_ids', from_id, false);
    -- A constant that the planner folds into each statement, so that the status log's key serves
    -- `id >= hub.status_events_from() AND id > $1 ORDER BY id`.
    EXECUTE format('CREATE FUNCTION hub.status_events_from() RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE '
                   'RETURN %s', from_id);
END
$$;
COMMENT ON FUNCTION hub.status_events_from() IS
    'The first status-log id that is also a board event (the ones before were copied into hub.dashboard_events)';
GRANT EXECUTE ON FUNCTION hub.status_events_from() TO orderhub_app, orderhub_operator;

-- Every event by id, for people and tests. The dashboard's own statements (hub/dashboard/queries.hpp) read each
-- table on its own with ORDER BY id LIMIT n and merge the two: through this UNION ALL the planner sorted every
-- status-log row after the cursor.
CREATE VIEW hub.dashboard_event_log AS
SELECT id, order_id, branch_id, kind, detail, created_at FROM hub.dashboard_events
UNION ALL
SELECT id, order_id, branch_id, 'status', status, received_at FROM hub.order_status_log
WHERE id >= hub.status_events_from();
COMMENT ON VIEW hub.dashboard_event_log IS
    'What the boards are told, by event id: attempts and job states (hub.dashboard_events), and each status-log row';
GRANT SELECT ON hub.dashboard_event_log TO orderhub_app, orderhub_operator;

-- The merchant dashboard: users of a brand (optionally limited to some of its branches), their sessions, and a
-- feed of order events that open boards follow live.

CREATE TABLE hub.dashboard_users (
    id            text PRIMARY KEY,
    email         text NOT NULL UNIQUE CHECK (email = lower(email) AND email ~ '^[^@\s]+@[^@\s]+$' AND length(email) <= 254),
    -- PBKDF2-HMAC-SHA256, common/crypto/password.hpp: `pbkdf2_sha256$<iterations>$<salt>$<hash>`.
    password_hash text NOT NULL CHECK (password_hash LIKE 'pbkdf2_sha256$%'),
    brand_id      text NOT NULL REFERENCES hub.brands (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    disabled_at   timestamptz
);

-- The branches a user may see; a user without rows here sees every branch of their brand.
CREATE TABLE hub.dashboard_user_branches (
    user_id   text NOT NULL REFERENCES hub.dashboard_users (id),
    branch_id text NOT NULL REFERENCES hub.branches (id),
    PRIMARY KEY (user_id, branch_id)
);

-- Sessions: only the SHA-256 (hex) of the cookie's token is stored.
CREATE TABLE hub.dashboard_sessions (
    token_hash text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    user_id    text NOT NULL REFERENCES hub.dashboard_users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);

CREATE INDEX dashboard_sessions_expires_idx ON hub.dashboard_sessions (expires_at);

-- One row per thing a board shows changing: an order stored, a status-log row, a POS delivery attempt, a change
-- of the forwarding job's state. Filled by triggers in the writer's transaction, so nothing is missed; the id is
-- the Server-Sent Events id (`Last-Event-ID` resumes after it).
CREATE TABLE hub.dashboard_events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id   text NOT NULL,
    branch_id  text NOT NULL,
    kind       text NOT NULL,
    detail     text,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX dashboard_events_branch_idx ON hub.dashboard_events (branch_id, id);
CREATE INDEX dashboard_events_created_idx ON hub.dashboard_events (created_at);

CREATE FUNCTION hub.dashboard_event_from_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO hub.dashboard_events (order_id, branch_id, kind, detail)
    VALUES (NEW.order_id, NEW.branch_id, 'status', NEW.status);
    RETURN NULL;
END
$$;

CREATE FUNCTION hub.dashboard_event_from_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO hub.dashboard_events (order_id, branch_id, kind, detail)
    SELECT NEW.order_id, o.branch_id, 'attempt', NEW.outcome FROM hub.orders o WHERE o.id = NEW.order_id;
    RETURN NULL;
END
$$;

CREATE FUNCTION hub.dashboard_event_from_job() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO hub.dashboard_events (order_id, branch_id, kind, detail)
    SELECT NEW.order_id, o.branch_id, 'job', NEW.state FROM hub.orders o WHERE o.id = NEW.order_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER order_status_log_dashboard AFTER INSERT ON hub.order_status_log
    FOR EACH ROW EXECUTE FUNCTION hub.dashboard_event_from_status();
CREATE TRIGGER pos_delivery_attempts_dashboard AFTER INSERT ON hub.pos_delivery_attempts
    FOR EACH ROW EXECUTE FUNCTION hub.dashboard_event_from_attempt();
CREATE TRIGGER forward_jobs_dashboard AFTER UPDATE OF state ON hub.forward_jobs
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION hub.dashboard_event_from_job();

GRANT SELECT ON hub.dashboard_users, hub.dashboard_user_branches TO orderhub_app;
GRANT SELECT, INSERT, DELETE ON hub.dashboard_sessions TO orderhub_app;
-- Serving hubs delete events older than two days (boards reload their list anyway) and expired sessions.
GRANT SELECT, INSERT, DELETE ON hub.dashboard_events TO orderhub_app;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA hub TO orderhub_app;

-- Forwarding to the POS: connections per brand and environment (secrets sealed with ORDERHUB_SECRET_KEY),
-- item and option id mappings, job leases, and the log of every delivery attempt.

CREATE TABLE hub.pos_connections (
    brand_id        text NOT NULL REFERENCES hub.brands (id),
    environment     text NOT NULL DEFAULT 'production' CHECK (environment ~ '^[a-z0-9_-]{1,32}$'),
    base_url        text NOT NULL CHECK (base_url ~ '^https?://'),
    -- AES-256-GCM sealed (common/crypto/secret_box.hpp); null when not configured.
    token_sealed    text,
    email           text,
    password_sealed text,
    ca_file         text,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (brand_id, environment),
    CHECK ((email IS NULL) = (password_sealed IS NULL)),
    CHECK (token_sealed IS NOT NULL OR password_sealed IS NOT NULL)
);

-- Platform item and option ids mapped to POS product and modifier ids; unmapped ids pass through unchanged.
CREATE TABLE hub.item_mappings (
    partner_id  text NOT NULL REFERENCES hub.partners (id),
    kind        text NOT NULL CHECK (kind IN ('item', 'option')),
    external_id text NOT NULL,
    pos_id      text NOT NULL CHECK (pos_id <> ''),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partner_id, kind, external_id)
);

-- A claimed job belongs to one forwarder until its lease ends; a forwarder that dies loses it then.
ALTER TABLE hub.forward_jobs ADD COLUMN claimed_by text, ADD COLUMN lease_until timestamptz;
CREATE INDEX forward_jobs_lease_idx ON hub.forward_jobs (lease_until) WHERE state = 'in_flight';

-- Every attempt, partitioned by month like the inbox (retention drops partitions).
CREATE TABLE hub.pos_delivery_attempts (
    id               bigint GENERATED ALWAYS AS IDENTITY,
    attempted_at     timestamptz NOT NULL DEFAULT now(),
    order_id         text NOT NULL,
    attempt          integer NOT NULL,
    url              text NOT NULL,
    http_status      integer,
    latency_ms       integer NOT NULL,
    outcome          text NOT NULL,
    error            text,
    response_excerpt text,
    forwarder        text NOT NULL,
    PRIMARY KEY (id, attempted_at)
) PARTITION BY RANGE (attempted_at);

CREATE TABLE hub.pos_delivery_attempts_default PARTITION OF hub.pos_delivery_attempts DEFAULT;
CREATE INDEX pos_delivery_attempts_order_idx ON hub.pos_delivery_attempts (order_id, attempted_at);

-- Forwarders LISTEN on this channel; they also poll, so a lost notification only delays.
CREATE FUNCTION hub.notify_forward_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('orderhub_forward_jobs', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER forward_jobs_notify AFTER INSERT OR UPDATE OF state, due_at ON hub.forward_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION hub.notify_forward_jobs();

GRANT SELECT, UPDATE ON hub.pos_connections TO orderhub_app;
GRANT SELECT ON hub.item_mappings TO orderhub_app;
GRANT SELECT, INSERT ON hub.pos_delivery_attempts TO orderhub_app;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA hub TO orderhub_app;

-- The operator HTTP API (product.md section 9, issue 21): its bearer tokens and the record of what they changed.

-- A token is 256 random bits shown once by `orderhub admin-token create`; only its SHA-256 (hex) is stored, like
-- a partner's webhook key. A revoked token stays listed (its name is the actor of the changes it made).
CREATE TABLE hub.admin_tokens (
    id text PRIMARY KEY,
    name text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 128),
    token_hash text NOT NULL UNIQUE,
    read_only boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);

-- Every change made through the API: when, by which token (its name, the actor), the call and what it named.
CREATE TABLE hub.admin_changes (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    token_id text NOT NULL REFERENCES hub.admin_tokens (id),
    actor text NOT NULL,
    method text NOT NULL,
    path text NOT NULL,
    target text,
    http_status integer NOT NULL
);
CREATE INDEX admin_changes_at_idx ON hub.admin_changes (at);

-- The serving role looks tokens up. An API call's transaction switches to orderhub_operator (SET LOCAL ROLE), which
-- may read everything and change the configuration as the operator CLI does; the serving role is NOINHERIT, so
-- the webhook path keeps only its own rights and holds the operator's only inside an API call.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'orderhub_operator') THEN
        BEGIN
            CREATE ROLE orderhub_operator NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
END
$$;
ALTER ROLE orderhub_app NOINHERIT;
GRANT orderhub_operator TO orderhub_app;
GRANT SELECT ON hub.admin_tokens TO orderhub_app;

GRANT USAGE ON SCHEMA hub TO orderhub_operator;
GRANT SELECT ON ALL TABLES IN SCHEMA hub TO orderhub_operator;
GRANT INSERT, UPDATE ON hub.partners, hub.partner_signing_secrets, hub.brands, hub.branches, hub.pos_connections,
    hub.item_mappings, hub.forward_jobs, hub.pos_connection_health TO orderhub_operator;
GRANT DELETE ON hub.item_mappings TO orderhub_operator;
GRANT INSERT ON hub.order_status_log, hub.dashboard_events, hub.admin_changes TO orderhub_operator;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA hub TO orderhub_operator;

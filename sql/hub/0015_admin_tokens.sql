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

-- The request path looks tokens up and records changes as the serving role; the changes themselves run with the
-- owner's rights, like the CLI (hub/adminapi/api.hpp).
GRANT SELECT ON hub.admin_tokens TO orderhub_app;
GRANT SELECT, INSERT ON hub.admin_changes TO orderhub_app;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA hub TO orderhub_app;

-- Standard Webhooks signing secrets of partners created with `--signing`. Each secret (`whsec_…`) is sealed with
-- ORDERHUB_SECRET_KEY (AES-256-GCM, common/crypto/secret_box.hpp) with associated data `signing_secret:<partner
-- id>`, so a sealed value cannot be moved to another partner. A secret is valid while expires_at is null or in
-- the future: `partner rotate-secret` adds a new one and gives the older ones a grace period.

CREATE TABLE hub.partner_signing_secrets (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partner_id    text NOT NULL REFERENCES hub.partners (id),
    secret_sealed text NOT NULL CHECK (secret_sealed <> ''),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz
);

CREATE INDEX partner_signing_secrets_partner_idx ON hub.partner_signing_secrets (partner_id, created_at);

-- The request path reads the secrets; only the operator CLI (the owner) writes them.
GRANT SELECT ON hub.partner_signing_secrets TO orderhub_app;

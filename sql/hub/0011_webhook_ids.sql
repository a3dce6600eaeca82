-- Hardening of the webhook path (issue 20, findings 5 and 14; docs/security.md).

-- A request refused for its signature was sent by anyone who knows the URL: the inbox keeps a prefix of its body
-- (4 KiB) and here the size of the whole body. NULL: the body column holds the whole body.
ALTER TABLE hub.inbox ADD COLUMN body_size integer;

-- The Standard Webhooks ids a signing partner's valid requests used, with the answer each got, so that a request
-- sent again with the same id (a replay, or the platform's retry) is answered like an exact repeat, by any hub
-- instance. Only final answers (2xx, 4xx but 429) are kept: a retry after a 503 runs again. Rows older than
-- the signature window (5 minutes either way) are purged by the hub as it adds new ones, per partner.
CREATE TABLE hub.webhook_ids (
    partner_id  text NOT NULL,
    webhook_id  text NOT NULL,
    seen_at     timestamptz NOT NULL DEFAULT now(),
    http_status integer NOT NULL,
    answer      text NOT NULL,
    -- Requests answered from this row so far; the first one is recorded in the inbox (outcome 'replay').
    replays     integer NOT NULL DEFAULT 0,
    PRIMARY KEY (partner_id, webhook_id)
);
CREATE INDEX webhook_ids_partner_seen_idx ON hub.webhook_ids (partner_id, seen_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON hub.webhook_ids TO orderhub_app;

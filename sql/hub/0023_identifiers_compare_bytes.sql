-- Identifiers, codes, states and hashes compare byte by byte (COLLATE "C"); people's text (names, notes, addresses,
-- errors, details, emails) keeps the database's collation.
--
-- Every text column took the database's default collation, so each comparison in a B-tree of ids (the order's id,
-- its partner, branch and brand, the external id, the job's state) went through the locale's strcoll(). Byte order
-- is the only order an id has: an index sorted by a locale's rules is wrong after a C library or ICU changes those
-- rules (PostgreSQL's "locale data changes" warning), and an id's place must not depend on how the database was
-- created. It is also cheaper where the locale is a language's: 300 statements of 32 orders took 0.96 x the
-- backend's CPU in a database whose default is ICU's en-US (under C.UTF-8 no change showed; docs/performance.md).
-- Equality is the same under both (both are deterministic), so no stored row, unique key or answer changes. Lists
-- sorted by an id (branch list, map list) sort by bytes: under a language's locale ids that differ in case or go
-- beyond ASCII change places; under C.UTF-8 (code point order) nothing moves.
--
-- A column's collation changes with ALTER COLUMN TYPE, which refuses while a view or a trigger's column list or WHEN
-- clause names the column: the view of the boards' events and the triggers that name columns are dropped and made
-- again as they were (definition, enabled state). The indexes on the changed columns are rebuilt; no table is
-- rewritten.

DROP VIEW hub.dashboard_event_log;

CREATE TEMPORARY TABLE migration_0023_triggers ON COMMIT DROP AS
SELECT tgrelid::regclass AS tbl, tgname AS name, pg_get_triggerdef(oid) AS def, tgenabled AS enabled
FROM pg_trigger
WHERE NOT tgisinternal AND tgrelid IN (SELECT c.oid FROM pg_class c WHERE c.relnamespace = 'hub'::regnamespace)
  AND (tgqual IS NOT NULL OR cardinality(tgattr) > 0);

DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM migration_0023_triggers LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', t.name, t.tbl);
    END LOOP;
END
$$;

ALTER TABLE hub.admin_changes
    ALTER COLUMN token_id TYPE text COLLATE "C";
ALTER TABLE hub.admin_tokens
    ALTER COLUMN id TYPE text COLLATE "C",
    ALTER COLUMN name TYPE text COLLATE "C",
    ALTER COLUMN token_hash TYPE text COLLATE "C";
ALTER TABLE hub.brands
    ALTER COLUMN id TYPE text COLLATE "C";
ALTER TABLE hub.branches
    ALTER COLUMN id TYPE text COLLATE "C",
    ALTER COLUMN brand_id TYPE text COLLATE "C",
    ALTER COLUMN pos_branch_id TYPE text COLLATE "C";
ALTER TABLE hub.partners
    ALTER COLUMN id TYPE text COLLATE "C",
    ALTER COLUMN key_hash TYPE text COLLATE "C",
    ALTER COLUMN label TYPE text COLLATE "C";
ALTER TABLE hub.partner_signing_secrets
    ALTER COLUMN partner_id TYPE text COLLATE "C";
ALTER TABLE hub.webhook_ids
    ALTER COLUMN partner_id TYPE text COLLATE "C",
    ALTER COLUMN webhook_id TYPE text COLLATE "C";
ALTER TABLE hub.item_mappings
    ALTER COLUMN partner_id TYPE text COLLATE "C",
    ALTER COLUMN kind TYPE text COLLATE "C",
    ALTER COLUMN external_id TYPE text COLLATE "C",
    ALTER COLUMN pos_id TYPE text COLLATE "C";
ALTER TABLE hub.pos_connections
    ALTER COLUMN brand_id TYPE text COLLATE "C",
    ALTER COLUMN environment TYPE text COLLATE "C";
ALTER TABLE hub.pos_connection_health
    ALTER COLUMN brand_id TYPE text COLLATE "C",
    ALTER COLUMN environment TYPE text COLLATE "C",
    ALTER COLUMN host TYPE text COLLATE "C",
    ALTER COLUMN state TYPE text COLLATE "C",
    ALTER COLUMN forwarder TYPE text COLLATE "C";
ALTER TABLE hub.orders
    ALTER COLUMN id TYPE text COLLATE "C",
    ALTER COLUMN partner_id TYPE text COLLATE "C",
    ALTER COLUMN branch_id TYPE text COLLATE "C",
    ALTER COLUMN brand_id TYPE text COLLATE "C",
    ALTER COLUMN external_id TYPE text COLLATE "C",
    ALTER COLUMN request_id TYPE text COLLATE "C",
    ALTER COLUMN payload_hash TYPE text COLLATE "C",
    ALTER COLUMN order_type TYPE text COLLATE "C",
    ALTER COLUMN payment_method TYPE text COLLATE "C",
    ALTER COLUMN delivery_status TYPE text COLLATE "C";
ALTER TABLE hub.order_items
    ALTER COLUMN order_id TYPE text COLLATE "C",
    ALTER COLUMN item_id TYPE text COLLATE "C";
ALTER TABLE hub.order_item_options
    ALTER COLUMN order_id TYPE text COLLATE "C",
    ALTER COLUMN option_id TYPE text COLLATE "C";
ALTER TABLE hub.order_status_log
    ALTER COLUMN order_id TYPE text COLLATE "C",
    ALTER COLUMN partner_id TYPE text COLLATE "C",
    ALTER COLUMN branch_id TYPE text COLLATE "C",
    ALTER COLUMN status TYPE text COLLATE "C",
    ALTER COLUMN source TYPE text COLLATE "C";
ALTER TABLE hub.forward_jobs
    ALTER COLUMN order_id TYPE text COLLATE "C",
    ALTER COLUMN brand_id TYPE text COLLATE "C",
    ALTER COLUMN state TYPE text COLLATE "C",
    ALTER COLUMN claimed_by TYPE text COLLATE "C",
    ALTER COLUMN pos_order_id TYPE text COLLATE "C";
ALTER TABLE hub.inbox
    ALTER COLUMN partner_id TYPE text COLLATE "C",
    ALTER COLUMN external_id TYPE text COLLATE "C",
    ALTER COLUMN order_id TYPE text COLLATE "C",
    ALTER COLUMN branch_id TYPE text COLLATE "C",
    ALTER COLUMN request_id TYPE text COLLATE "C",
    ALTER COLUMN event TYPE text COLLATE "C",
    ALTER COLUMN outcome TYPE text COLLATE "C",
    ALTER COLUMN error_code TYPE text COLLATE "C";
ALTER TABLE hub.pos_delivery_attempts
    ALTER COLUMN order_id TYPE text COLLATE "C",
    ALTER COLUMN request_id TYPE text COLLATE "C",
    ALTER COLUMN outcome TYPE text COLLATE "C",
    ALTER COLUMN forwarder TYPE text COLLATE "C";
ALTER TABLE hub.dashboard_events
    ALTER COLUMN order_id TYPE text COLLATE "C",
    ALTER COLUMN branch_id TYPE text COLLATE "C",
    ALTER COLUMN kind TYPE text COLLATE "C";
-- A board user's email stays in the database's collation: its CHECK (email = lower(email)) lowers letters beyond
-- ASCII only there ("C" lowers A to Z alone).
ALTER TABLE hub.dashboard_users
    ALTER COLUMN id TYPE text COLLATE "C",
    ALTER COLUMN brand_id TYPE text COLLATE "C";
ALTER TABLE hub.dashboard_user_branches
    ALTER COLUMN user_id TYPE text COLLATE "C",
    ALTER COLUMN branch_id TYPE text COLLATE "C";
ALTER TABLE hub.dashboard_sessions
    ALTER COLUMN token_hash TYPE text COLLATE "C",
    ALTER COLUMN user_id TYPE text COLLATE "C";

DO $$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT * FROM migration_0023_triggers LOOP
        EXECUTE t.def;
        IF t.enabled = 'A' THEN
            EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', t.tbl, t.name);
        ELSIF t.enabled = 'R' THEN
            EXECUTE format('ALTER TABLE %s ENABLE REPLICA TRIGGER %I', t.tbl, t.name);
        ELSIF t.enabled = 'D' THEN
            EXECUTE format('ALTER TABLE %s DISABLE TRIGGER %I', t.tbl, t.name);
        END IF;
    END LOOP;
END
$$;

-- As 0022 made it.
CREATE VIEW hub.dashboard_event_log AS
SELECT id, order_id, branch_id, kind, detail, created_at FROM hub.dashboard_events
UNION ALL
SELECT id, order_id, branch_id, 'status', status, received_at FROM hub.order_status_log
WHERE id >= hub.status_events_from();
COMMENT ON VIEW hub.dashboard_event_log IS
    'What the boards are told, by event id: attempts and job states (hub.dashboard_events), and each status-log row';
GRANT SELECT ON hub.dashboard_event_log TO orderhub_app, orderhub_operator;

-- Least privilege. `orderhub serve` switches every database connection to orderhub_app (SET ROLE), so the
-- request path can do only what it needs, whoever the connection string names. orderhub_auditor reads the
-- status log, the orders and their items, and nothing else: no partners, keys, inbox bodies or secrets.
-- Roles are cluster-wide: created when missing, and safe when another database of the cluster created them.
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['orderhub_app', 'orderhub_auditor'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;
            END;
        END IF;
    END LOOP;
END
$$;

-- The migrating owner may switch to the serving role (superusers always can).
GRANT orderhub_app TO CURRENT_USER;

GRANT USAGE ON SCHEMA hub TO orderhub_app, orderhub_auditor;

GRANT SELECT ON hub.schema_migrations, hub.partners, hub.brands, hub.branches TO orderhub_app;
GRANT SELECT, INSERT, UPDATE ON hub.orders, hub.forward_jobs TO orderhub_app;
GRANT SELECT, INSERT ON hub.order_items, hub.order_item_options, hub.order_status_log, hub.inbox TO orderhub_app;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA hub TO orderhub_app;

GRANT SELECT ON hub.orders, hub.order_items, hub.order_item_options, hub.order_status_log TO orderhub_auditor;

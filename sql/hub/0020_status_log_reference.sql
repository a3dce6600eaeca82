-- Performance (issue 23), the same trade as 0019 for the last per-order foreign-key check, stated in
-- docs/auditing.md and measured in docs/performance.md: the status log's key to its order
-- (order_status_log_order_id_fkey) ran one referential-integrity query per status-log row, each an executor start
-- and an index probe under FOR KEY SHARE. What it protected holds now by two guards:
-- * an order is never deleted, renamed or truncated (the key's FOR KEY SHARE lock was there for that; with no
--   removal, a stored order seen once stays);
-- * every status-log row names a stored order: one query per statement checks all the rows the statement wrote
--   (insert_orders writes up to a batch of them at once), instead of one query per row.
-- Both guards are ENABLE ALWAYS, so they hold under session_replication_role = replica too, where the key's own
-- triggers did not fire.
ALTER TABLE hub.order_status_log DROP CONSTRAINT order_status_log_order_id_fkey;

CREATE FUNCTION hub.refuse_status_rows_without_order() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    missing text;
BEGIN
    -- One index probe per row: LATERAL with LIMIT 1 is never turned into a join, whose plan, cached while
    -- hub.orders was small, would scan the whole table for every statement.
    SELECT n.order_id INTO missing FROM new_rows n
    LEFT JOIN LATERAL (SELECT o.id FROM hub.orders o WHERE o.id = n.order_id LIMIT 1) o ON true
    WHERE o.id IS NULL
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'order % is not stored: every status-log row names a stored order', missing
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER order_status_log_names_order AFTER INSERT ON hub.order_status_log
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hub.refuse_status_rows_without_order();
ALTER TABLE hub.order_status_log ENABLE ALWAYS TRIGGER order_status_log_names_order;

CREATE FUNCTION hub.refuse_order_removal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN
        RAISE EXCEPTION 'stored orders are kept for good: % of hub.orders is not allowed', TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RAISE EXCEPTION 'order % is kept for good: % is not allowed', OLD.id,
        CASE WHEN TG_OP = 'DELETE' THEN 'deleting it' ELSE 'changing its id' END
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER orders_never_deleted BEFORE DELETE ON hub.orders
    FOR EACH ROW EXECUTE FUNCTION hub.refuse_order_removal();
CREATE TRIGGER orders_never_renamed BEFORE UPDATE OF id ON hub.orders
    FOR EACH ROW WHEN (NEW.id IS DISTINCT FROM OLD.id) EXECUTE FUNCTION hub.refuse_order_removal();
CREATE TRIGGER orders_no_truncate BEFORE TRUNCATE ON hub.orders
    FOR EACH STATEMENT EXECUTE FUNCTION hub.refuse_order_removal();
ALTER TABLE hub.orders ENABLE ALWAYS TRIGGER orders_never_deleted;
ALTER TABLE hub.orders ENABLE ALWAYS TRIGGER orders_never_renamed;
ALTER TABLE hub.orders ENABLE ALWAYS TRIGGER orders_no_truncate;

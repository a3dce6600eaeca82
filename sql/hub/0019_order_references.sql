-- Performance (issue 23), a trade stated in docs/auditing.md and measured in docs/performance.md: six foreign keys,
-- seven of the eight checks that every stored order paid (an item's key is checked once per item), are replaced by
-- guards that run when a referenced row changes, which nothing in the product does.
--
-- Checked once per order until now, and why each holds without the check:
-- * hub.orders -> partners, branches, brands: `insert_orders` (hub/db/insert_orders.cpp), the one statement that
--   writes orders, takes the partner, the branch and its brand from its own join with those tables, and an order
--   keeps them. A partner or a branch that an order names can no longer be deleted or renamed, nor can such a
--   branch move to another brand; a brand keeps its branches (branches_brand_id_fkey stays), so an order's brand,
--   its branch's brand, stays too (the triggers below).
-- * hub.order_items, hub.order_item_options, hub.forward_jobs -> their order (and an option -> its item): the
--   same statement writes them from the rows its own INSERT INTO hub.orders returned, and nothing else inserts
--   them. An order is never deleted or renamed: its status-log rows name it (order_status_log_order_id_fkey stays)
--   and the status log is append-only. Items and options are immutable from now on, as the status log is, and a
--   job keeps its order.
-- The status log's key to its order stays: several writers add to the status log.
ALTER TABLE hub.orders
    DROP CONSTRAINT orders_partner_id_fkey,
    DROP CONSTRAINT orders_branch_id_fkey,
    DROP CONSTRAINT orders_brand_id_fkey;
ALTER TABLE hub.order_items DROP CONSTRAINT order_items_order_id_fkey;
ALTER TABLE hub.order_item_options DROP CONSTRAINT order_item_options_order_id_line_no_fkey;
ALTER TABLE hub.forward_jobs DROP CONSTRAINT forward_jobs_order_id_fkey;

-- A partner or branch that stored orders name (TG_ARGV[0]: the column of hub.orders) is neither deleted nor renamed.
-- The SHARE lock waits for every transaction that is inserting orders to end and holds new ones back until this
-- one ends, so the check sees an order committed a moment ago, and no order can name the row once it is gone.
CREATE FUNCTION hub.refuse_change_named_by_orders() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    named boolean;
BEGIN
    LOCK TABLE hub.orders IN SHARE MODE;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM hub.orders WHERE %I = $1)', TG_ARGV[0]) INTO named USING OLD.id;
    IF named THEN
        RAISE EXCEPTION 'hub.% row % is named by stored orders: it cannot be deleted, renamed or moved',
            TG_TABLE_NAME, OLD.id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER partners_named_by_orders_delete BEFORE DELETE ON hub.partners
    FOR EACH ROW EXECUTE FUNCTION hub.refuse_change_named_by_orders('partner_id');
CREATE TRIGGER partners_named_by_orders_rename BEFORE UPDATE OF id ON hub.partners
    FOR EACH ROW WHEN (NEW.id IS DISTINCT FROM OLD.id)
    EXECUTE FUNCTION hub.refuse_change_named_by_orders('partner_id');
CREATE TRIGGER branches_named_by_orders_delete BEFORE DELETE ON hub.branches
    FOR EACH ROW EXECUTE FUNCTION hub.refuse_change_named_by_orders('branch_id');
CREATE TRIGGER branches_named_by_orders_change BEFORE UPDATE OF id, brand_id ON hub.branches
    FOR EACH ROW WHEN (NEW.id IS DISTINCT FROM OLD.id OR NEW.brand_id IS DISTINCT FROM OLD.brand_id)
    EXECUTE FUNCTION hub.refuse_change_named_by_orders('branch_id');
ALTER TABLE hub.partners ENABLE ALWAYS TRIGGER partners_named_by_orders_delete;
ALTER TABLE hub.partners ENABLE ALWAYS TRIGGER partners_named_by_orders_rename;
ALTER TABLE hub.branches ENABLE ALWAYS TRIGGER branches_named_by_orders_delete;
ALTER TABLE hub.branches ENABLE ALWAYS TRIGGER branches_named_by_orders_change;

-- An order stays with the partner, branch and brand it was stored for (`serve` may update orders: their status).
CREATE FUNCTION hub.refuse_order_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'order % keeps its partner, branch and brand', OLD.id
        USING ERRCODE = 'foreign_key_violation';
END
$$;

CREATE TRIGGER orders_keep_references BEFORE UPDATE OF partner_id, branch_id, brand_id ON hub.orders
    FOR EACH ROW WHEN (NEW.partner_id IS DISTINCT FROM OLD.partner_id OR NEW.branch_id IS DISTINCT FROM OLD.branch_id
                       OR NEW.brand_id IS DISTINCT FROM OLD.brand_id)
    EXECUTE FUNCTION hub.refuse_order_move();
ALTER TABLE hub.orders ENABLE ALWAYS TRIGGER orders_keep_references;

-- Items and options are the order as the platform sent it: like the status log, they are never changed.
CREATE FUNCTION hub.refuse_order_line_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'hub.% is written once with its order: % is not allowed', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER order_items_no_change BEFORE UPDATE OR DELETE ON hub.order_items
    FOR EACH ROW EXECUTE FUNCTION hub.refuse_order_line_change();
CREATE TRIGGER order_items_no_truncate BEFORE TRUNCATE ON hub.order_items
    FOR EACH STATEMENT EXECUTE FUNCTION hub.refuse_order_line_change();
CREATE TRIGGER order_item_options_no_change BEFORE UPDATE OR DELETE ON hub.order_item_options
    FOR EACH ROW EXECUTE FUNCTION hub.refuse_order_line_change();
CREATE TRIGGER order_item_options_no_truncate BEFORE TRUNCATE ON hub.order_item_options
    FOR EACH STATEMENT EXECUTE FUNCTION hub.refuse_order_line_change();
ALTER TABLE hub.order_items ENABLE ALWAYS TRIGGER order_items_no_change;
ALTER TABLE hub.order_items ENABLE ALWAYS TRIGGER order_items_no_truncate;
ALTER TABLE hub.order_item_options ENABLE ALWAYS TRIGGER order_item_options_no_change;
ALTER TABLE hub.order_item_options ENABLE ALWAYS TRIGGER order_item_options_no_truncate;

-- A job keeps the order it was written for.
CREATE FUNCTION hub.refuse_job_order_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a forward job keeps its order: % cannot become %', OLD.order_id, NEW.order_id
        USING ERRCODE = 'foreign_key_violation';
END
$$;

CREATE TRIGGER forward_jobs_keep_order BEFORE UPDATE OF order_id ON hub.forward_jobs
    FOR EACH ROW WHEN (NEW.order_id IS DISTINCT FROM OLD.order_id)
    EXECUTE FUNCTION hub.refuse_job_order_change();
ALTER TABLE hub.forward_jobs ENABLE ALWAYS TRIGGER forward_jobs_keep_order;

-- Performance (issue 23), measured in docs/performance.md: an order's items and options are kept in its own row,
-- hub.orders.lines, instead of one row per item in hub.order_items and one per option in hub.order_item_options.
-- The interface's example order wrote four rows and four index entries for them; it now writes none (in a statement
-- of 32 orders run alone, about 14 % of the backend's CPU; in the hub, PostgreSQL's CPU per order 0.93 to 0.96 x). The lines are still written once, in the
-- transaction that stores the order, and never changed (the trigger below; 0019 guarded the two tables the same way).
--
-- lines = {"items": [{line_no, id, quantity, price, note}], "options": [{line_no, option_no, id, price, quantity}]}:
-- the rows of the two tables as JSON, prices as decimal text with three places, in line order. The hub validates
-- every line before it stores the order (quantities are whole numbers of at least 1, prices are not negative),
-- and insert_orders is the one statement that writes orders.
--
-- hub.order_items and hub.order_item_options stay, as views with the tables' columns, for the auditor, the operator
-- and their own reports. Every stored order's lines are copied first: the upgrade rewrites every row of hub.orders,
-- so on a large database it runs with the hub stopped (docs/operations.md).
ALTER TABLE hub.orders ADD COLUMN lines jsonb;

UPDATE hub.orders o
SET lines = jsonb_build_object(
    'items', coalesce((SELECT jsonb_agg(jsonb_build_object('line_no', i.line_no, 'id', i.item_id, 'quantity',
                                                           i.quantity, 'price', i.price::text, 'note', i.note)
                                        ORDER BY i.line_no)
                       FROM hub.order_items i WHERE i.order_id = o.id), '[]'::jsonb),
    'options', coalesce((SELECT jsonb_agg(jsonb_build_object('line_no', x.line_no, 'option_no', x.option_no, 'id',
                                                             x.option_id, 'price', x.price::text, 'quantity', x.quantity)
                                          ORDER BY x.line_no, x.option_no)
                         FROM hub.order_item_options x WHERE x.order_id = o.id), '[]'::jsonb));

ALTER TABLE hub.orders
    ALTER COLUMN lines SET NOT NULL,
    ADD CONSTRAINT orders_lines_check
        CHECK (jsonb_typeof(lines -> 'items') = 'array' AND jsonb_typeof(lines -> 'options') = 'array');

DROP TABLE hub.order_item_options;
DROP TABLE hub.order_items;
DROP FUNCTION hub.refuse_order_line_change();

-- Like the status log, an order's lines are the order as the platform sent it: never changed, by any role.
CREATE FUNCTION hub.refuse_order_lines_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the items and options of order % are written once with it: they cannot be changed', OLD.id
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER orders_keep_lines BEFORE UPDATE OF lines ON hub.orders
    FOR EACH ROW WHEN (NEW.lines IS DISTINCT FROM OLD.lines)
    EXECUTE FUNCTION hub.refuse_order_lines_change();
ALTER TABLE hub.orders ENABLE ALWAYS TRIGGER orders_keep_lines;

-- The two tables as they were, read from the orders' lines (not updatable: a view over a function's rows).
CREATE VIEW hub.order_items AS
SELECT o.id AS order_id, i.line_no, i.id AS item_id, i.quantity, i.price, i.note
FROM hub.orders o
CROSS JOIN LATERAL jsonb_to_recordset(o.lines -> 'items')
    AS i(line_no integer, id text COLLATE "C", quantity integer, price numeric(14, 3), note text);

CREATE VIEW hub.order_item_options AS
SELECT o.id AS order_id, x.line_no, x.option_no, x.id AS option_id, x.price, x.quantity
FROM hub.orders o
CROSS JOIN LATERAL jsonb_to_recordset(o.lines -> 'options')
    AS x(line_no integer, option_no integer, id text COLLATE "C", price numeric(14, 3), quantity integer);

GRANT SELECT ON hub.order_items, hub.order_item_options TO orderhub_app, orderhub_auditor, orderhub_operator;

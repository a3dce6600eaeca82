-- One order as the hub stores the interface's example order_created (deploy/examples/order-created.json): the
-- rows that hub/db/insert_orders.cpp's statement writes, table by table (the order with its 2 items and its option
-- in its row, sql/hub/0024; the first status-log row; the forwarding job, whose trigger notifies the forwarders).
-- tests/load/ingest-bench.sh wraps it in BEGIN/COMMIT once (one order per transaction) or 100 times (the
-- batched limit) and replaces @PARTNER@ with the provisioned partner's id. :n is a per-client counter
-- (pgbench -D n=0), so :oid is unique across clients and transactions.
\set n :n + 1
\set oid :client_id * 1000000000 + :n
INSERT INTO hub.orders (id, partner_id, external_id, branch_id, brand_id, payload_hash, event_time, payment_method,
                        order_type, note, subtotal, tax, discount, total, is_schedule, schedule_date, car_color,
                        car_plate_number, car_plate_letters, car_brand, customer_name, customer_phone,
                        customer_address, status_time, lines)
VALUES ('00000000-0000-7000-8000-' || lpad((:oid)::text, 12, '0'), '@PARTNER@', 'PGB-' || (:oid)::text, 'DEMO-1',
        'DEMO', '4b227777d4dd1fc61c6f884f48641d02b4d121d3fd328cb08b5531fcacdabf8a', '2024-05-01 18:02:11+00',
        'card', 'DELIVERY', 'Please ring the bell twice', 41.5, 6.225, 5, 42.725, false, NULL, NULL, NULL, NULL,
        NULL, 'Sara Ali', '+966500000001', '12 King Fahd Rd, Riyadh', '2024-05-01 18:02:11+00',
        '{"items": [{"line_no": 0, "id": "P-BURGER", "quantity": 2, "price": "18.250", "note": ""}, {"line_no": 1, "id": "P-FRIES", "quantity": 1, "price": "5.000", "note": "no salt"}], "options": [{"line_no": 0, "option_no": 0, "id": "M-CHEESE", "price": "2.500", "quantity": 1}]}');
INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied)
VALUES ('00000000-0000-7000-8000-' || lpad((:oid)::text, 12, '0'), 'DEMO-1', '@PARTNER@', 'received', 'platform',
        '2024-05-01 18:02:11+00', true);
INSERT INTO hub.forward_jobs (order_id, brand_id, due_at, due_since)
VALUES ('00000000-0000-7000-8000-' || lpad((:oid)::text, 12, '0'), 'DEMO', now(), now());

-- The batched limit written set-based: the rows of 100 orders as tests/load/pgbench-order.sql writes them (the
-- order with its 2 items and its option in its row, the first status-log row, the forwarding job), in one
-- transaction of three multi-row INSERT ... SELECT statements, as the hub's insert_orders statement writes a batch.
-- For comparison only (tests/load/ingest-bench.sh runs it after the one-order-per-statement runs). @PARTNER@ is replaced with
-- the provisioned partner's id; :n is a per-client counter (pgbench -D n=0).
\set n :n + 1
\set base :client_id * 1000000000 + :n * 100
BEGIN;
INSERT INTO hub.orders (id, partner_id, external_id, branch_id, brand_id, payload_hash, event_time, payment_method,
                        order_type, note, subtotal, tax, discount, total, is_schedule, schedule_date, car_color,
                        car_plate_number, car_plate_letters, car_brand, customer_name, customer_phone,
                        customer_address, status_time, lines)
SELECT '00000000-0000-7000-8000-' || lpad(((:base)::bigint + g)::text, 12, '0'), '@PARTNER@',
       'PGB-' || ((:base)::bigint + g)::text, 'DEMO-1', 'DEMO',
       '4b227777d4dd1fc61c6f884f48641d02b4d121d3fd328cb08b5531fcacdabf8a', '2024-05-01 18:02:11+00', 'card',
       'DELIVERY', 'Please ring the bell twice', 41.5, 6.225, 5, 42.725, false, NULL, NULL, NULL, NULL, NULL,
       'Sara Ali', '+966500000001', '12 King Fahd Rd, Riyadh', '2024-05-01 18:02:11+00',
       '{"items": [{"line_no": 0, "id": "P-BURGER", "quantity": 2, "price": "18.250", "note": ""}, {"line_no": 1, "id": "P-FRIES", "quantity": 1, "price": "5.000", "note": "no salt"}], "options": [{"line_no": 0, "option_no": 0, "id": "M-CHEESE", "price": "2.500", "quantity": 1}]}'
FROM generate_series(1, 100) AS g;
INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied)
SELECT '00000000-0000-7000-8000-' || lpad(((:base)::bigint + g)::text, 12, '0'), 'DEMO-1', '@PARTNER@', 'received',
       'platform', '2024-05-01 18:02:11+00', true
FROM generate_series(1, 100) AS g;
INSERT INTO hub.forward_jobs (order_id, brand_id, due_at, due_since)
SELECT '00000000-0000-7000-8000-' || lpad(((:base)::bigint + g)::text, 12, '0'), 'DEMO', now(), now()
FROM generate_series(1, 100) AS g;
COMMIT;

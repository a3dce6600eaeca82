-- One request id end to end: the order keeps the id of the platform's request that created it (the inbox row
-- has it already), and every attempt to forward it records that id, which is also sent to the POS
-- (X-Request-Id, traceparent). NULL for orders and attempts from before this migration.
ALTER TABLE hub.orders ADD COLUMN request_id text;
ALTER TABLE hub.pos_delivery_attempts ADD COLUMN request_id text;

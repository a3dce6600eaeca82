-- Orders pushed by an operator (`orderhub order create`, POST /api/admin/v1/orders; product.md section 3, issue 22).

-- A test order (`--test`): shown as TEST wherever the order shows, never counted as a sale.
ALTER TABLE hub.orders ADD COLUMN test boolean NOT NULL DEFAULT false;

-- The partner that operator orders are stored under: orders are unique per (partner, payload.id) and name their
-- partner, and the POS's partner_reference is `<label>:<payload.id>`. It takes no webhooks: it is disabled, and its
-- key hash is the digest of random bytes that nobody holds. `partner list` does not show it. Its label is
-- `operator`, or `orderhub-operator` when a partner already uses that one.
INSERT INTO hub.partners (id, name, label, key_hash, disabled_at)
SELECT 'operator', 'Orders pushed by operators',
       CASE WHEN EXISTS (SELECT 1 FROM hub.partners WHERE label = 'operator') THEN 'orderhub-operator' ELSE 'operator' END,
       encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || clock_timestamp()::text, 'UTF8')),
              'hex'),
       now()
ON CONFLICT (id) DO NOTHING;

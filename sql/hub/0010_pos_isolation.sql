-- Isolation between POS connections (docs: forwarding, "Bulkheads and the circuit breaker").
--
-- brand_id: claims take each brand's due jobs through their own index walk, with a quota per brand that the
-- forwarder derives from its POS host's free slots and breaker. A brand whose host is full or whose breaker is
-- open is not read at all, however large its backlog: its jobs stay here, not in any forwarder's memory.
ALTER TABLE hub.forward_jobs ADD COLUMN brand_id text;
UPDATE hub.forward_jobs j SET brand_id = o.brand_id FROM hub.orders o WHERE o.id = j.order_id;
ALTER TABLE hub.forward_jobs ALTER COLUMN brand_id SET NOT NULL;

-- due_since: when the job's current run became due (its first due time; a resend or a `pos set` that re-queues
-- it starts a new run). A job still pending `--forward-give-up-after` after it is `dead`, whatever the breaker
-- did meanwhile: due_at moves with every back-off, due_since does not. Jobs of earlier versions count from their
-- current due time.
ALTER TABLE hub.forward_jobs ADD COLUMN due_since timestamptz;
UPDATE hub.forward_jobs SET due_since = due_at;
ALTER TABLE hub.forward_jobs ALTER COLUMN due_since SET NOT NULL;

-- The claim's walks: due jobs and expired leases of one brand, each in order.
CREATE INDEX forward_jobs_brand_due_idx ON hub.forward_jobs (brand_id, due_at) WHERE state = 'pending';
CREATE INDEX forward_jobs_brand_lease_idx ON hub.forward_jobs (brand_id, lease_until) WHERE state = 'in_flight';
-- The give-up sweep.
CREATE INDEX forward_jobs_give_up_idx ON hub.forward_jobs (due_since) WHERE state = 'pending';
-- Replaced by the per-brand walks.
DROP INDEX hub.forward_jobs_due_idx;
DROP INDEX hub.forward_jobs_lease_idx;

-- The circuit breaker of each POS connection as the forwarders last saw it: written when a breaker opens or
-- closes (never per delivery), read by the dashboard's banner. `host` is scheme://host:port of the connection's
-- base URL; every brand whose POS is on that host gets the same row contents.
CREATE TABLE hub.pos_connection_health (
    brand_id          text NOT NULL REFERENCES hub.brands (id),
    environment       text NOT NULL,
    host              text NOT NULL,
    state             text NOT NULL CHECK (state IN ('closed', 'open')),
    unreachable_since timestamptz,
    last_error        text,
    forwarder         text NOT NULL,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (brand_id, environment),
    CHECK ((state = 'open') = (unreachable_since IS NOT NULL))
);

GRANT SELECT, INSERT, UPDATE ON hub.pos_connection_health TO orderhub_app;

-- The hub's store: partners and their webhook keys, brands and branches, orders with items and options, the
-- append-only status log, the inbox of webhook requests, and the forwarding jobs.
-- The migration runner creates the schema `hub` and runs this file in one transaction.
-- Money is numeric(14,3): three decimals, as the POS order needs them.

CREATE TABLE hub.partners (
    id          text PRIMARY KEY,
    name        text NOT NULL CHECK (name <> '' AND length(name) <= 200),
    -- The platform label of partner_reference (`<label>:<platform order id>`).
    label       text NOT NULL UNIQUE CHECK (label ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
    -- SHA-256 (hex) of the webhook key: the key itself is shown once, at `partner create` and `partner rotate`.
    key_hash    text NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    -- Times without an offset in this partner's webhooks are read in this IANA time zone.
    time_zone   text NOT NULL DEFAULT 'UTC',
    signing     boolean NOT NULL DEFAULT false,
    disabled_at timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    key_rotated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE hub.brands (
    id         text PRIMARY KEY CHECK (id <> '' AND length(id) <= 128),
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE hub.branches (
    id                    text PRIMARY KEY CHECK (id <> '' AND length(id) <= 128),
    brand_id              text NOT NULL REFERENCES hub.brands (id),
    name                  text NOT NULL,
    -- The branch id the POS knows (default: the same id).
    pos_branch_id         text,
    auto_accept           boolean NOT NULL DEFAULT false,
    schedule_lead_minutes integer NOT NULL DEFAULT 30 CHECK (schedule_lead_minutes BETWEEN 0 AND 10080),
    created_at            timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE hub.orders (
    -- UUIDv7: opaque, sorts by creation time.
    id                text PRIMARY KEY,
    partner_id        text NOT NULL REFERENCES hub.partners (id),
    -- The platform's order id (payload.id), unique per partner.
    external_id       text NOT NULL,
    branch_id         text NOT NULL REFERENCES hub.branches (id),
    brand_id          text NOT NULL REFERENCES hub.brands (id),
    -- SHA-256 of the validated order in canonical form: an exact repeat has the same one, a different order
    -- under a used payload.id does not (409).
    payload_hash      text NOT NULL,
    event_time        timestamptz NOT NULL,
    payment_method    text NOT NULL,
    order_type        text NOT NULL CHECK (order_type IN ('DELIVERY', 'DINE-IN', 'PICK-UP')),
    note              text NOT NULL DEFAULT '',
    subtotal          numeric(14, 3) NOT NULL CHECK (subtotal >= 0),
    tax               numeric(14, 3) NOT NULL CHECK (tax >= 0),
    discount          numeric(14, 3) NOT NULL CHECK (discount >= 0),
    total             numeric(14, 3) NOT NULL CHECK (total >= 0),
    is_schedule       boolean NOT NULL,
    schedule_date     timestamptz,
    car_color         text,
    car_plate_number  text,
    car_plate_letters text,
    car_brand         text,
    customer_name     text,
    customer_phone    text,
    customer_address  text,
    -- The current delivery status: the applied status-log row with the latest event time.
    delivery_status   text NOT NULL DEFAULT 'received',
    status_time       timestamptz NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (partner_id, external_id),
    CHECK (is_schedule = (schedule_date IS NOT NULL))
);

CREATE INDEX orders_branch_created_idx ON hub.orders (branch_id, created_at);

CREATE TABLE hub.order_items (
    order_id text NOT NULL REFERENCES hub.orders (id),
    line_no  integer NOT NULL,
    item_id  text NOT NULL,
    quantity integer NOT NULL CHECK (quantity > 0),
    price    numeric(14, 3) NOT NULL CHECK (price >= 0),
    note     text NOT NULL DEFAULT '',
    PRIMARY KEY (order_id, line_no)
);

CREATE TABLE hub.order_item_options (
    order_id  text NOT NULL,
    line_no   integer NOT NULL,
    option_no integer NOT NULL,
    option_id text NOT NULL,
    price     numeric(14, 3) NOT NULL CHECK (price >= 0),
    quantity  integer NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (order_id, line_no, option_no),
    FOREIGN KEY (order_id, line_no) REFERENCES hub.order_items (order_id, line_no)
);

-- Append-only: every status an order went through, from the platform, the hub, the POS or an operator.
CREATE TABLE hub.order_status_log (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id    text NOT NULL REFERENCES hub.orders (id),
    branch_id   text NOT NULL,
    partner_id  text NOT NULL,
    status      text NOT NULL,
    source      text NOT NULL CHECK (source IN ('platform', 'hub', 'pos', 'operator')),
    event_time  timestamptz NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    -- False for an update that arrived after a final status (delivered, cancelled) or that is older than the
    -- current one: kept for the record, not applied.
    applied     boolean NOT NULL,
    -- Who did it, for source = operator (a user id), or the POS order id for source = pos.
    actor       text,
    detail      text
);

CREATE INDEX order_status_log_order_idx ON hub.order_status_log (order_id, event_time, id);
-- Each distinct platform update (order, status, event time) is recorded once: exact retries add nothing.
CREATE UNIQUE INDEX order_status_log_platform_once ON hub.order_status_log (order_id, status, event_time)
    WHERE source = 'platform';

CREATE FUNCTION hub.refuse_status_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'hub.order_status_log is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER order_status_log_no_update_delete BEFORE UPDATE OR DELETE ON hub.order_status_log
    FOR EACH ROW EXECUTE FUNCTION hub.refuse_status_log_change();
CREATE TRIGGER order_status_log_no_truncate BEFORE TRUNCATE ON hub.order_status_log
    FOR EACH STATEMENT EXECUTE FUNCTION hub.refuse_status_log_change();

-- Every webhook request that reached a known key, with its raw body and outcome, failed ones included.
-- Partitioned by month of receipt so that retention drops partitions instead of deleting rows; the default
-- partition takes whatever no monthly partition covers yet.
CREATE TABLE hub.inbox (
    id          bigint GENERATED ALWAYS AS IDENTITY,
    received_at timestamptz NOT NULL DEFAULT now(),
    partner_id  text NOT NULL,
    request_id  text NOT NULL,
    event       text,
    external_id text,
    order_id    text,
    headers     jsonb NOT NULL DEFAULT '{}',
    body        bytea NOT NULL,
    http_status integer NOT NULL,
    outcome     text NOT NULL,
    error_code  text,
    -- The inbox id this request re-ran (`orderhub events replay`).
    replay_of   bigint,
    PRIMARY KEY (id, received_at)
) PARTITION BY RANGE (received_at);

CREATE TABLE hub.inbox_default PARTITION OF hub.inbox DEFAULT;
CREATE INDEX inbox_partner_received_idx ON hub.inbox (partner_id, received_at);
CREATE INDEX inbox_id_idx ON hub.inbox (id);

-- One forwarding job per stored order, created in the order's transaction; the forwarder consumes them.
CREATE TABLE hub.forward_jobs (
    order_id     text PRIMARY KEY REFERENCES hub.orders (id),
    state        text NOT NULL DEFAULT 'pending'
                 CHECK (state IN ('pending', 'in_flight', 'delivered', 'rejected', 'auth_failed', 'dead', 'cancelled')),
    due_at       timestamptz NOT NULL,
    attempts     integer NOT NULL DEFAULT 0,
    pos_order_id text,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX forward_jobs_due_idx ON hub.forward_jobs (due_at) WHERE state = 'pending';

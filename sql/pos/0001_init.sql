-- Reference POS: menu, users and tokens, received orders, login throttling.
-- The migration runner creates the schema `pos` and its bookkeeping table, and runs this file in one
-- transaction.
-- Ids are the text ids of the menu file and of the interface; money is numeric(14,3) (three decimals).

-- Menu ------------------------------------------------------------------------------------------------------

CREATE TABLE pos.brands (
    id         text PRIMARY KEY CHECK (id <> '' AND length(id) <= 191),
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Branch ids are unique across brands (an order names its branch by id alone).
CREATE TABLE pos.branches (
    id         text PRIMARY KEY CHECK (id <> '' AND length(id) <= 191),
    brand_id   text NOT NULL REFERENCES pos.brands (id),
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- Target of the composite keys below, which make a branch reference stay inside its brand.
    UNIQUE (brand_id, id)
);

-- Product and modifier ids are unique per brand: two brands may both have "P-1".
CREATE TABLE pos.products (
    brand_id   text NOT NULL REFERENCES pos.brands (id),
    id         text NOT NULL CHECK (id <> '' AND length(id) <= 191),
    name       text NOT NULL,
    price      numeric(14, 3) NOT NULL CHECK (price >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (brand_id, id)
);

-- A product is sold only in the branches listed here, all of its own brand.
CREATE TABLE pos.product_branches (
    brand_id   text NOT NULL,
    product_id text NOT NULL,
    branch_id  text NOT NULL,
    PRIMARY KEY (brand_id, product_id, branch_id),
    FOREIGN KEY (brand_id, product_id) REFERENCES pos.products (brand_id, id) ON DELETE CASCADE,
    FOREIGN KEY (brand_id, branch_id) REFERENCES pos.branches (brand_id, id) ON DELETE CASCADE
);

CREATE INDEX product_branches_branch_idx ON pos.product_branches (branch_id);

CREATE TABLE pos.modifiers (
    brand_id   text NOT NULL REFERENCES pos.brands (id),
    id         text NOT NULL CHECK (id <> '' AND length(id) <= 191),
    name       text NOT NULL,
    price      numeric(14, 3) NOT NULL CHECK (price >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (brand_id, id)
);

-- Users and tokens ------------------------------------------------------------------------------------------

-- Each user may log in for one brand. password_hash is `pbkdf2_sha256$<iterations>$<salt>$<hash>`.
CREATE TABLE pos.users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         text NOT NULL CHECK (email <> '' AND length(email) <= 254),
    password_hash text NOT NULL,
    brand_id      text NOT NULL REFERENCES pos.brands (id),
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Emails are unique without regard to case; look users up with `lower(email) = lower($1)`.
CREATE UNIQUE INDEX users_email_lower_key ON pos.users (lower(email));

-- Access tokens are stored as the SHA-256 hex of the token, never in clear. brand_id is the user's brand at
-- issue time, so that a request can be authorised by one index lookup.
CREATE TABLE pos.tokens (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_hash   text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    user_id      bigint NOT NULL REFERENCES pos.users (id) ON DELETE CASCADE,
    brand_id     text NOT NULL REFERENCES pos.brands (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz
);

CREATE INDEX tokens_user_idx ON pos.tokens (user_id);

-- Failed logins per lower-cased email, for throttling; the row is deleted after a good login.
CREATE TABLE pos.login_failures (
    email           text PRIMARY KEY CHECK (email = lower(email)),
    failure_count   integer NOT NULL DEFAULT 0 CHECK (failure_count >= 0),
    last_failure_at timestamptz NOT NULL DEFAULT now()
);

-- Orders ----------------------------------------------------------------------------------------------------

-- One row per accepted POST /api/orders. (brand_id, partner_reference) makes a repeated request return the
-- first order: INSERT ... ON CONFLICT (brand_id, partner_reference) DO NOTHING, then read the existing id.
-- raw_request is the body as received.
CREATE TABLE pos.orders (
    id                text PRIMARY KEY CHECK (id <> ''),
    brand_id          text NOT NULL REFERENCES pos.brands (id),
    branch_id         text NOT NULL,
    partner_reference text NOT NULL CHECK (partner_reference <> '' AND length(partner_reference) <= 191),
    status            text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'ACCEPTED', 'PREPARING',
                                                                        'CANCELED', 'REJECTED', 'TIME_OUT')),
    note              text,
    subtotal          numeric(14, 3) NOT NULL CHECK (subtotal >= 0),
    tax               numeric(14, 3) NOT NULL CHECK (tax >= 0),
    total             numeric(14, 3) NOT NULL CHECK (total >= 0),
    customer_name     text,
    customer_phone    text,
    raw_request       jsonb NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (brand_id, partner_reference),
    FOREIGN KEY (brand_id, branch_id) REFERENCES pos.branches (brand_id, id)
);

CREATE INDEX orders_created_at_idx ON pos.orders (created_at DESC, id DESC);
CREATE INDEX orders_branch_idx ON pos.orders (branch_id, created_at DESC);

-- Order lines keep the ids as ordered, with no key to the menu: a later menu change must not alter history.
-- line_no and mod_no are the 0-based positions in the request (products.N, products.N.modifiers.M).
CREATE TABLE pos.order_products (
    order_id   text NOT NULL REFERENCES pos.orders (id) ON DELETE CASCADE,
    line_no    integer NOT NULL CHECK (line_no >= 0),
    product_id text NOT NULL,
    quantity   integer NOT NULL CHECK (quantity >= 1),
    total      numeric(14, 3) NOT NULL CHECK (total >= 0),
    note       text,
    PRIMARY KEY (order_id, line_no)
);

CREATE TABLE pos.order_modifiers (
    order_id    text NOT NULL,
    line_no     integer NOT NULL,
    mod_no      integer NOT NULL CHECK (mod_no >= 0),
    modifier_id text NOT NULL,
    quantity    integer NOT NULL CHECK (quantity >= 1),
    total       numeric(14, 3) NOT NULL CHECK (total >= 0),
    note        text,
    PRIMARY KEY (order_id, line_no, mod_no),
    FOREIGN KEY (order_id, line_no) REFERENCES pos.order_products (order_id, line_no) ON DELETE CASCADE
);

-- Ids, states and hashes compare byte by byte (COLLATE "C"); names, notes and emails keep the database's collation
-- (emails are matched by lower(), which lowers letters beyond ASCII only there: "C" lowers A to Z alone).
-- The hub's rule (sql/hub/0023_identifiers_compare_bytes.sql): an id has no order but its bytes, an index sorted by a
-- locale's rules is wrong once the C library or ICU changes those rules, and a comparison through the locale costs a
-- strcoll(). Equality is the same under both, so no row, key or answer changes. The indexes on the changed columns
-- are rebuilt; no table is rewritten.

ALTER TABLE pos.brands
    ALTER COLUMN id TYPE text COLLATE "C";
ALTER TABLE pos.branches
    ALTER COLUMN id TYPE text COLLATE "C",
    ALTER COLUMN brand_id TYPE text COLLATE "C";
ALTER TABLE pos.products
    ALTER COLUMN brand_id TYPE text COLLATE "C",
    ALTER COLUMN id TYPE text COLLATE "C";
ALTER TABLE pos.product_branches
    ALTER COLUMN brand_id TYPE text COLLATE "C",
    ALTER COLUMN product_id TYPE text COLLATE "C",
    ALTER COLUMN branch_id TYPE text COLLATE "C";
ALTER TABLE pos.modifiers
    ALTER COLUMN brand_id TYPE text COLLATE "C",
    ALTER COLUMN id TYPE text COLLATE "C";
ALTER TABLE pos.users
    ALTER COLUMN brand_id TYPE text COLLATE "C";
ALTER TABLE pos.tokens
    ALTER COLUMN token_hash TYPE text COLLATE "C",
    ALTER COLUMN brand_id TYPE text COLLATE "C";
ALTER TABLE pos.orders
    ALTER COLUMN id TYPE text COLLATE "C",
    ALTER COLUMN brand_id TYPE text COLLATE "C",
    ALTER COLUMN branch_id TYPE text COLLATE "C",
    ALTER COLUMN partner_reference TYPE text COLLATE "C",
    ALTER COLUMN status TYPE text COLLATE "C";
ALTER TABLE pos.order_products
    ALTER COLUMN order_id TYPE text COLLATE "C",
    ALTER COLUMN product_id TYPE text COLLATE "C";
ALTER TABLE pos.order_modifiers
    ALTER COLUMN order_id TYPE text COLLATE "C",
    ALTER COLUMN modifier_id TYPE text COLLATE "C";

#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <pqxx/connection_base>
#include <pqxx/result>
#include <pqxx/transaction_base>
#include <string>
#include <string_view>
#include <utility>

// Every SQL statement of orderpos, in one place. Each is prepared once per connection (prepare_statements, the
// Pool's on_connect) and run by name with $n parameters only. Money goes in as text from format_money; lists go
// in as one JSON text expanded by jsonb_to_recordset, so that a whole menu or order is one statement per table.
namespace pos::store {

/// One SQL statement and the name it is prepared under.
struct Statement {
    const char* name;
    const char* sql;
};

namespace sql {

// Tokens ----------------------------------------------------------------------------------------------------

/// $1 token hash -> brand_id, for a token that has not expired. Touches last_used_at at most once a minute per token,
/// so that a busy token does not rewrite its row on every request.
inline constexpr Statement kAuthenticateToken{"pos_authenticate_token", R"(
WITH t AS (SELECT id, brand_id, last_used_at FROM pos.tokens WHERE token_hash = $1 AND expires_at > now()),
touched AS (
    UPDATE pos.tokens AS k SET last_used_at = now() FROM t
    WHERE k.id = t.id AND (t.last_used_at IS NULL OR t.last_used_at < now() - interval '60 seconds'))
SELECT brand_id FROM t)"};

/// $1 token hash, $2 user id, $3 brand id, $4 lifetime in seconds.
inline constexpr Statement kInsertToken{"pos_insert_token", R"(
INSERT INTO pos.tokens (token_hash, user_id, brand_id, expires_at)
VALUES ($1, $2, $3, now() + make_interval(secs => $4)))"};

/// $1 at most this many: deletes expired tokens (bounded, so that one login never waits on a long delete).
inline constexpr Statement kPurgeExpiredTokens{"pos_purge_expired_tokens", R"(
DELETE FROM pos.tokens WHERE id IN (
    SELECT id FROM pos.tokens WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED))"};

// Users and logins ------------------------------------------------------------------------------------------

/// $1 email, $2 password hash, $3 brand -> id; no row when the email (any case) is taken.
inline constexpr Statement kInsertUser{"pos_insert_user", R"(
INSERT INTO pos.users (email, password_hash, brand_id) VALUES ($1, $2, $3)
ON CONFLICT ((lower(email))) DO NOTHING
RETURNING id)"};

/// $1 email -> id, brand_id, password_hash.
inline constexpr Statement kFindUser{
    "pos_find_user", "SELECT id, brand_id, password_hash FROM pos.users WHERE lower(email) = lower($1)"};

/// $1 email -> failure_count, seconds since last_failure_at. Creates the row (count 0) when missing and locks it
/// until the end of the transaction, so that concurrent attempts for one email are counted one after another.
inline constexpr Statement kLockLoginFailures{"pos_lock_login_failures", R"(
INSERT INTO pos.login_failures AS f (email, failure_count, last_failure_at) VALUES (lower($1), 0, now())
ON CONFLICT (email) DO UPDATE SET email = f.email
RETURNING failure_count, floor(extract(epoch FROM now() - last_failure_at))::bigint)"};

/// $1 email, $2 failure count to store (this attempt included).
inline constexpr Statement kCountLoginAttempt{
    "pos_count_login_attempt",
    "UPDATE pos.login_failures SET failure_count = $2, last_failure_at = now() WHERE email = lower($1)"};

/// $1 window in seconds, $2 at most this many: deletes failure rows whose last failure is older than the
/// throttle window (they no longer count: decide_login_attempt), so that emails never seen again do not pile up.
inline constexpr Statement kPurgeLoginFailures{"pos_purge_login_failures", R"(
DELETE FROM pos.login_failures WHERE email IN (
    SELECT email FROM pos.login_failures WHERE last_failure_at < now() - make_interval(secs => $1)
    ORDER BY last_failure_at LIMIT $2 FOR UPDATE SKIP LOCKED))"};

/// $1 email: a good login clears the count.
inline constexpr Statement kClearLoginFailures{"pos_clear_login_failures",
                                               "DELETE FROM pos.login_failures WHERE email = lower($1)"};

// Menu ------------------------------------------------------------------------------------------------------

/// $1 brand id -> one row when it exists.
inline constexpr Statement kBrandExists{"pos_brand_exists", "SELECT 1 FROM pos.brands WHERE id = $1"};

/// Serialises concurrent menu loads.
inline constexpr Statement kLockMenu{"pos_lock_menu", "SELECT pg_advisory_xact_lock(hashtext('orderpos.menu_load'))"};

/// $1 [{ord, id, brand_id}] -> ord, brand_id of branches that exist under another brand.
inline constexpr Statement kBranchBrandConflicts{"pos_branch_brand_conflicts", R"(
SELECT x.ord, b.brand_id
FROM jsonb_to_recordset($1::jsonb) AS x(ord int, id text, brand_id text)
JOIN pos.branches b ON b.id = x.id
WHERE b.brand_id <> x.brand_id
ORDER BY x.ord)"};

// The upserts write a row only when something differs, so that loading the same file again changes nothing;
// each returns one row per written row, `inserted` telling an insert from an update.

/// $1 [{id, name}].
inline constexpr Statement kUpsertBrands{"pos_upsert_brands", R"(
INSERT INTO pos.brands AS t (id, name)
SELECT x.id, x.name FROM jsonb_to_recordset($1::jsonb) AS x(id text, name text)
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, updated_at = now()
WHERE t.name IS DISTINCT FROM EXCLUDED.name
RETURNING (xmax = 0) AS inserted)"};

/// $1 [{id, brand_id, name}]; brand changes were refused before (kBranchBrandConflicts).
inline constexpr Statement kUpsertBranches{"pos_upsert_branches", R"(
INSERT INTO pos.branches AS t (id, brand_id, name)
SELECT x.id, x.brand_id, x.name FROM jsonb_to_recordset($1::jsonb) AS x(id text, brand_id text, name text)
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, updated_at = now()
WHERE t.name IS DISTINCT FROM EXCLUDED.name
RETURNING (xmax = 0) AS inserted)"};

/// The upsert of a priced menu table (pos.products and pos.modifiers have the same columns and the same rule): $1
/// [{brand_id, id, name, price}] with price as decimal text. Its text, put together at compile time, is the same
/// for both tables but for the table's name.
template <std::size_t N>
constexpr auto priced_upsert_sql(const char (&table)[N]) {
    constexpr std::string_view kHead = "\nINSERT INTO ";
    constexpr std::string_view kTail = R"( AS t (brand_id, id, name, price)
SELECT x.brand_id, x.id, x.name, x.price::numeric
FROM jsonb_to_recordset($1::jsonb) AS x(brand_id text, id text, name text, price text)
ON CONFLICT (brand_id, id) DO UPDATE SET name = EXCLUDED.name, price = EXCLUDED.price, updated_at = now()
WHERE (t.name, t.price) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.price)
RETURNING (xmax = 0) AS inserted)";
    std::array<char, kHead.size() + (N - 1) + kTail.size() + 1> text{};  // ends in '\0'
    std::size_t at = 0;
    for (const std::string_view part : {kHead, std::string_view(table, N - 1), kTail})
        for (const char c : part) text[at++] = c;
    return text;
}
inline constexpr auto kUpsertProductsText = priced_upsert_sql("pos.products");
inline constexpr auto kUpsertModifiersText = priced_upsert_sql("pos.modifiers");

inline constexpr Statement kUpsertProducts{"pos_upsert_products", kUpsertProductsText.data()};
inline constexpr Statement kUpsertModifiers{"pos_upsert_modifiers", kUpsertModifiersText.data()};

/// $1 [brand ids of the file], $2 [{brand_id, product_id, branch_id}]: availability the file no longer lists.
inline constexpr Statement kDeleteStaleProductBranches{"pos_delete_stale_product_branches", R"(
DELETE FROM pos.product_branches AS pb
WHERE pb.brand_id IN (SELECT jsonb_array_elements_text($1::jsonb))
  AND NOT EXISTS (
      SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS x(brand_id text, product_id text, branch_id text)
      WHERE x.brand_id = pb.brand_id AND x.product_id = pb.product_id AND x.branch_id = pb.branch_id))"};

/// $1 [{brand_id, product_id, branch_id}].
inline constexpr Statement kInsertProductBranches{"pos_insert_product_branches", R"(
INSERT INTO pos.product_branches (brand_id, product_id, branch_id)
SELECT x.brand_id, x.product_id, x.branch_id
FROM jsonb_to_recordset($1::jsonb) AS x(brand_id text, product_id text, branch_id text)
ON CONFLICT DO NOTHING)"};

/// $1 [brand ids of the file], $2 [{brand_id, id}]: products of those brands that the file no longer lists.
inline constexpr Statement kDeleteStaleProducts{"pos_delete_stale_products", R"(
DELETE FROM pos.products AS p
WHERE p.brand_id IN (SELECT jsonb_array_elements_text($1::jsonb))
  AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS x(brand_id text, id text)
                  WHERE x.brand_id = p.brand_id AND x.id = p.id))"};

/// $1 [brand ids of the file], $2 [{brand_id, id}]: modifiers of those brands that the file no longer lists.
inline constexpr Statement kDeleteStaleModifiers{"pos_delete_stale_modifiers", R"(
DELETE FROM pos.modifiers AS m
WHERE m.brand_id IN (SELECT jsonb_array_elements_text($1::jsonb))
  AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS x(brand_id text, id text)
                  WHERE x.brand_id = m.brand_id AND x.id = m.id))"};

// Orders ----------------------------------------------------------------------------------------------------

/// $1 brand, $2 partner reference -> id.
inline constexpr Statement kFindOrder{"pos_find_order",
                                      "SELECT id FROM pos.orders WHERE brand_id = $1 AND partner_reference = $2"};

/// $1 id, $2 brand, $3 branch, $4 partner reference, $5 status, $6 note, $7 subtotal, $8 tax, $9 total (decimal
/// text), $10 customer name, $11 customer phone, $12 raw body -> id; no row when the reference was used.
inline constexpr Statement kInsertOrder{"pos_insert_order", R"(
INSERT INTO pos.orders (id, brand_id, branch_id, partner_reference, status, note, subtotal, tax, total,
                        customer_name, customer_phone, raw_request)
VALUES ($1, $2, $3, $4, $5, $6, $7::numeric, $8::numeric, $9::numeric, $10, $11, $12::jsonb)
ON CONFLICT (brand_id, partner_reference) DO NOTHING
RETURNING id)"};

/// $1 order id, $2 [{line_no, product_id, quantity, total, note}] with total as decimal text.
inline constexpr Statement kInsertOrderProducts{"pos_insert_order_products", R"(
INSERT INTO pos.order_products (order_id, line_no, product_id, quantity, total, note)
SELECT $1, x.line_no, x.product_id, x.quantity, x.total::numeric, x.note
FROM jsonb_to_recordset($2::jsonb) AS x(line_no int, product_id text, quantity int, total text, note text))"};

/// $1 order id, $2 [{line_no, mod_no, modifier_id, quantity, total, note}] with total as decimal text.
inline constexpr Statement kInsertOrderModifiers{"pos_insert_order_modifiers", R"(
INSERT INTO pos.order_modifiers (order_id, line_no, mod_no, modifier_id, quantity, total, note)
SELECT $1, x.line_no, x.mod_no, x.modifier_id, x.quantity, x.total::numeric, x.note
FROM jsonb_to_recordset($2::jsonb)
     AS x(line_no int, mod_no int, modifier_id text, quantity int, total text, note text))"};

/// The menu of one or many orders (menu_views). $1 [{i, brand_id, branch_id, products: [ids], modifiers: [ids]}]
/// -> i, kind, id, branch_id: for each entry, the part of the brand's menu that its order names ('branch' when
/// branch_id is a branch of the brand; 'product' and 'available' rows for the named products; 'modifier' rows for
/// the named modifiers). Each lookup is a LIMIT 1 subquery on a unique key, so the plan probes per
/// entry whatever the planner guesses of the array's length. Repeated references are not looked up here: a plan
/// cached while pos.orders was small scans it whole until the next ANALYZE (20 ms a batch in the benchmark);
/// kInsertOrders finds them through its unique key.
inline constexpr Statement kMenuForOrders{"pos_menu_for_orders", R"(
WITH x AS MATERIALIZED (
    SELECT * FROM jsonb_to_recordset($1::jsonb)
        AS x(i int, brand_id text, branch_id text, products jsonb, modifiers jsonb)
)
SELECT x.i, 'branch' AS kind, b.id, NULL AS branch_id FROM x CROSS JOIN LATERAL (
    SELECT id FROM pos.branches b WHERE b.brand_id = x.brand_id AND b.id = x.branch_id LIMIT 1) b
UNION ALL
SELECT x.i, 'product', p.id, NULL FROM x CROSS JOIN LATERAL jsonb_array_elements_text(x.products) AS n(id)
CROSS JOIN LATERAL (SELECT id FROM pos.products p WHERE p.brand_id = x.brand_id AND p.id = n.id LIMIT 1) p
UNION ALL
SELECT x.i, 'available', pb.product_id, pb.branch_id
FROM x CROSS JOIN LATERAL jsonb_array_elements_text(x.products) AS n(id)
CROSS JOIN LATERAL (SELECT product_id, branch_id FROM pos.product_branches pb
                    WHERE pb.brand_id = x.brand_id AND pb.branch_id = x.branch_id AND pb.product_id = n.id
                    LIMIT 1) pb
UNION ALL
SELECT x.i, 'modifier', m.id, NULL FROM x CROSS JOIN LATERAL jsonb_array_elements_text(x.modifiers) AS n(id)
CROSS JOIN LATERAL (SELECT id FROM pos.modifiers m WHERE m.brand_id = x.brand_id AND m.id = n.id LIMIT 1) m)"};

/// Many orders with their lines and modifiers in one statement (run in autocommit: one commit for the batch).
/// $1 [{i, id, brand_id, branch_id, reference, status, note, subtotal, tax, total, customer_name, customer_phone,
/// raw, products: [{line_no, product_id, quantity, total, note}], modifiers: [{line_no, mod_no, modifier_id,
/// quantity, total, note}]}] with money as decimal text -> i, id of each order stored; an entry whose reference
/// was already used (by another transaction or an earlier entry) stores nothing and returns no row.
inline constexpr Statement kInsertOrders{"pos_insert_orders", R"(
WITH x AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb)
        AS x(i int, id text, brand_id text, branch_id text, reference text, status text, note text, subtotal text,
             tax text, total text, customer_name text, customer_phone text, raw jsonb, products jsonb,
             modifiers jsonb)
), stored AS (
    INSERT INTO pos.orders (id, brand_id, branch_id, partner_reference, status, note, subtotal, tax, total,
                            customer_name, customer_phone, raw_request)
    SELECT id, brand_id, branch_id, reference, status, note, subtotal::numeric, tax::numeric, total::numeric,
           customer_name, customer_phone, raw
    FROM x ORDER BY i
    ON CONFLICT (brand_id, partner_reference) DO NOTHING
    RETURNING id
), lines AS (
    INSERT INTO pos.order_products (order_id, line_no, product_id, quantity, total, note)
    SELECT x.id, l.line_no, l.product_id, l.quantity, l.total::numeric, l.note
    FROM x JOIN stored s ON s.id = x.id
    CROSS JOIN LATERAL jsonb_to_recordset(x.products)
        AS l(line_no int, product_id text, quantity int, total text, note text)
), mods AS (
    INSERT INTO pos.order_modifiers (order_id, line_no, mod_no, modifier_id, quantity, total, note)
    SELECT x.id, m.line_no, m.mod_no, m.modifier_id, m.quantity, m.total::numeric, m.note
    FROM x JOIN stored s ON s.id = x.id
    CROSS JOIN LATERAL jsonb_to_recordset(x.modifiers)
        AS m(line_no int, mod_no int, modifier_id text, quantity int, total text, note text)
)
SELECT x.i, x.id FROM x JOIN stored s ON s.id = x.id)"};

/// $1 limit -> the newest orders: summary columns, then the whole order with its lines and modifiers as JSON.
inline constexpr Statement kListOrders{"pos_list_orders", R"(
SELECT o.id, to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at, o.brand_id,
       o.branch_id, o.partner_reference, o.status, o.total::text,
       (SELECT count(*) FROM pos.order_products p WHERE p.order_id = o.id) AS lines,
       jsonb_build_object(
           'id', o.id, 'brand_id', o.brand_id, 'branch_id', o.branch_id,
           'partner_reference', o.partner_reference, 'status', o.status, 'note', o.note,
           'subtotal', o.subtotal, 'tax', o.tax, 'total', o.total,
           'customer', jsonb_build_object('name', o.customer_name, 'phone', o.customer_phone),
           'created_at', to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'products', COALESCE((
               SELECT jsonb_agg(jsonb_build_object(
                   'id', p.product_id, 'quantity', p.quantity, 'total', p.total, 'note', p.note,
                   'modifiers', COALESCE((
                       SELECT jsonb_agg(jsonb_build_object('id', m.modifier_id, 'quantity', m.quantity,
                                                           'total', m.total, 'note', m.note) ORDER BY m.mod_no)
                       FROM pos.order_modifiers m
                       WHERE m.order_id = p.order_id AND m.line_no = p.line_no), '[]'::jsonb))
                   ORDER BY p.line_no)
               FROM pos.order_products p WHERE p.order_id = o.id), '[]'::jsonb))::text
FROM pos.orders o
ORDER BY o.created_at DESC, o.id DESC
LIMIT $1)"};

}  // namespace sql

/// Every statement above, for prepare_statements.
inline constexpr std::array kAllStatements{
    &sql::kAuthenticateToken,
    &sql::kInsertToken,
    &sql::kPurgeExpiredTokens,
    &sql::kInsertUser,
    &sql::kFindUser,
    &sql::kLockLoginFailures,
    &sql::kCountLoginAttempt,
    &sql::kClearLoginFailures,
    &sql::kPurgeLoginFailures,
    &sql::kBrandExists,
    &sql::kLockMenu,
    &sql::kBranchBrandConflicts,
    &sql::kUpsertBrands,
    &sql::kUpsertBranches,
    &sql::kUpsertProducts,
    &sql::kUpsertModifiers,
    &sql::kDeleteStaleProductBranches,
    &sql::kInsertProductBranches,
    &sql::kDeleteStaleProducts,
    &sql::kDeleteStaleModifiers,
    &sql::kFindOrder,
    &sql::kInsertOrder,
    &sql::kInsertOrderProducts,
    &sql::kInsertOrderModifiers,
    &sql::kMenuForOrders,
    &sql::kInsertOrders,
    &sql::kListOrders,
};

/// Defines every statement of kAllStatements on `c` (libpqxx sends each to the server on first use). Use as the
/// Pool's on_connect; CLI commands call it on their one connection.
inline void prepare_statements(pqxx::connection_base& c) {
    for (const Statement* s : kAllStatements) c.prepare(s->name, s->sql);
}

/// Runs prepared statement `s` in `tx`.
template <class... Args>
pqxx::result exec(pqxx::transaction_base& tx, const Statement& s, Args&&... args) {
    return tx.exec_prepared(s.name, std::forward<Args>(args)...);
}

/// An optional string as a statement parameter: NULL when absent.
inline const char* nullable(const std::optional<std::string>& value) { return value ? value->c_str() : nullptr; }

}  // namespace pos::store

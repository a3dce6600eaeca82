#include "hub/db/queries.hpp"

#include <pqxx/pqxx>

namespace hub::db {
namespace {

constexpr const char* kPartnerByKeyHashSql = R"(
SELECT id, label, time_zone, signing, disabled_at IS NOT NULL
FROM hub.partners WHERE key_hash = $1)";

// The order document carries every field as JSON so that null-able fields need no special parameters; money is
// text with three decimals. Times are converted here: a time without offset is read in the partner's time zone.
// Parent and child rows are inserted by one statement: foreign keys are checked at its end.
constexpr const char* kInsertOrderSql = R"(
WITH d AS (SELECT $4::jsonb AS j),
b AS (SELECT id, brand_id, schedule_lead_minutes FROM hub.branches WHERE id = (SELECT j->>'branch_id' FROM d)),
p AS (SELECT time_zone FROM hub.partners WHERE id = $2),
t AS (
    SELECT CASE WHEN (j->>'event_time_has_offset')::boolean THEN (j->>'event_time')::timestamptz
                ELSE (j->>'event_time')::timestamp AT TIME ZONE p.time_zone END AS event_time,
           CASE WHEN j->>'schedule_date' IS NULL THEN NULL
                WHEN (j->>'schedule_date_has_offset')::boolean THEN (j->>'schedule_date')::timestamptz
                ELSE (j->>'schedule_date')::timestamp AT TIME ZONE p.time_zone END AS schedule_date
    FROM d, p
),
ins AS (
    INSERT INTO hub.orders (id, partner_id, external_id, branch_id, brand_id, payload_hash, event_time,
                            payment_method, order_type, note, subtotal, tax, discount, total, is_schedule,
                            schedule_date, car_color, car_plate_number, car_plate_letters, car_brand,
                            customer_name, customer_phone, customer_address, status_time)
    SELECT $1, $2, j->>'external_id', b.id, b.brand_id, $3, t.event_time,
           j->>'payment_method', j->>'order_type', j->>'note', (j->>'subtotal')::numeric, (j->>'tax')::numeric,
           (j->>'discount')::numeric, (j->>'total')::numeric, (j->>'is_schedule')::boolean, t.schedule_date,
           j->'car_data'->>'color', j->'car_data'->>'plate_number', j->'car_data'->>'plate_letters',
           j->'car_data'->>'car_brand', j->'customer'->>'name', j->'customer'->>'phone',
           j->'customer'->>'address', t.event_time
    FROM d, b, t
    ON CONFLICT (partner_id, external_id) DO NOTHING
    RETURNING id, branch_id, event_time, schedule_date
),
items AS (
    INSERT INTO hub.order_items (order_id, line_no, item_id, quantity, price, note)
    SELECT ins.id, x.line_no, x.id, x.quantity, x.price, x.note
    FROM ins, d, jsonb_to_recordset(d.j->'items') AS x(line_no int, id text, quantity int, price numeric, note text)
),
options AS (
    INSERT INTO hub.order_item_options (order_id, line_no, option_no, option_id, price, quantity)
    SELECT ins.id, x.line_no, x.option_no, x.id, x.price, x.quantity
    FROM ins, d, jsonb_to_recordset(d.j->'options')
                 AS x(line_no int, option_no int, id text, price numeric, quantity int)
),
log AS (
    INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied)
    SELECT ins.id, ins.branch_id, $2, 'received', 'platform', ins.event_time, true FROM ins
),
job AS (
    INSERT INTO hub.forward_jobs (order_id, due_at)
    SELECT ins.id, CASE WHEN ins.schedule_date IS NULL THEN now()
                        ELSE greatest(now(), ins.schedule_date - make_interval(mins => b.schedule_lead_minutes)) END
    FROM ins, b
)
SELECT (SELECT id FROM ins), EXISTS (SELECT 1 FROM b))";

constexpr const char* kOrderByExternalIdSql = R"(
SELECT id, payload_hash FROM hub.orders WHERE partner_id = $1 AND external_id = $2)";

constexpr const char* kInsertInboxSql = R"(
INSERT INTO hub.inbox (partner_id, request_id, event, external_id, order_id, headers, body, http_status, outcome,
                       error_code, replay_of)
VALUES ($1, $2, NULLIF($3, ''), NULLIF($4, ''), NULLIF($5, ''), $6::jsonb, $7, $8, $9, NULLIF($10, ''),
        NULLIF($11, '')::bigint)
RETURNING id)";

// Microseconds since the epoch: exact (extract returns numeric), and compared in C++ by the status rule.
#define ORDER_FOR_UPDATE(WHERE)                                                                              \
    "SELECT o.id, o.branch_id, o.delivery_status, (extract(epoch FROM o.status_time) * 1000000)::bigint, "     \
    "(extract(epoch FROM CASE WHEN $4::boolean THEN $3::timestamptz "                                         \
    "ELSE $3::timestamp AT TIME ZONE p.time_zone END) * 1000000)::bigint "                                    \
    "FROM hub.orders o JOIN hub.partners p ON p.id = o.partner_id WHERE o.partner_id = $1 AND " WHERE         \
    " FOR UPDATE OF o"

constexpr const char* kOrderForUpdateByExternalIdSql = ORDER_FOR_UPDATE("o.external_id = $2");
constexpr const char* kOrderForUpdateByIdSql = ORDER_FOR_UPDATE("o.id = $2");
#undef ORDER_FOR_UPDATE

constexpr const char* kInsertPlatformStatusSql = R"(
INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied)
VALUES ($1, $2, $3, $4, 'platform', 'epoch'::timestamptz + $5::bigint * interval '1 microsecond', $6)
ON CONFLICT (order_id, status, event_time) WHERE source = 'platform' DO NOTHING
RETURNING id)";

constexpr const char* kApplyStatusSql = R"(
UPDATE hub.orders SET delivery_status = $2, status_time = 'epoch'::timestamptz + $3::bigint * interval '1 microsecond'
WHERE id = $1)";

constexpr const char* kCancelPendingJobSql = R"(
UPDATE hub.forward_jobs SET state = 'cancelled', updated_at = now(), last_error = 'cancelled before it was sent'
WHERE order_id = $1 AND state = 'pending')";

}  // namespace

void prepare_all(pqxx::connection_base& conn) {
    conn.prepare(kPartnerByKeyHash, kPartnerByKeyHashSql);
    conn.prepare(kInsertOrder, kInsertOrderSql);
    conn.prepare(kOrderByExternalId, kOrderByExternalIdSql);
    conn.prepare(kInsertInbox, kInsertInboxSql);
    conn.prepare(kOrderForUpdateByExternalId, kOrderForUpdateByExternalIdSql);
    conn.prepare(kOrderForUpdateById, kOrderForUpdateByIdSql);
    conn.prepare(kInsertPlatformStatus, kInsertPlatformStatusSql);
    conn.prepare(kApplyStatus, kApplyStatusSql);
    conn.prepare(kCancelPendingJob, kCancelPendingJobSql);
}

}  // namespace hub::db

namespace hub::db {

void prepare_serving(pqxx::connection_base& conn) {
    {
        pqxx::nontransaction nt(conn);
        // Before `orderhub migrate` the role does not exist; /readyz then reports the missing migrations.
        if (nt.exec1("SELECT to_regrole('orderhub_app') IS NOT NULL")[0].as<bool>()) nt.exec("SET ROLE orderhub_app");
    }
    prepare_all(conn);
}

}  // namespace hub::db

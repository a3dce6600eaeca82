#include "hub/db/queries.hpp"

#include <pqxx/pqxx>

namespace hub::db {
namespace {

constexpr const char* kPartnerByKeyHashSql = R"(
SELECT id, label, time_zone, signing, disabled_at IS NOT NULL, rate_per_second::float8, rate_burst
FROM hub.partners WHERE key_hash = $1)";

constexpr const char* kSigningSecretsByPartnerSql = R"(
SELECT secret_sealed FROM hub.partner_signing_secrets
WHERE partner_id = $1 AND (expires_at IS NULL OR expires_at > now())
ORDER BY created_at DESC, id DESC)";

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
    INSERT INTO hub.forward_jobs (order_id, brand_id, due_at, due_since)
    SELECT ins.id, b.brand_id, due, due
    FROM ins, b, LATERAL (SELECT CASE WHEN ins.schedule_date IS NULL THEN now()
                                      ELSE greatest(now(), ins.schedule_date - make_interval(mins => b.schedule_lead_minutes))
                                      END AS due) w
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

// x: the entries; c: the order_created entries with their branch and times; f: the first entry of each
// (partner, payload.id) with a known branch, the one to insert (in key order, so that concurrent batches take
// their unique-index locks in the same order); done: those actually inserted (ON CONFLICT skips a payload.id
// stored before, or by a concurrent batch). Rows inserted by this statement are not visible to its own reads:
// a payload.id that another entry of the batch inserted is found in `done`, one stored earlier in hub.orders.
// Inbox ids are drawn first (nextval, once per row of a materialized CTE) so that each entry learns its own.
constexpr const char* kInsertOrdersSql = R"(
WITH x AS MATERIALIZED (
    SELECT * FROM jsonb_to_recordset($1::jsonb)
        AS x(i int, id text, p text, h text, d jsonb, rq text, ev text, ex text, hd text, bo int, bl int, st int,
             oc text, ec text, ro text)
),
c AS MATERIALIZED (
    SELECT x.i, x.id, x.p, x.h, x.d AS j, x.d->>'external_id' AS ext, b.id AS branch_id, b.brand_id,
           b.schedule_lead_minutes AS lead,
           CASE WHEN (x.d->>'event_time_has_offset')::boolean THEN (x.d->>'event_time')::timestamptz
                ELSE (x.d->>'event_time')::timestamp AT TIME ZONE pa.time_zone END AS event_time,
           CASE WHEN x.d->>'schedule_date' IS NULL THEN NULL
                WHEN (x.d->>'schedule_date_has_offset')::boolean THEN (x.d->>'schedule_date')::timestamptz
                ELSE (x.d->>'schedule_date')::timestamp AT TIME ZONE pa.time_zone END AS schedule_date
    FROM x JOIN hub.partners pa ON pa.id = x.p
    LEFT JOIN hub.branches b ON b.id = x.d->>'branch_id'
    WHERE x.d IS NOT NULL
),
f AS MATERIALIZED (
    SELECT DISTINCT ON (p, ext) * FROM c WHERE branch_id IS NOT NULL ORDER BY p, ext, i
),
ins AS (
    INSERT INTO hub.orders (id, partner_id, external_id, branch_id, brand_id, payload_hash, event_time,
                            payment_method, order_type, note, subtotal, tax, discount, total, is_schedule,
                            schedule_date, car_color, car_plate_number, car_plate_letters, car_brand,
                            customer_name, customer_phone, customer_address, status_time)
    SELECT id, p, ext, branch_id, brand_id, h, event_time,
           j->>'payment_method', j->>'order_type', j->>'note', (j->>'subtotal')::numeric, (j->>'tax')::numeric,
           (j->>'discount')::numeric, (j->>'total')::numeric, (j->>'is_schedule')::boolean, schedule_date,
           j->'car_data'->>'color', j->'car_data'->>'plate_number', j->'car_data'->>'plate_letters',
           j->'car_data'->>'car_brand', j->'customer'->>'name', j->'customer'->>'phone',
           j->'customer'->>'address', event_time
    FROM f ORDER BY p, ext
    ON CONFLICT (partner_id, external_id) DO NOTHING
    RETURNING id
),
done AS MATERIALIZED (
    SELECT f.* FROM f JOIN ins ON ins.id = f.id
),
items AS (
    INSERT INTO hub.order_items (order_id, line_no, item_id, quantity, price, note)
    SELECT done.id, r.line_no, r.id, r.quantity, r.price, r.note
    FROM done, jsonb_to_recordset(done.j->'items') AS r(line_no int, id text, quantity int, price numeric, note text)
),
options AS (
    INSERT INTO hub.order_item_options (order_id, line_no, option_no, option_id, price, quantity)
    SELECT done.id, r.line_no, r.option_no, r.id, r.price, r.quantity
    FROM done, jsonb_to_recordset(done.j->'options')
               AS r(line_no int, option_no int, id text, price numeric, quantity int)
),
log AS (
    INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied)
    SELECT id, branch_id, p, 'received', 'platform', event_time, true FROM done
),
job AS (
    INSERT INTO hub.forward_jobs (order_id, brand_id, due_at, due_since)
    SELECT id, brand_id, due, due
    FROM done, LATERAL (SELECT CASE WHEN schedule_date IS NULL THEN now()
                                    ELSE greatest(now(), schedule_date - make_interval(mins => lead)) END AS due) w
),
o AS MATERIALIZED (
    SELECT x.i,
           CASE WHEN x.d IS NULL THEN 'record'
                WHEN c.i IS NULL THEN 'pending'
                WHEN c.branch_id IS NULL THEN 'unknown_branch'
                WHEN dn.id = c.id THEN 'created'
                WHEN coalesce(dn.h, e.payload_hash) = c.h THEN 'duplicate'
                WHEN coalesce(dn.id, e.id) IS NOT NULL THEN 'conflict'
                ELSE 'pending' END AS kind,
           coalesce(dn.id, e.id) AS winner
    FROM x
    LEFT JOIN c ON c.i = x.i
    LEFT JOIN done dn ON dn.p = c.p AND dn.ext = c.ext
    LEFT JOIN LATERAL (
        SELECT ho.id, ho.payload_hash FROM hub.orders ho
        WHERE dn.id IS NULL AND c.branch_id IS NOT NULL AND ho.partner_id = c.p AND ho.external_id = c.ext LIMIT 1
    ) e ON true
),
ids AS MATERIALIZED (
    SELECT o.i, o.kind, CASE WHEN o.kind IN ('created', 'duplicate') THEN o.winner END AS order_id,
           nextval('hub.inbox_id_seq') AS inbox_id
    FROM o WHERE o.kind <> 'pending'
),
inbox AS (
    INSERT INTO hub.inbox (id, partner_id, request_id, event, external_id, order_id, headers, body, http_status,
                           outcome, error_code, replay_of)
    OVERRIDING SYSTEM VALUE
    SELECT ids.inbox_id, x.p, x.rq, NULLIF(x.ev, ''), NULLIF(x.ex, ''), ids.order_id, x.hd::jsonb,
           substring($2::bytea FROM x.bo + 1 FOR x.bl),
           CASE ids.kind WHEN 'record' THEN x.st WHEN 'conflict' THEN 409 WHEN 'unknown_branch' THEN 422 ELSE 200 END,
           CASE ids.kind WHEN 'record' THEN x.oc WHEN 'created' THEN 'stored' WHEN 'unknown_branch' THEN 'rejected'
                         ELSE ids.kind END,
           CASE ids.kind WHEN 'record' THEN NULLIF(x.ec, '') WHEN 'conflict' THEN 'order_id_conflict'
                         WHEN 'unknown_branch' THEN 'unknown_branch' END,
           NULLIF(x.ro, '')::bigint
    FROM ids JOIN x ON x.i = ids.i
)
SELECT o.i, o.kind, ids.order_id, ids.inbox_id FROM o LEFT JOIN ids ON ids.i = o.i)";

// Microseconds since the epoch: exact (extract returns numeric), and compared in C++ by the status rule.
#define ORDER_FOR_UPDATE(WHERE)                                                                            \
    "SELECT o.id, o.branch_id, o.delivery_status, (extract(epoch FROM o.status_time) * 1000000)::bigint, " \
    "(extract(epoch FROM CASE WHEN $4::boolean THEN $3::timestamptz "                                      \
    "ELSE $3::timestamp AT TIME ZONE p.time_zone END) * 1000000)::bigint "                                 \
    "FROM hub.orders o JOIN hub.partners p ON p.id = o.partner_id WHERE o.partner_id = $1 AND " WHERE      \
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

// Claims are fair across POS connections and never touch a blocked one: each brand's due jobs and expired leases
// are read through its own index walks (forward_jobs_brand_*_idx), at most its quota of each, brands in random
// order (a brand with expired leases as well may get twice its quota: the forwarder gives back what its host has no
// room for). A brand whose quota is 0 (its host's bulkhead is full or its breaker open) is not read at all, however
// large its backlog. Jobs past the give-up time ($7 seconds after due_since) are left to the sweep that ends them.
// The claimed jobs' orders come back with the claim: one round trip, not a claim and four reads. Each order's lines
// are one JSON array, in line order: [item id, quantity, price in thousandths, note, mapped POS product id or null,
// [[option id, price in thousandths, quantity, mapped POS modifier id or null], ...]].
constexpr const char* kClaimJobsSql = R"(
WITH q AS (
    SELECT b.id AS brand_id, coalesce(x.n, $5::int) AS n
    FROM hub.brands b
    LEFT JOIN json_to_recordset($6::json) AS x(b text, n int) ON x.b = b.id
    WHERE coalesce(x.n, $5::int) > 0
    ORDER BY random()
), expired AS (
    SELECT w.order_id FROM q CROSS JOIN LATERAL (
        SELECT order_id FROM hub.forward_jobs
        WHERE brand_id = q.brand_id AND state = 'in_flight' AND lease_until < now()
          AND due_since >= now() - make_interval(secs => $7::int)
        ORDER BY lease_until LIMIT q.n FOR UPDATE SKIP LOCKED) w
    LIMIT $3
), due AS (
    SELECT w.order_id FROM q CROSS JOIN LATERAL (
        SELECT order_id FROM hub.forward_jobs
        WHERE brand_id = q.brand_id AND state = 'pending' AND due_at <= now()
          AND due_since >= now() - make_interval(secs => $7::int)
        ORDER BY due_at LIMIT q.n FOR UPDATE SKIP LOCKED) w
    LIMIT $3
), picked AS (
    SELECT order_id FROM expired UNION ALL SELECT order_id FROM due LIMIT $3
), claimed AS (
    UPDATE hub.forward_jobs j
    SET state = 'in_flight', claimed_by = $1, lease_until = now() + make_interval(secs => $2::int),
        attempts = j.attempts + 1, updated_at = now()
    FROM picked
    WHERE j.order_id = picked.order_id
    RETURNING j.order_id, j.attempts
)
SELECT o.id, cl.attempts, coalesce(b.pos_branch_id, b.id), o.brand_id, p.label, o.external_id, o.note,
       (o.subtotal * 1000)::bigint, (o.tax * 1000)::bigint, (o.total * 1000)::bigint, b.auto_accept,
       o.customer_name, o.customer_phone, o.delivery_status,
       c.base_url, c.token_sealed, c.email, c.password_sealed, c.ca_file, c.environment,
       extract(epoch FROM o.created_at)::float8, o.is_schedule,
       (SELECT json_agg(json_build_array(
                   i.item_id, i.quantity, (i.price * 1000)::bigint, i.note, mi.pos_id,
                   (SELECT coalesce(json_agg(json_build_array(x.option_id, (x.price * 1000)::bigint, x.quantity,
                                                              mo.pos_id) ORDER BY x.option_no), '[]')
                    FROM hub.order_item_options x
                    LEFT JOIN hub.item_mappings mo
                           ON mo.partner_id = o.partner_id AND mo.kind = 'option' AND mo.external_id = x.option_id
                    WHERE x.order_id = i.order_id AND x.line_no = i.line_no)) ORDER BY i.line_no)
        FROM hub.order_items i
        LEFT JOIN hub.item_mappings mi ON mi.partner_id = o.partner_id AND mi.kind = 'item' AND mi.external_id = i.item_id
        WHERE i.order_id = o.id)
FROM claimed cl
JOIN hub.orders o ON o.id = cl.order_id
JOIN hub.branches b ON b.id = o.branch_id
JOIN hub.partners p ON p.id = o.partner_id
LEFT JOIN hub.pos_connections c ON c.brand_id = o.brand_id AND c.environment = $4)";

// Served by the partial index forward_jobs_open_idx (sql/hub/0007_observability.sql): delivered and cancelled
// jobs, nearly all of the table, are never read.
constexpr const char* kOutboxDepthSql = R"(
SELECT state, count(*),
       extract(epoch FROM now() - min(CASE WHEN attempts = 0 THEN greatest(due_at, created_at) ELSE created_at END))::float8
FROM hub.forward_jobs WHERE state NOT IN ('delivered', 'cancelled') GROUP BY state)";

constexpr const char* kFinishJobSql = R"(
UPDATE hub.forward_jobs j
SET state = $3,
    due_at = CASE WHEN $3 = 'pending' THEN now() + $4::bigint * interval '1 millisecond' ELSE j.due_at END,
    pos_order_id = coalesce(NULLIF($5, ''), j.pos_order_id), last_error = NULLIF($6, ''),
    claimed_by = NULL, lease_until = NULL, updated_at = now()
FROM hub.orders o
WHERE j.order_id = $1 AND j.claimed_by = $2 AND j.state = 'in_flight' AND o.id = j.order_id
RETURNING o.branch_id, o.partner_id)";

// Many claims ended in one statement (the forwarder's group commit): the jobs still held by $1 move to their new
// state; the attempts are recorded (a retried request's only when its claim is still held: an earlier try may
// have committed them); outcomes an auditor cares about get a status-log row. Returns the jobs that were held.
constexpr const char* kFinishJobsSql = R"(
WITH r AS (
    SELECT * FROM json_to_recordset($2::json)
        AS x(order_id text, state text, delay_ms bigint, pos_order_id text, error text)
), done AS (
    UPDATE hub.forward_jobs j
    SET state = r.state,
        due_at = CASE WHEN r.state = 'pending' THEN now() + r.delay_ms * interval '1 millisecond' ELSE j.due_at END,
        pos_order_id = coalesce(NULLIF(r.pos_order_id, ''), j.pos_order_id), last_error = NULLIF(r.error, ''),
        claimed_by = NULL, lease_until = NULL, updated_at = now()
    FROM r, hub.orders o
    WHERE j.order_id = r.order_id AND j.claimed_by = $1 AND j.state = 'in_flight' AND o.id = j.order_id
    RETURNING j.order_id, o.branch_id, o.partner_id, r.state, r.pos_order_id, r.error
), attempts AS (
    INSERT INTO hub.pos_delivery_attempts (attempted_at, order_id, attempt, url, http_status, latency_ms, outcome,
                                           error, response_excerpt, forwarder)
    SELECT CASE WHEN a.started_us > 0 THEN 'epoch'::timestamptz + a.started_us * interval '1 microsecond'
                ELSE now() END,
           a.order_id, a.attempt, a.url, NULLIF(a.http_status, 0), a.latency_ms, a.outcome, NULLIF(a.error, ''),
           NULLIF(a.response_excerpt, ''), $1
    FROM json_to_recordset($3::json) AS a(order_id text, attempt int, url text, http_status int, latency_ms int,
                                          outcome text, error text, response_excerpt text, retrying boolean,
                                          started_us bigint)
    WHERE NOT a.retrying OR a.order_id IN (SELECT order_id FROM done)
), logged AS (
    INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied, actor,
                                      detail)
    SELECT d.order_id, d.branch_id, d.partner_id, s.status, s.source, now(), true,
           CASE WHEN d.state = 'delivered' THEN NULLIF(d.pos_order_id, '') END,
           CASE WHEN d.state <> 'delivered' THEN left(NULLIF(d.error, ''), 500) END
    FROM done d
    JOIN (VALUES ('delivered', 'pos_accepted', 'pos'), ('rejected', 'pos_rejected', 'pos'),
                 ('auth_failed', 'forward_auth_failed', 'hub'), ('dead', 'forward_dead', 'hub'),
                 ('cancelled', 'forward_cancelled', 'hub')) AS s(state, status, source) ON s.state = d.state
)
SELECT order_id FROM done)";

constexpr const char* kInsertAttemptSql = R"(
INSERT INTO hub.pos_delivery_attempts (attempted_at, order_id, attempt, url, http_status, latency_ms, outcome, error,
                                       response_excerpt, forwarder)
VALUES (CASE WHEN $10::bigint > 0 THEN 'epoch'::timestamptz + $10::bigint * interval '1 microsecond' ELSE now() END,
        $1, $2, $3, NULLIF($4, 0), $5, $6, NULLIF($7, ''), NULLIF($8, ''), $9))";

constexpr const char* kInsertStatusRowSql = R"(
INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied, actor, detail)
VALUES ($1, $2, $3, $4, $5, now(), true, NULLIF($6, ''), left(NULLIF($7, ''), 500)))";

constexpr const char* kStoreTokenSql = R"(
UPDATE hub.pos_connections SET token_sealed = $3, updated_at = now() WHERE brand_id = $1 AND environment = $2)";

constexpr const char* kReleaseJobsSql = R"(
UPDATE hub.forward_jobs SET state = 'pending', claimed_by = NULL, lease_until = NULL,
                            attempts = greatest(attempts - 1, 0), updated_at = now()
WHERE claimed_by = $1 AND state = 'in_flight')";

// Jobs given back unsent (a host with no room left, a lease too short for another exchange): not an attempt.
constexpr const char* kGiveBackJobsSql = R"(
UPDATE hub.forward_jobs SET state = 'pending', claimed_by = NULL, lease_until = NULL,
                            attempts = greatest(attempts - 1, 0), updated_at = now()
WHERE claimed_by = $1 AND state = 'in_flight' AND order_id IN (SELECT json_array_elements_text($2::json)))";

constexpr const char* kRenewLeasesSql = R"(
UPDATE hub.forward_jobs SET lease_until = now() + make_interval(secs => $2::int)
WHERE claimed_by = $1 AND state = 'in_flight')";

// A job still pending $1 seconds after it became due is dead, breaker or not (product.md section 10); a batch at a
// time, rows another sweep holds are skipped. The status log gets forward_dead like any other give-up.
constexpr const char* kGiveUpJobsSql = R"(
WITH late AS (
    SELECT order_id FROM hub.forward_jobs
    WHERE state = 'pending' AND due_since < now() - make_interval(secs => $1::int)
    ORDER BY due_since LIMIT 500 FOR UPDATE SKIP LOCKED
), dead AS (
    UPDATE hub.forward_jobs j
    SET state = 'dead', updated_at = now(),
        last_error = 'gave up: not delivered within ' || make_interval(secs => $1::int)::text || ' of being due'
                     || coalesce(' (last error: ' || j.last_error || ')', '')
    FROM late, hub.orders o
    WHERE j.order_id = late.order_id AND o.id = j.order_id
    RETURNING j.order_id, o.branch_id, o.partner_id, j.last_error
), logged AS (
    INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied, detail)
    SELECT order_id, branch_id, partner_id, 'forward_dead', 'hub', now(), true, left(last_error, 500) FROM dead
)
SELECT count(*) FROM dead)";

// Each POS connection of the environment with its due jobs waiting: the forwarder's map of brands to hosts, and
// the queued figure of /metrics.
constexpr const char* kPosHostsSql = R"(
SELECT c.brand_id, c.base_url, c.ca_file,
       (SELECT count(*) FROM hub.forward_jobs j WHERE j.brand_id = c.brand_id AND j.state = 'pending'
                                                  AND j.due_at <= now())
FROM hub.pos_connections c WHERE c.environment = $1)";

// A breaker opened ($4 = 'open') or closed for host $2: every brand of the environment on that host ($5, a JSON
// array) gets the row; an open row keeps the time it first became unreachable.
constexpr const char* kPosHealthSql = R"(
INSERT INTO hub.pos_connection_health AS h (brand_id, environment, host, state, unreachable_since, last_error,
                                            forwarder, updated_at)
SELECT c.brand_id, c.environment, $2, $4, CASE WHEN $4 = 'open' THEN now() END, NULLIF($3, ''), $6, now()
FROM hub.pos_connections c
WHERE c.environment = $1 AND c.brand_id IN (SELECT json_array_elements_text($5::json))
ON CONFLICT (brand_id, environment) DO UPDATE
SET host = EXCLUDED.host, state = EXCLUDED.state,
    unreachable_since = CASE WHEN EXCLUDED.state = 'open' THEN coalesce(h.unreachable_since, EXCLUDED.unreachable_since)
                        END,
    last_error = coalesce(EXCLUDED.last_error, h.last_error), forwarder = EXCLUDED.forwarder, updated_at = now())";

}  // namespace

void prepare_all(pqxx::connection_base& conn) {
    conn.prepare(kPartnerByKeyHash, kPartnerByKeyHashSql);
    conn.prepare(kSigningSecretsByPartner, kSigningSecretsByPartnerSql);
    conn.prepare(kInsertOrder, kInsertOrderSql);
    conn.prepare(kOrderByExternalId, kOrderByExternalIdSql);
    conn.prepare(kInsertInbox, kInsertInboxSql);
    conn.prepare(kInsertOrders, kInsertOrdersSql);
    conn.prepare(kOrderForUpdateByExternalId, kOrderForUpdateByExternalIdSql);
    conn.prepare(kOrderForUpdateById, kOrderForUpdateByIdSql);
    conn.prepare(kInsertPlatformStatus, kInsertPlatformStatusSql);
    conn.prepare(kApplyStatus, kApplyStatusSql);
    conn.prepare(kCancelPendingJob, kCancelPendingJobSql);
    conn.prepare(kClaimJobs, kClaimJobsSql);
    conn.prepare(kFinishJob, kFinishJobSql);
    conn.prepare(kFinishJobs, kFinishJobsSql);
    conn.prepare(kInsertAttempt, kInsertAttemptSql);
    conn.prepare(kInsertStatusRow, kInsertStatusRowSql);
    conn.prepare(kStoreToken, kStoreTokenSql);
    conn.prepare(kReleaseJobs, kReleaseJobsSql);
    conn.prepare(kGiveBackJobs, kGiveBackJobsSql);
    conn.prepare(kRenewLeases, kRenewLeasesSql);
    conn.prepare(kGiveUpJobs, kGiveUpJobsSql);
    conn.prepare(kPosHosts, kPosHostsSql);
    conn.prepare(kPosHealth, kPosHealthSql);
    conn.prepare(kOutboxDepth, kOutboxDepthSql);
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

#pragma once

#include <array>
#include <string>

// Every SQL statement of the hub's request path, in one place: each is declared once as Statement{name, sql},
// prepared once per connection by prepare_all() and run by name with $n parameters only.

namespace pqxx {
class connection_base;
}

namespace hub::db {

/// One SQL statement and the name it is prepared under; it runs by its name: `tx.exec_prepared(db::kX, ...)`.
struct Statement {
    const char* name;
    const char* sql;
    // NOLINTNEXTLINE(google-explicit-constructor): a statement is passed where libpqxx takes its name
    operator std::string() const { return name; }
};

/// Prepares the statements below on a new connection (Pool::Options::on_connect).
void prepare_all(pqxx::connection_base& conn);

/// For `orderhub serve`: switches the connection to the hub's serving role (orderhub_app, or the name of
/// hub/db/roles.hpp) when migrations created it and the login may, then prepares the statements.
void prepare_serving(pqxx::connection_base& conn);

/// $1 key_hash -> id, label, time_zone, signing, disabled
inline constexpr Statement kPartnerByKeyHash{"partner_by_key_hash", R"(
SELECT id, label, time_zone, signing, disabled_at IS NOT NULL, rate_per_second::float8, rate_burst
FROM hub.partners WHERE key_hash = $1)"};

/// -> key_hash of every partner (disabled ones too): the set unknown webhook keys are answered from.
inline constexpr Statement kPartnerKeyHashes{"partner_key_hashes", "SELECT key_hash FROM hub.partners"};

/// $1 partner id -> secret_sealed of the partner's currently valid signing secrets (not expired), newest first.
inline constexpr Statement kSigningSecretsByPartner{"signing_secrets_by_partner", R"(
SELECT secret_sealed FROM hub.partner_signing_secrets
WHERE partner_id = $1 AND (expires_at IS NULL OR expires_at > now())
ORDER BY created_at DESC, id DESC)"};

/// Group commit in one statement (so one round trip and, in autocommit, one transaction): stores the order_created
/// requests of a batch with their inbox rows, and inbox rows of requests refused before storage. $1 a JSON array
/// of entries {"i": position, "id": new hub order id, "p": partner id, "h": payload hash, "d": order document or
/// absent for an inbox row alone, "rq" request id, "ev" event, "ex" external id, "br" branch id, "hd" headers object,
/// "bo" and "bl" the offset and length of its raw body in $2, "bs" the whole body's size when $2 holds a
/// prefix, "st" http status, "oc" outcome, "ec" error code, "ro"
/// replay_of} (the last three for an inbox row alone); $2 (bytea) the raw bodies one after another. Within the batch
/// the first entry of a (partner, payload.id) is the one stored; the others, and entries whose payload.id was stored
/// before, are compared by payload hash. Returns one row per entry: i, pending, kind (the number of an
/// ingest::Kind: created, duplicate, conflict or unknown_branch; null for an inbox row alone), order_id (created and
/// duplicate), inbox_id. `pending` entries got no inbox row: their payload.id was stored by a transaction that
/// committed after this statement began (or the partner is unknown); the caller runs them again. The only statement
/// that writes an order_created: a single request is a batch of one. Its inbox values come from the outcome table
/// (hub/ingest/outcome.hpp), spliced into its text once (hub/db/insert_orders.cpp).
const char* insert_orders_sql();
inline const Statement kInsertOrders{"insert_orders", insert_orders_sql()};

/// $1 partner_id $2 request_id $3 event $4 external_id $5 order_id $6 headers json $7 body bytea $8 http_status
/// $9 outcome $10 error_code $11 replay_of $12 branch_id $13 the whole body's size when $7 is a prefix, else 0
/// -> id
inline constexpr Statement kInsertInbox{"insert_inbox", R"(
INSERT INTO hub.inbox (partner_id, request_id, event, external_id, order_id, headers, body, http_status, outcome,
                       error_code, replay_of, branch_id, body_size)
VALUES ($1, $2, NULLIF($3, ''), NULLIF($4, ''), NULLIF($5, ''), $6::jsonb, $7, $8, $9, NULLIF($10, ''),
        NULLIF($11, '')::bigint, NULLIF($12, ''), NULLIF($13::int, 0))
RETURNING id)"};

/// The order an order_updated names, locked for the update: $1 partner id, $2 its platform order id or, when no
/// order has that one, its hub order id, $3 event time text, $4 whether it has an offset -> id, branch_id,
/// delivery_status, status_us (its time) and event_us (the update's event time), both in microseconds since the
/// epoch: exact (extract returns numeric), and compared in C++ by the status rule.
inline constexpr Statement kOrderForUpdate{"order_for_update", R"(
SELECT o.id, o.branch_id, o.delivery_status, (extract(epoch FROM o.status_time) * 1000000)::bigint AS status_us,
       (extract(epoch FROM CASE WHEN $4::boolean THEN $3::timestamptz
                                ELSE $3::timestamp AT TIME ZONE p.time_zone END) * 1000000)::bigint AS event_us
FROM hub.orders o JOIN hub.partners p ON p.id = o.partner_id
WHERE o.partner_id = $1 AND (o.external_id = $2 OR o.id = $2)
ORDER BY o.external_id = $2 DESC
LIMIT 1
FOR UPDATE OF o)"};

/// Appends a platform status once: $1 order id $2 branch $3 partner $4 status $5 event time (µs) $6 applied
/// -> id, or no row for an exact retry.
inline constexpr Statement kInsertPlatformStatus{"insert_platform_status", R"(
INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied)
VALUES ($1, $2, $3, $4, 'platform', 'epoch'::timestamptz + $5::bigint * interval '1 microsecond', $6)
ON CONFLICT (order_id, status, event_time) WHERE source = 'platform' DO NOTHING
RETURNING id)"};

/// $1 order id $2 status $3 status time (µs): the order's current delivery status.
inline constexpr Statement kApplyStatus{"apply_status", R"(
UPDATE hub.orders SET delivery_status = $2, status_time = 'epoch'::timestamptz + $3::bigint * interval '1 microsecond'
WHERE id = $1)"};

/// $1 order id: an order cancelled before it was sent (or while it waited for acceptance) is not sent.
inline constexpr Statement kCancelPendingJob{"cancel_pending_job", R"(
UPDATE hub.forward_jobs SET state = 'cancelled', updated_at = now(), last_error = 'cancelled before it was sent'
WHERE order_id = $1 AND state IN ('pending', 'awaiting_acceptance'))"};

// ---- Forwarding (hub/forward) ----

/// Claims due jobs (pending and due, or in flight with an expired lease) and reads what their POS orders are made
/// of, in one statement: $1 forwarder id, $2 lease seconds, $3 limit, $4 POS environment, $5 quota of a brand not
/// in $6, $6 JSON array of {"b": brand, "n": quota}, $7 give-up seconds -> per job its order id, this attempt's
/// number, the order, branch, partner and POS connection columns, and its lines as JSON (see
/// hub/forward/outbox.cpp).
// Claims are fair across POS connections and never touch a blocked one: each brand's due jobs and expired leases
// are read through its own index walks (forward_jobs_brand_*_idx), at most its quota of each, brands in random
// order (a brand with expired leases as well may get twice its quota: the forwarder gives back what its host has no
// room for). A brand whose quota is 0 (its host's bulkhead is full or its breaker open) is not read at all, however
// large its backlog. Jobs past the give-up time ($7 seconds after due_since) are left to the sweep that ends them.
// The claimed jobs' orders come back with the claim: one round trip, not a claim and four reads. Each order's lines
// are one JSON array, in line order: [item id, quantity, price in thousandths, note, mapped POS product id or null,
// [[option id, price in thousandths, quantity, mapped POS modifier id or null], ...]].
inline constexpr Statement kClaimJobs{"claim_jobs", R"(
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
    RETURNING j.order_id, j.attempts, j.accepted_at IS NOT NULL AS accepted
)
SELECT o.id AS order_id, cl.attempts AS attempt, coalesce(b.pos_branch_id, b.id) AS pos_branch_id, o.brand_id,
       p.label AS partner_label, o.external_id, o.note, (o.subtotal * 1000)::bigint AS subtotal,
       (o.tax * 1000)::bigint AS tax, (o.total * 1000)::bigint AS total, b.auto_accept OR cl.accepted AS auto_accept,
       o.customer_name, o.customer_phone, o.delivery_status, c.base_url, c.token_sealed, c.email, c.password_sealed, c.ca_file,
       c.environment, extract(epoch FROM o.created_at)::float8 AS stored_at, o.is_schedule, o.request_id,
       (SELECT json_agg(json_build_array(
                   i.id, i.quantity, (i.price * 1000)::bigint, i.note, mi.pos_id,
                   (SELECT coalesce(json_agg(json_build_array(x.id, (x.price * 1000)::bigint, x.quantity, mo.pos_id)
                                             ORDER BY x.option_no), '[]')
                    FROM jsonb_to_recordset(o.lines->'options')
                         AS x(line_no int, option_no int, id text, price numeric, quantity int)
                    LEFT JOIN hub.item_mappings mo
                           ON mo.partner_id = o.partner_id AND mo.kind = 'option' AND mo.external_id = x.id
                    WHERE x.line_no = i.line_no)) ORDER BY i.line_no)
        FROM jsonb_to_recordset(o.lines->'items') AS i(line_no int, id text, quantity int, price numeric, note text)
        LEFT JOIN hub.item_mappings mi ON mi.partner_id = o.partner_id AND mi.kind = 'item' AND mi.external_id = i.id)
       AS lines
FROM claimed cl
JOIN hub.orders o ON o.id = cl.order_id
JOIN hub.branches b ON b.id = o.branch_id
JOIN hub.partners p ON p.id = o.partner_id
LEFT JOIN hub.pos_connections c ON c.brand_id = o.brand_id AND c.environment = $4)"};

/// Ends a claim: $1 order id $2 forwarder $3 state $4 delay ms (pending) $5 POS order id $6 last error
/// -> branch_id, partner_id; no row when the claim was lost (lease expired and taken over).
inline constexpr Statement kFinishJob{"finish_job", R"(
UPDATE hub.forward_jobs j
SET state = $3,
    due_at = CASE WHEN $3 = 'pending' THEN now() + $4::bigint * interval '1 millisecond' ELSE j.due_at END,
    pos_order_id = coalesce(NULLIF($5, ''), j.pos_order_id), last_error = NULLIF($6, ''),
    claimed_by = NULL, lease_until = NULL, updated_at = now()
FROM hub.orders o
WHERE j.order_id = $1 AND j.claimed_by = $2 AND j.state = 'in_flight' AND o.id = j.order_id
RETURNING o.branch_id, o.partner_id)"};
/// $1 forwarder, $2 JSON array of claim ends (with their status-log rows: hub/forward/status_log.hpp), $3 JSON
/// array of attempts: many claims ended in one statement.
// Many claims ended in one statement (the forwarder's group commit): the jobs still held by $1 move to their new
// state; the attempts are recorded (a retried request's only when its claim is still held: an earlier try may
// have committed them); the ends that carry a status-log row (decided in C++) get it. Returns the jobs that were held.
inline constexpr Statement kFinishJobs{"finish_jobs", R"(
WITH r AS (
    SELECT * FROM json_to_recordset($2::json)
        AS x(order_id text, state text, delay_ms bigint, pos_order_id text, error text, status text, source text,
             actor text, detail text)
), done AS (
    UPDATE hub.forward_jobs j
    SET state = r.state,
        due_at = CASE WHEN r.state = 'pending' THEN now() + r.delay_ms * interval '1 millisecond' ELSE j.due_at END,
        pos_order_id = coalesce(NULLIF(r.pos_order_id, ''), j.pos_order_id), last_error = NULLIF(r.error, ''),
        claimed_by = NULL, lease_until = NULL, updated_at = now()
    FROM r, hub.orders o
    WHERE j.order_id = r.order_id AND j.claimed_by = $1 AND j.state = 'in_flight' AND o.id = j.order_id
    RETURNING j.order_id, o.branch_id, o.partner_id, r.status, r.source, r.actor, r.detail
), attempts AS (
    INSERT INTO hub.pos_delivery_attempts (attempted_at, order_id, attempt, url, http_status, latency_ms, outcome,
                                           error, response_excerpt, forwarder, request_id)
    SELECT CASE WHEN a.started_us > 0 THEN 'epoch'::timestamptz + a.started_us * interval '1 microsecond'
                ELSE now() END,
           a.order_id, a.attempt, a.url, NULLIF(a.http_status, 0), a.latency_ms, a.outcome, NULLIF(a.error, ''),
           NULLIF(a.response_excerpt, ''), $1, (SELECT o.request_id FROM hub.orders o WHERE o.id = a.order_id)
    FROM json_to_recordset($3::json) AS a(order_id text, attempt int, url text, http_status int, latency_ms int,
                                          outcome text, error text, response_excerpt text, retrying boolean,
                                          started_us bigint)
    WHERE NOT a.retrying OR a.order_id IN (SELECT order_id FROM done)
), logged AS (
    INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied, actor,
                                      detail)
    SELECT order_id, branch_id, partner_id, status, source, now(), true, NULLIF(actor, ''), left(NULLIF(detail, ''), 500)
    FROM done WHERE status IS NOT NULL
)
SELECT order_id FROM done)"};

/// $1 order $2 attempt $3 url $4 http status (0: none) $5 latency ms $6 outcome $7 error $8 excerpt $9 forwarder
/// $10 start of the exchange, Unix µs (0: now)
inline constexpr Statement kInsertAttempt{"insert_attempt", R"(
INSERT INTO hub.pos_delivery_attempts (attempted_at, order_id, attempt, url, http_status, latency_ms, outcome, error,
                                       response_excerpt, forwarder, request_id)
VALUES (CASE WHEN $10::bigint > 0 THEN 'epoch'::timestamptz + $10::bigint * interval '1 microsecond' ELSE now() END,
        $1, $2, $3, NULLIF($4, 0), $5, $6, NULLIF($7, ''), NULLIF($8, ''), $9,
        (SELECT o.request_id FROM hub.orders o WHERE o.id = $1)))"};

/// $1 order $2 branch $3 partner $4 status $5 source $6 actor $7 detail: a hub, pos or operator status row.
inline constexpr Statement kInsertStatusRow{"insert_status_row", R"(
INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied, actor, detail)
VALUES ($1, $2, $3, $4, $5, now(), true, NULLIF($6, ''), left(NULLIF($7, ''), 500)))"};

/// $1 brand $2 environment $3 sealed token: a token obtained by logging in again.
inline constexpr Statement kStoreToken{"store_token", R"(
UPDATE hub.pos_connections SET token_sealed = $3, updated_at = now() WHERE brand_id = $1 AND environment = $2)"};

/// $1 forwarder: gives its claimed jobs back (graceful stop).
inline constexpr Statement kReleaseJobs{"release_jobs", R"(
UPDATE hub.forward_jobs SET state = 'pending', claimed_by = NULL, lease_until = NULL,
                            attempts = greatest(attempts - 1, 0), updated_at = now()
WHERE claimed_by = $1 AND state = 'in_flight')"};

/// $1 forwarder $2 JSON array of order ids: claims given back unsent (not counted as attempts).
// Jobs given back unsent (a host with no room left, a lease too short for another exchange): not an attempt.
inline constexpr Statement kGiveBackJobs{"give_back_jobs", R"(
UPDATE hub.forward_jobs SET state = 'pending', claimed_by = NULL, lease_until = NULL,
                            attempts = greatest(attempts - 1, 0), updated_at = now()
WHERE claimed_by = $1 AND state = 'in_flight' AND order_id IN (SELECT json_array_elements_text($2::json)))"};
/// $1 forwarder $2 lease seconds: every job the forwarder holds gets a fresh lease.
inline constexpr Statement kRenewLeases{"renew_leases", R"(
UPDATE hub.forward_jobs SET lease_until = now() + make_interval(secs => $2::int)
WHERE claimed_by = $1 AND state = 'in_flight')"};
/// $1 give-up seconds: pending jobs due longer than that become dead (with a status row) -> how many.
// A job still pending $1 seconds after it became due is dead, breaker or not (product.md section 10); a batch at a
// time, rows another sweep holds are skipped. The status log gets forward_dead like any other give-up.
inline constexpr Statement kGiveUpJobs{"give_up_jobs", R"(
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
SELECT count(*) FROM dead)"};
/// Ends the held jobs whose acceptance deadline passed (manual-accept branches) -> how many.
// A batch at a time; FOR UPDATE SKIP LOCKED and the state test of the update make each time-out happen once, whatever
// the number of hubs sweeping (a job an accept or reject holds is skipped, and no longer held when it is seen again).
inline constexpr Statement kTimeOutHeldJobs{"time_out_held_jobs", R"(
WITH late AS (
    SELECT order_id FROM hub.forward_jobs
    WHERE state = 'awaiting_acceptance' AND accept_deadline <= now()
    ORDER BY accept_deadline LIMIT 500 FOR UPDATE SKIP LOCKED
), ended AS (
    UPDATE hub.forward_jobs j
    SET state = 'timed_out', updated_at = now(), last_error = 'not accepted before ' || j.accept_deadline::text
    FROM late, hub.orders o
    WHERE j.order_id = late.order_id AND j.state = 'awaiting_acceptance' AND o.id = j.order_id
    RETURNING j.order_id, o.branch_id, o.partner_id, j.last_error
), logged AS (
    INSERT INTO hub.order_status_log (order_id, branch_id, partner_id, status, source, event_time, applied, detail)
    SELECT order_id, branch_id, partner_id, 'time_out', 'hub', now(), true, last_error FROM ended
)
SELECT count(*) FROM ended)"};
/// $1 environment -> brand, base URL, CA file, due jobs waiting, per POS connection.
// Each POS connection of the environment with its due jobs waiting: the forwarder's map of brands to hosts, and
// the queued figure of /metrics.
inline constexpr Statement kPosHosts{"pos_hosts", R"(
SELECT c.brand_id, c.base_url, c.ca_file,
       (SELECT count(*) FROM hub.forward_jobs j WHERE j.brand_id = c.brand_id AND j.state = 'pending'
                                                  AND j.due_at <= now())
FROM hub.pos_connections c WHERE c.environment = $1)"};
/// $1 environment $2 host $3 last error $4 'open' or 'closed' $5 JSON array of brands $6 forwarder.
// A breaker opened ($4 = 'open') or closed for host $2: every brand of the environment on that host ($5, a JSON
// array) gets the row; an open row keeps the time it first became unreachable.
inline constexpr Statement kPosHealth{"pos_health", R"(
INSERT INTO hub.pos_connection_health AS h (brand_id, environment, host, state, unreachable_since, last_error,
                                            forwarder, updated_at)
SELECT c.brand_id, c.environment, $2, $4, CASE WHEN $4 = 'open' THEN now() END, NULLIF($3, ''), $6, now()
FROM hub.pos_connections c
WHERE c.environment = $1 AND c.brand_id IN (SELECT json_array_elements_text($5::json))
ON CONFLICT (brand_id, environment) DO UPDATE
SET host = EXCLUDED.host, state = EXCLUDED.state,
    unreachable_since = CASE WHEN EXCLUDED.state = 'open' THEN coalesce(h.unreachable_since, EXCLUDED.unreachable_since)
                        END,
    last_error = coalesce(EXCLUDED.last_error, h.last_error), forwarder = EXCLUDED.forwarder, updated_at = now())"};

/// For /metrics: per open state (not delivered nor cancelled) -> state, jobs, seconds since the oldest one began
/// waiting (its due time before the first attempt, its storage after; may be negative for orders not due yet).
// Served by the partial index forward_jobs_open_idx (sql/hub/0007_observability.sql): delivered and cancelled
// jobs, nearly all of the table, are never read.
inline constexpr Statement kOutboxDepth{"outbox_depth", R"(
SELECT state, count(*),
       extract(epoch FROM now() - min(CASE WHEN attempts = 0 THEN greatest(due_at, created_at) ELSE created_at END))::float8
FROM hub.forward_jobs WHERE state NOT IN ('delivered', 'cancelled') GROUP BY state)"};

// Webhook ids are remembered 10 minutes: the signature window (5 minutes either way of the request's timestamp)
// lets a request be replayed for up to 10 minutes after it was first seen.

/// A request with a webhook id seen before (within the window): counts it -> http_status, answer, replays (1 for
/// the first replay). $1 partner id, $2 webhook id.
inline constexpr Statement kReplayWebhookId{"replay_webhook_id", R"(
UPDATE hub.webhook_ids SET replays = replays + 1
WHERE partner_id = $1 AND webhook_id = $2 AND seen_at > now() - interval '10 minutes'
RETURNING http_status, answer, replays)"};

/// Remembers the answer to a webhook id unless one is remembered within the window. $1 partner id, $2 webhook id,
/// $3 http status, $4 answer (JSON text).
inline constexpr Statement kRememberWebhookId{"remember_webhook_id", R"(
INSERT INTO hub.webhook_ids AS w (partner_id, webhook_id, http_status, answer) VALUES ($1, $2, $3, $4)
ON CONFLICT (partner_id, webhook_id) DO UPDATE
    SET seen_at = now(), http_status = EXCLUDED.http_status, answer = EXCLUDED.answer, replays = 0
    WHERE w.seen_at <= now() - interval '10 minutes')"};

/// Forgets up to 100 of a partner's webhook ids older than the window. $1 partner id.
inline constexpr Statement kPurgeWebhookIds{"purge_webhook_ids", R"(
DELETE FROM hub.webhook_ids WHERE partner_id = $1 AND webhook_id IN (
    SELECT webhook_id FROM hub.webhook_ids
    WHERE partner_id = $1 AND seen_at <= now() - interval '10 minutes' LIMIT 100))"};

/// Every statement above, for prepare_all.
inline const std::array kAllStatements{
    // clang-format off
    &kPartnerByKeyHash, &kPartnerKeyHashes, &kSigningSecretsByPartner,
    &kInsertOrders,     &kInsertInbox,
    &kOrderForUpdate,   &kInsertPlatformStatus,
    &kApplyStatus,      &kCancelPendingJob,
    &kClaimJobs,        &kFinishJob,
    &kFinishJobs,       &kInsertAttempt,
    &kInsertStatusRow,  &kStoreToken,
    &kReleaseJobs,      &kGiveBackJobs,
    &kRenewLeases,      &kGiveUpJobs,
    &kTimeOutHeldJobs,
    &kPosHosts,         &kPosHealth,
    &kOutboxDepth,
    &kReplayWebhookId, &kRememberWebhookId, &kPurgeWebhookIds,
    // clang-format on
};

}  // namespace hub::db

#pragma once

// Every SQL statement of the hub's request path, in one place; prepared once per connection by prepare_all().

namespace pqxx {
class connection_base;
}

namespace hub::db {

/// Prepares the statements below on a new connection (Pool::Options::on_connect).
void prepare_all(pqxx::connection_base& conn);

/// For `orderhub serve`: drops the connection's privileges to the orderhub_app role (once migrations created
/// it), then prepares the statements.
void prepare_serving(pqxx::connection_base& conn);

/// $1 key_hash -> id, label, time_zone, signing, disabled
inline constexpr const char* kPartnerByKeyHash = "partner_by_key_hash";

/// $1 partner id -> secret_sealed of the partner's currently valid signing secrets (not expired), newest first.
inline constexpr const char* kSigningSecretsByPartner = "signing_secrets_by_partner";

/// Stores one order from a JSON document in one statement: the order, its items and options, its first
/// status-log row and its forwarding job. $1 hub order id, $2 partner id, $3 payload hash, $4 document (see
/// hub/ingest/order_document.hpp). Returns one row: the new order's id (null when none was inserted) and
/// whether the branch exists.
inline constexpr const char* kInsertOrder = "insert_order";

/// Group commit in one statement (so one round trip and, in autocommit, one transaction): stores the order_created
/// requests of a batch with their inbox rows, and inbox rows of requests refused before storage. $1 a JSON array
/// of entries {"i": position, "id": new hub order id, "p": partner id, "h": payload hash, "d": order document or
/// absent for an inbox row alone, "rq" request id, "ev" event, "ex" external id, "hd" headers object, "bo" and
/// "bl" the offset and length of its raw body in $2, "st" http status, "oc" outcome, "ec" error code, "ro"
/// replay_of} (the last three for an inbox row alone); $2 (bytea) the raw bodies one after another. Within the batch
/// the first entry of a (partner, payload.id) is the one stored; the others, and entries whose payload.id was stored
/// before, are compared by payload hash. Returns one row per entry: i, kind (created, duplicate, conflict,
/// unknown_branch, record or pending), hub order id (created and duplicate), inbox id. `pending` entries got no inbox
/// row: their payload.id was stored by a transaction that committed after this statement began (or the partner is
/// unknown); the caller stores them one by one.
inline constexpr const char* kInsertOrders = "insert_orders";

/// $1 partner id, $2 external id -> id, payload_hash
inline constexpr const char* kOrderByExternalId = "order_by_external_id";

/// $1 partner_id $2 request_id $3 event $4 external_id $5 order_id $6 headers json $7 body bytea $8 http_status
/// $9 outcome $10 error_code $11 replay_of -> id
inline constexpr const char* kInsertInbox = "insert_inbox";

/// The order an order_updated names, locked for the update: $1 partner id, $2 platform order id (by external id)
/// or hub order id (by id), $3 event time text, $4 whether it has an offset -> id, branch_id, delivery_status,
/// status time and the update's event time, both in microseconds since the epoch.
inline constexpr const char* kOrderForUpdateByExternalId = "order_for_update_by_external_id";
inline constexpr const char* kOrderForUpdateById = "order_for_update_by_id";

/// Appends a platform status once: $1 order id $2 branch $3 partner $4 status $5 event time (µs) $6 applied
/// -> id, or no row for an exact retry.
inline constexpr const char* kInsertPlatformStatus = "insert_platform_status";

/// $1 order id $2 status $3 status time (µs): the order's current delivery status.
inline constexpr const char* kApplyStatus = "apply_status";

/// $1 order id: an order cancelled before it was sent is not sent.
inline constexpr const char* kCancelPendingJob = "cancel_pending_job";

// ---- Forwarding (hub/forward) ----

/// Claims due jobs (pending and due, or in flight with an expired lease) and reads what their POS orders are made
/// of, in one statement: $1 forwarder id, $2 lease seconds, $3 limit, $4 POS environment, $5 quota of a brand not
/// in $6, $6 JSON array of {"b": brand, "n": quota}, $7 give-up seconds -> per job its order id, this attempt's
/// number, the order, branch, partner and POS connection columns, and its lines as JSON (see
/// hub/forward/outbox.cpp).
inline constexpr const char* kClaimJobs = "claim_jobs";

/// Ends a claim: $1 order id $2 forwarder $3 state $4 delay ms (pending) $5 POS order id $6 last error
/// -> branch_id, partner_id; no row when the claim was lost (lease expired and taken over).
inline constexpr const char* kFinishJob = "finish_job";
/// $1 forwarder, $2 JSON array of claim ends, $3 JSON array of attempts: many claims ended in one statement.
inline constexpr const char* kFinishJobs = "finish_jobs";

/// $1 order $2 attempt $3 url $4 http status (0: none) $5 latency ms $6 outcome $7 error $8 excerpt $9 forwarder
/// $10 start of the exchange, Unix µs (0: now)
inline constexpr const char* kInsertAttempt = "insert_attempt";

/// $1 order $2 branch $3 partner $4 status $5 source $6 actor $7 detail: a hub, pos or operator status row.
inline constexpr const char* kInsertStatusRow = "insert_status_row";

/// $1 brand $2 environment $3 sealed token: a token obtained by logging in again.
inline constexpr const char* kStoreToken = "store_token";

/// $1 forwarder: gives its claimed jobs back (graceful stop).
inline constexpr const char* kReleaseJobs = "release_jobs";

/// $1 forwarder $2 JSON array of order ids: claims given back unsent (not counted as attempts).
inline constexpr const char* kGiveBackJobs = "give_back_jobs";
/// $1 forwarder $2 lease seconds: every job the forwarder holds gets a fresh lease.
inline constexpr const char* kRenewLeases = "renew_leases";
/// $1 give-up seconds: pending jobs due longer than that become dead (with a status row) -> how many.
inline constexpr const char* kGiveUpJobs = "give_up_jobs";
/// $1 environment -> brand, base URL, CA file, due jobs waiting, per POS connection.
inline constexpr const char* kPosHosts = "pos_hosts";
/// $1 environment $2 host $3 last error $4 'open' or 'closed' $5 JSON array of brands $6 forwarder.
inline constexpr const char* kPosHealth = "pos_health";

/// For /metrics: per open state (not delivered nor cancelled) -> state, jobs, seconds since the oldest one began
/// waiting (its due time before the first attempt, its storage after; may be negative for orders not due yet).
inline constexpr const char* kOutboxDepth = "outbox_depth";

}  // namespace hub::db

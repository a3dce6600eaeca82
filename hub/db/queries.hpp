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

/// Stores one order from a JSON document in one statement: the order, its items and options, its first
/// status-log row and its forwarding job. $1 hub order id, $2 partner id, $3 payload hash, $4 document (see
/// hub/ingest/order_document.hpp). Returns one row: the new order's id (null when none was inserted) and
/// whether the branch exists.
inline constexpr const char* kInsertOrder = "insert_order";

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

}  // namespace hub::db

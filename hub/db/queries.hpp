#pragma once

// Every SQL statement of the hub's request path, in one place; prepared once per connection by prepare_all().

namespace pqxx {
class connection_base;
}

namespace hub::db {

/// Prepares the statements below on a new connection (Pool::Options::on_connect).
void prepare_all(pqxx::connection_base& conn);

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

}  // namespace hub::db

#pragma once

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <optional>
#include <string>

#include "hub/ingest/validate.hpp"

namespace common::db {
class Pool;
}

namespace hub::ingest {

/// What the inbox keeps of one webhook request.
struct InboxRecord {
    std::string partner_id;
    std::string request_id;
    std::string event;        ///< empty when unknown
    std::string external_id;  ///< payload.id or payload.order_id, when known
    std::string order_id;     ///< the hub order, when known
    std::string headers_json; ///< selected headers as a JSON object
    std::string body;         ///< raw bytes as received
    unsigned http_status = 0;
    std::string outcome;      ///< stored, duplicate, conflict, rejected, ...
    std::string error_code;
    std::string replay_of;    ///< inbox id re-run by `events replay`, or empty
};

/// The outcome of storing an order_created.
struct StoreOutcome {
    enum class Kind { created, duplicate, conflict, unknown_branch };
    Kind kind = Kind::created;
    std::string order_id;  ///< the hub order id (created or duplicate)
    std::string inbox_id;
};

/// Writes orders and inbox rows through group commit: requests from many connections share transactions,
/// each answered only after its transaction committed. Thread-safe; holds a reference to the pool.
class OrderStore {
public:
    OrderStore(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent);
    ~OrderStore();

    /// Stores the order with its inbox row (both or nothing). `inbox` gets outcome, status and order id here.
    /// Throws when the store is unavailable (common::db::is_unavailable) or on a bug.
    boost::asio::awaitable<StoreOutcome> store_order(std::string partner_id, Validated order, InboxRecord inbox);

    /// Records a request that was refused before storage (bad JSON, validation); returns the inbox id.
    boost::asio::awaitable<std::string> record(InboxRecord inbox);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hub::ingest

#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "hub/ingest/outcome.hpp"
#include "hub/ingest/validate.hpp"

namespace common::db {
class Pool;
}

namespace pqxx {
class transaction_base;
}

namespace hub::ingest {

/// Where an order_created came from: a platform's webhook (the default) or an operator (`order create`,
/// hub/admin/order_create_rules.hpp). Not an inbox column: it goes with the order the request creates.
struct Origin {
    bool by_operator = false;  ///< the first status-log row's source: `operator`, not `platform`
    std::string actor;         ///< the operator (an admin token's name); empty: the database user
    bool test = false;         ///< a test order (hub.orders.test)
};

/// What the inbox keeps of one webhook request.
struct InboxRecord {
    std::string partner_id;
    std::string request_id;
    std::string event;          ///< empty when unknown
    std::string external_id;    ///< payload.id or payload.order_id, when known
    std::string order_id;       ///< the hub order, when known
    std::string branch_id;      ///< the envelope's branch_id, when known
    std::string headers_json;   ///< selected headers as a JSON object
    std::string body;           ///< raw bytes as received, or their first bytes (body_size)
    std::size_t body_size = 0;  ///< the whole body's size when `body` holds only a prefix; 0: `body` is whole
    unsigned http_status = 0;
    std::string outcome;  ///< stored, duplicate, conflict, rejected, ...
    std::string error_code;
    std::string replay_of;  ///< inbox id re-run by `events replay`, or empty
    Origin origin;
};

/// Inserts one inbox row in `tx`; returns its id.
std::string insert_inbox(pqxx::transaction_base& tx, const InboxRecord& r);

/// The outcome of storing a webhook.
struct StoreOutcome {
    using Kind = ingest::Kind;  ///< created ... branch_mismatch (hub/ingest/outcome.hpp)
    Kind kind = Kind::created;
    std::string order_id;  ///< the hub order id, when known
    bool applied = false;  ///< order_updated: became the current delivery status
    std::string inbox_id;
};

/// Where webhooks are stored: OrderStore, or a fake in unit tests.
class OrderSink {
public:
    virtual ~OrderSink() = default;
    /// Stores an order_created (order, items, first status row, forwarding job) or an order_updated (status-log
    /// row, current status) with its inbox row: all or nothing. The inbox row's outcome, status and order id are
    /// filled in here. Throws when the store is unavailable (common::db::is_unavailable) or on a bug. The arguments
    /// are lent, not copied into the coroutine's frame: `webhook` until store() returns (it has taken what it keeps
    /// of the order by then, and the caller frees the rest before it awaits the commit), `inbox` until the coroutine
    /// completes (the caller awaits it at once); what the store keeps it moves out of them. The partner is the inbox
    /// row's.
    virtual boost::asio::awaitable<StoreOutcome> store(Validated&& webhook, InboxRecord&& inbox) = 0;
    /// Records a request that was refused before storage (bad JSON, validation); returns the inbox id. `inbox` is
    /// lent as store()'s arguments are.
    virtual boost::asio::awaitable<std::string> record(InboxRecord&& inbox) = 0;
};

/// Under load, insert_orders runs on a connection of its own in libpq's pipeline mode (hub/ingest/pipe.hpp): the
/// next statement is sent while the last one runs. Where that connection reaches.
struct PipeSettings {
    std::string url;                                 ///< the database, as the pool's
    std::chrono::milliseconds statement_timeout{0};  ///< as the pool's (0: none)
    bool always = false;  ///< every order_created through the pipe, whatever the load (tests)
};

/// What the ingest pipeline has done (hub/ingest/pipe.hpp).
struct PipeStats {
    bool ready = false;                  ///< it has its connection
    std::uint64_t statements = 0;        ///< statements sent
    std::uint64_t requests = 0;          ///< requests in them
    std::uint64_t handed_back = 0;       ///< requests it handed to the pool's group commit
    std::uint64_t connections_lost = 0;  ///< connections lost (a restart, a terminated backend)
};

/// Writes orders and inbox rows through group commit: requests from many connections share transactions,
/// each answered only after its transaction committed. At light load a request that finds no transaction running or
/// due waits `gather` for others to share its statement (common::db::Batcher). Thread-safe; holds a reference to the
/// pool.
class OrderStore final : public OrderSink {
public:
    OrderStore(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent,
               std::chrono::microseconds gather = std::chrono::microseconds(0),
               const std::optional<PipeSettings>& pipe = std::nullopt);
    ~OrderStore() override;

    boost::asio::awaitable<StoreOutcome> store(Validated&& webhook, InboxRecord&& inbox) override;
    boost::asio::awaitable<std::string> record(InboxRecord&& inbox) override;

    /// The pipeline's figures (for /metrics: `ready` while it has its connection); nullopt without one.
    std::optional<PipeStats> pipe_stats() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hub::ingest

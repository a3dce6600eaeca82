#pragma once

// What the order store (store.cpp) and its pipeline (pipe.cpp) share: one webhook's unit of work, and the
// arguments of the insert_orders statement for several of them. Internal to hub/ingest.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "hub/ingest/store.hpp"

namespace hub::ingest::detail {

/// One unit of work for the batch: an order with its inbox row, or an inbox row alone.
struct Job {
    std::string partner_id;
    /// An order_updated, stored one by one. An order_created travels as its entry alone: its validated form stays
    /// with (and is freed by) the network thread that built the entry.
    std::optional<Validated> update;
    bool created = false;
    InboxRecord inbox;
    /// Its entry of the insert_orders statement (a JSON object without its position "i"), built by the
    /// submitting coroutine so that the database worker only joins entries; empty for a job stored one by one
    /// (order_updated).
    std::string entry;
};

/// The JSON array of one insert_orders statement stays under this size (a single larger entry goes alone).
inline constexpr std::size_t kMaxStatementBytes = 4 << 20;

/// The outcome insert_orders' row answers for one entry: `kind` (null for an inbox row alone, which only its
/// inbox id answers: created), `order_id` (null when the kind names no order) and `inbox_id`.
inline StoreOutcome answered_outcome(std::optional<int> kind, const char* order_id, std::string inbox_id) {
    StoreOutcome out;
    out.kind = kind ? static_cast<StoreOutcome::Kind>(*kind) : StoreOutcome::Kind::created;
    if (order_id != nullptr) out.order_id = order_id;
    out.inbox_id = std::move(inbox_id);
    return out;
}

/// The insert_orders statement's arguments for `jobs`, in this order: the JSON array of their entries, and their raw
/// bodies one after another.
std::pair<std::string, std::string> insert_orders_args(std::span<const Job* const> jobs);

}  // namespace hub::ingest::detail

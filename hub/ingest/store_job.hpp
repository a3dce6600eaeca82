#pragma once

// What the order store (store.cpp) and its pipeline (pipe.cpp) share: one webhook's unit of work, and the
// arguments of the insert_orders statement for several of them. Internal to hub/ingest.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hub/ingest/store.hpp"

namespace hub::ingest::detail {

/// One unit of work for the batch: an order with its inbox row, or an inbox row alone; its partner is the inbox row's.
struct Job {
    /// An order_updated, stored one by one. An order_created travels as its entry alone: its validated form stays
    /// with (and is freed by) the network thread that built the entry.
    std::optional<Validated> update;
    bool created = false;
    InboxRecord inbox;
    /// Its entry of the insert_orders statement: its kEntryFields values in the statement's column order, each as
    /// an element of a binary text[] (hub/db/insert_orders.cpp), built by the submitting coroutine so that the
    /// database worker only copies them into the statement's columns; empty for a job stored one by one
    /// (order_updated).
    std::string entry;
};

/// The values of an entry (Job::entry); the statement has one more column, each entry's body offset, added by
/// insert_orders_args.
inline constexpr std::size_t kEntryFields = 38;

/// The arguments of one insert_orders statement stay under this size (a single larger entry goes alone).
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

/// The entry of an order_created `order` (with its new hub order id and payload hash) or, when `order` is null,
/// of an inbox row alone: its values in the order of the statement's columns (hub/db/insert_orders.cpp), NULL where
/// it has none.
std::string make_entry(const Validated* order, const InboxRecord& r);

/// The insert_orders statement's arguments for `jobs`, all in binary format: its kEntryFields + 1 columns (text[]
/// in PostgreSQL's binary array format, one element per job: the entries' values, then each body's offset), and
/// the raw bodies one after another (bytea).
std::vector<std::string> insert_orders_args(std::span<const Job* const> jobs);

}  // namespace hub::ingest::detail

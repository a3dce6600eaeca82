#pragma once

// The inbox of received webhook requests, for `orderhub events ...` and the operator HTTP API
// (hub/admin/refusal.hpp).
//
// Decisions:
//   - Newest first. `failed` keeps the requests not answered 2xx; `external_id` those that named that platform order
//     id (refused ones too: hub/ingest/inbox_keys.hpp), whichever partner sent them.
//   - One entry shows its stored headers and raw body: as text when the body is UTF-8, else base64
//     (body_encoding says which), and its size.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstdint>
#include <string>

#include "hub/ingest/partners.hpp"

namespace pqxx {
class transaction_base;
}

namespace hub::admin {

/// Which inbox entries to list.
struct InboxFilter {
    bool failed = false;
    std::string external_id;  ///< empty: any
    std::int64_t limit = 100;
    std::int64_t before_id = 0;  ///< 0: from the newest; else only ids below it (the next page)
};

/// Inbox entries, newest first: id, received_at, partner, event, external_id, branch_id, order_id, http_status,
/// outcome, error_code, replay_of, request_id. Refusals: invalid limit (1..100000).
boost::json::array list_events(pqxx::transaction_base& tx, const InboxFilter& filter);

/// One entry with its headers and raw body. Refusals: invalid id (not a number), not_found.
boost::json::object show_event(pqxx::transaction_base& tx, const std::string& id);

/// What replaying an inbox entry takes: its partner, raw body and stored headers (JSON text).
struct ReplaySource {
    ingest::Partner partner;
    std::string body;
    std::string headers;
};

/// The entry `id` to replay through today's ingest path (hub/ingest/service.hpp process(), with `replay_of` set).
/// Refusals: invalid id; not_found; conflict when its partner is disabled or it was refused for its signature (its
/// sender was never authenticated: replaying it would store whatever anyone sent to the URL).
ReplaySource replay_source(pqxx::transaction_base& tx, const std::string& id);

}  // namespace hub::admin

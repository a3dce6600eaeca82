#pragma once

// What the inbox keeps to find a request by (event, the platform's order id, the branch), read from a parsed body
// whether or not it then passes validation: an operator asked "did you get order X?" finds X's 422 too.
//
// Decisions:
//   - event: order_created or order_updated when the body names one of them, else empty.
//   - external_id: payload.id of an order_created, payload.order_id of an order_updated; empty for any other event
//     (which field is the order id is not known then).
//   - branch_id: the envelope's branch_id.
//   - An id is a string of 1..kMaxIdBytes bytes without control characters, or a whole number (kept as its decimal
//     text): anything else is left empty, so nothing that a text column or a terminal would choke on is stored.

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace hub::ingest {

/// The keys above; each empty when the body does not give it.
struct InboxKeys {
    std::string event;
    std::string external_id;
    std::string branch_id;
};

/// Reads the keys of a parsed webhook body (any JSON value). Pure.
InboxKeys inbox_keys(const boost::json::value& body);

/// A text id as the keys above keep it: itself when it is 1..kMaxIdBytes bytes without control characters, else
/// empty. (A body that passed validation has its keys from its validated values: the event, the order id, and its
/// branch through this.)
std::string inbox_id(std::string_view s);

}  // namespace hub::ingest

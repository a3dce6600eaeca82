#pragma once

#include <boost/json/object.hpp>
#include <cstddef>
#include <string>
#include <string_view>

#include "hub/ingest/validate.hpp"

namespace hub::ingest {

/// The JSON document that the insert_order statement reads: every field of a validated order_created, money as
/// text with three decimals, times as PostgreSQL text with a flag telling whether they carry an offset, items
/// and options flattened with their positions.
boost::json::object order_document(const Envelope& envelope, const OrderCreated& order);

/// SHA-256 (hex) of the order in canonical form: branch_id and the validated payload, without event_time and
/// without unknown extra fields. Two requests are "the same order" exactly when these are equal: a platform
/// that re-sends an order with a new event_time or re-serialized JSON gets the same hub order_id; the same
/// payload.id with any other difference is a conflict (409).
std::string payload_hash(const Envelope& envelope, const OrderCreated& order);

/// Both forms of an order as the ingest path stores them: `hash` is payload_hash(), `document` the JSON text of
/// order_document() (the same keys in the same order), written straight from the order without building either
/// document (the ingest path's form; tests/unit/order_document_test.cpp holds it equal to the two above).
/// `document[lines_at, lines_end)` is its `"items":[...],"options":[...]` part: inside braces, the order's `lines`.
struct OrderForms {
    std::string hash;
    std::string document;
    std::size_t lines_at = 0;
    std::size_t lines_end = 0;

    /// The items and options part of `document` (without braces).
    std::string_view lines() const { return std::string_view(document).substr(lines_at, lines_end - lines_at); }
};
OrderForms order_forms(const Envelope& envelope, const OrderCreated& order);

}  // namespace hub::ingest

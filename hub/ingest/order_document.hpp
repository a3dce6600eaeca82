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

/// An order as the ingest path stores it: `canonical`, the text that payload_hash() digests (the canonical form of
/// order_document(), without the event time, the same keys in the same order), written straight from the order
/// without building a document, and `hash`, its SHA-256; `canonical[lines_at, lines_end)` is its
/// `"items":[...],"options":[...]` part, inside braces the order's `lines` (tests/unit/order_document_test.cpp
/// holds all three to what the functions above give).
struct OrderForms {
    std::string hash;
    std::string canonical;
    std::size_t lines_at = 0;
    std::size_t lines_end = 0;

    /// The items and options part of `canonical` (without braces).
    std::string_view lines() const { return std::string_view(canonical).substr(lines_at, lines_end - lines_at); }
};
OrderForms order_forms(const Envelope& envelope, const OrderCreated& order);

}  // namespace hub::ingest

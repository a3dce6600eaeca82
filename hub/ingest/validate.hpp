#pragma once

// Typed validation of delivery-platform webhook bodies (interface 2.4-2.6, 3.2; product contract 4).
// Pure code: no I/O, no shared state. schemas/*.json encode the same rules and
// tests/schema/diff.py checks that hub and schema agree on every fixture; change both together.
//
// Bounds (the interface sets none; these are ours, also listed in schemas/README.md):
//   - lengths are counted in UTF-8 bytes (JSON Schema's maxLength counts code points, so for non-ASCII
//     text the hub's bound is the tighter one);
//   - ids (branch_id, payload.id, order_id, item and option ids): 1-128 bytes;
//   - payment_method: 0-64 bytes, any text; notes and customer.address: 0-1000 bytes;
//     customer.name: 0-200 bytes; car_data plate_number, plate_letters, car_brand: 0-64 bytes;
//   - no stored string may contain U+0000 (PostgreSQL text cannot hold it);
//   - items: 1-200; options per item: 0-50; quantities: integers 1-10000;
//   - money (subtotal, tax, discount, total, prices): a JSON number 0 <= x <= 1,000,000,000.
//
// Decisions:
//   - Unknown extra fields are accepted and ignored everywhere (they stay in the stored raw body).
//   - Integers (is_schedule, quantities) must be JSON integers: 1.0, 1e0 and true are refused.
//   - Money is kept in thousandths (three decimals): hub/ingest/money.hpp.
//   - note (payload and item), customer.address: absent, null or a string; absent and null give "".
//   - schedule_date: with is_schedule 1 a timestamp string is required; with is_schedule 0 it must be null
//     or absent. car_data and customer: absent is the same as null.
//   - items[].options: absent means an empty list; null is refused (the interface says array).
//   - car_data.color: '#' followed by exactly 3 or 6 hex digits, either case. The other car fields and
//     customer.name may be empty strings. customer.phone: '+' followed by 6-15 digits (E.164 style).
//   - Timestamps: see hub/ingest/timestamp.hpp (both formats, fraction, offset; leap second refused).
//   - Error codes: `not_an_object` when the body is not a JSON object (the HTTP layer answers 400);
//     `unknown_event` when `event` is missing, not a string or not a known event: the payload is then not
//     inspected, only the envelope; `validation_failed` for every other problem (422).
//   - Every problem is reported, up to kMaxReportedErrors; beyond that one last entry with path "" says the
//     list was cut. Items and options are not inspected one by one when their array is over its bound.

#include "hub/ingest/money.hpp"
#include "hub/ingest/timestamp.hpp"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hub::ingest {

inline constexpr std::size_t kMaxIdBytes = 128;
inline constexpr std::size_t kMaxPaymentMethodBytes = 64;
inline constexpr std::size_t kMaxNoteBytes = 1000;
inline constexpr std::size_t kMaxAddressBytes = 1000;
inline constexpr std::size_t kMaxNameBytes = 200;
inline constexpr std::size_t kMaxCarFieldBytes = 64;
inline constexpr std::size_t kMaxItems = 200;
inline constexpr std::size_t kMaxOptionsPerItem = 50;
inline constexpr std::int64_t kMaxQuantity = 10000;
inline constexpr std::size_t kMaxReportedErrors = 100;

inline constexpr std::string_view kEventOrderCreated = "order_created";
inline constexpr std::string_view kEventOrderUpdated = "order_updated";
inline constexpr std::array<std::string_view, 3> kOrderTypes = {"DELIVERY", "DINE-IN", "PICK-UP"};
inline constexpr std::array<std::string_view, 5> kDeliveryStatuses = {"assigned", "at_pick_up", "on_the_way",
                                                                      "cancelled", "delivered"};

inline constexpr std::string_view kErrorNotAnObject = "not_an_object";
inline constexpr std::string_view kErrorUnknownEvent = "unknown_event";
inline constexpr std::string_view kErrorValidationFailed = "validation_failed";

/// One problem: `path` is a JSON pointer such as "/payload/items/0/quantity", "" for the whole body.
struct FieldError {
    std::string path;
    std::string message;

    bool operator==(const FieldError&) const = default;
};

/// One option of an item (a topping, extra or modification).
struct OrderOption {
    std::string id;
    Money price = 0;
    std::int64_t quantity = 0;

    bool operator==(const OrderOption&) const = default;
};

/// One line of an order_created payload.
struct OrderItem {
    std::string id;
    std::int64_t quantity = 0;
    Money price = 0;
    std::string note;
    std::vector<OrderOption> options;

    bool operator==(const OrderItem&) const = default;
};

/// payload.car_data of an order_created event.
struct CarData {
    std::string color, plate_number, plate_letters, car_brand;

    bool operator==(const CarData&) const = default;
};

/// payload.customer of an order_created event.
struct Customer {
    std::string name, phone;
    std::optional<std::string> address;

    bool operator==(const Customer&) const = default;
};

/// The validated payload of an order_created event.
struct OrderCreated {
    std::string external_id, payment_method, order_type, note;
    Money subtotal = 0, tax = 0, discount = 0, total = 0;
    bool is_schedule = false;
    std::optional<Timestamp> schedule_date;
    std::optional<CarData> car_data;
    std::optional<Customer> customer;
    std::vector<OrderItem> items;

    bool operator==(const OrderCreated&) const = default;
};

/// The validated payload of an order_updated event.
struct OrderUpdated {
    std::string order_id;
    std::string status;

    bool operator==(const OrderUpdated&) const = default;
};

/// The validated envelope fields common to both events.
struct Envelope {
    std::string event;
    Timestamp event_time;
    std::string branch_id;

    bool operator==(const Envelope&) const = default;
};

/// A webhook body that passed every rule.
struct Validated {
    Envelope envelope;
    std::variant<OrderCreated, OrderUpdated> payload;

    bool operator==(const Validated&) const = default;
};

/// Either `value`, or an `error_code` (kError* above) with every problem found in `errors`.
struct ValidationResult {
    std::optional<Validated> value;
    std::string error_code;
    std::vector<FieldError> errors;
};

/// Validates an already parsed webhook body; reports EVERY problem (up to kMaxReportedErrors), not just the
/// first. Thread-safe; `body` is only read.
ValidationResult validate_webhook(const boost::json::value& body);

/// validate_webhook() into `result`, which must be empty (default-constructed): the order is built where it stays.
void validate_webhook(const boost::json::value& body, ValidationResult& result);

/// Renders errors as the `details` array of the failure response: [{"path": ..., "message": ...}].
boost::json::array errors_to_json(const std::vector<FieldError>& errors);

}  // namespace hub::ingest

// Webhook bodies as the hub reads them: strict JSON parsing, then validation of order_created / order_updated.
// Beyond "no crash, no sanitizer finding" it checks what the rest of the hub relies on: an accepted body is
// within every bound of hub/ingest/validate.hpp, a refused one carries a known error code and its problems,
// a parsed document serialized and parsed again is the same document with the same verdict, and the fast path
// (hub/ingest/plain_webhook.hpp) accepts only what the full path accepts, reading the same order.

#include <boost/json/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "common/json/parse.hpp"
#include "hub/ingest/plain_webhook.hpp"
#include "hub/ingest/timestamp.hpp"
#include "hub/ingest/validate.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

using namespace hub::ingest;
using fuzz::require;
using fuzz::storable;

constexpr Money kMaxMoney = kMaxMoneyUnits * 1000;

bool money_ok(Money m) { return m >= 0 && m <= kMaxMoney; }

void check_timestamp(const Timestamp& t) {
    require(t.year >= 1 && t.year <= 9999 && t.month >= 1 && t.month <= 12, "timestamp year/month in range");
    require(t.day >= 1 && t.day <= days_in_month(t.year, t.month), "timestamp day exists");
    require(t.hour >= 0 && t.hour <= 23 && t.minute >= 0 && t.minute <= 59 && t.second >= 0 && t.second <= 59,
            "timestamp time in range");
    require(t.micros >= 0 && t.micros <= 999'999, "timestamp micros in range");
    require(!t.offset_minutes || (*t.offset_minutes >= -(14 * 60 + 59) && *t.offset_minutes <= 14 * 60 + 59),
            "timestamp offset in range");
    // to_sql() is what the store sends to PostgreSQL; it stays inside the accepted grammar.
    require(parse_timestamp(t.to_sql()) == t, "timestamp survives to_sql() and parse_timestamp()");
}

void check_created(const OrderCreated& o) {
    require(storable(o.external_id, 1, kMaxIdBytes), "payload.id bounds");
    require(storable(o.payment_method, 0, kMaxPaymentMethodBytes), "payment_method bounds");
    require(storable(o.note, 0, kMaxNoteBytes), "note bounds");
    bool known_type = false;
    for (const auto type : kOrderTypes) known_type = known_type || o.order_type == type;
    require(known_type, "order_type is a known type");
    require(money_ok(o.subtotal) && money_ok(o.tax) && money_ok(o.discount) && money_ok(o.total), "money >= 0");
    require(o.is_schedule == o.schedule_date.has_value(), "schedule_date exactly when is_schedule");
    if (o.schedule_date) check_timestamp(*o.schedule_date);
    require(!o.items.empty() && o.items.size() <= kMaxItems, "1-200 items");
    for (const OrderItem& item : o.items) {
        require(storable(item.id, 1, kMaxIdBytes), "item id bounds");
        require(item.quantity >= 1 && item.quantity <= kMaxQuantity, "item quantity bounds");
        require(money_ok(item.price), "item price >= 0");
        require(storable(item.note, 0, kMaxNoteBytes), "item note bounds");
        require(item.options.size() <= kMaxOptionsPerItem, "options per item bound");
        for (const OrderOption& option : item.options) {
            require(storable(option.id, 1, kMaxIdBytes), "option id bounds");
            require(money_ok(option.price), "option price >= 0");
            require(option.quantity >= 1 && option.quantity <= kMaxQuantity, "option quantity bounds");
        }
    }
    if (o.customer) {
        require(storable(o.customer->name, 0, kMaxNameBytes), "customer name bounds");
        const std::string& phone = o.customer->phone;
        require(phone.size() >= 7 && phone.size() <= 16 && phone[0] == '+' &&
                    phone.find_first_not_of("0123456789", 1) == std::string::npos,
                "customer phone is + and 6-15 digits");
        require(!o.customer->address || storable(*o.customer->address, 0, kMaxAddressBytes), "address bounds");
    }
    if (o.car_data) {
        require(o.car_data->color.size() == 4 || o.car_data->color.size() == 7, "car color is #rgb or #rrggbb");
        require(storable(o.car_data->plate_number, 0, kMaxCarFieldBytes) &&
                    storable(o.car_data->plate_letters, 0, kMaxCarFieldBytes) &&
                    storable(o.car_data->car_brand, 0, kMaxCarFieldBytes),
                "car field bounds");
    }
}

void check_updated(const OrderUpdated& u) {
    require(storable(u.order_id, 1, kMaxIdBytes), "order_id bounds");
    bool known_status = false;
    for (const auto status : kDeliveryStatuses) known_status = known_status || u.status == status;
    require(known_status, "status is a delivery status");
}

void check_result(const ValidationResult& r) {
    if (r.value) {
        require(r.error_code.empty() && r.errors.empty(), "an accepted body has no error");
        const Validated& v = *r.value;
        require(storable(v.envelope.branch_id, 1, kMaxIdBytes), "branch_id bounds");
        check_timestamp(v.envelope.event_time);
        if (const auto* created = std::get_if<OrderCreated>(&v.payload)) {
            require(v.envelope.event == kEventOrderCreated, "event matches the payload type");
            check_created(*created);
        } else {
            require(v.envelope.event == kEventOrderUpdated, "event matches the payload type");
            check_updated(std::get<OrderUpdated>(v.payload));
        }
        return;
    }
    require(r.error_code == kErrorNotAnObject || r.error_code == kErrorUnknownEvent ||
                r.error_code == kErrorValidationFailed,
            "a refused body has a known error code");
    require(!r.errors.empty() && r.errors.size() <= kMaxReportedErrors + 1, "a refused body lists 1-101 problems");
    for (const FieldError& e : r.errors) require(e.path.empty() || e.path[0] == '/', "paths are JSON pointers");
    require(errors_to_json(r.errors).size() == r.errors.size(), "errors_to_json keeps every problem");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // The fast path (hub/ingest/plain_webhook.hpp) accepts only what the full path accepts, with the same order.
    Validated plain;
    const bool read_plain = read_plain_webhook(text, plain);
    const common::json::ParseResult parsed = common::json::parse_strict(text);
    if (!parsed.value) {
        require(!parsed.error.empty(), "a refused document has an error message");
        require(!read_plain, "the plain path declines what parse_strict refuses");
        return 0;
    }
    const ValidationResult result = validate_webhook(*parsed.value);
    check_result(result);
    if (read_plain) {
        require(result.value.has_value(), "the plain path declines what the validator refuses");
        require(*result.value == plain, "the plain path reads the order the validator reads");
    }

    // The inbox keeps raw bodies and replays run them again: parsing is a pure function of the document.
    const std::string again = boost::json::serialize(*parsed.value);
    const common::json::ParseResult reparsed = common::json::parse_strict(again);
    require(reparsed.value.has_value(), "a serialized document parses again");
    require(*reparsed.value == *parsed.value, "a serialized document parses to the same value");
    const ValidationResult second = validate_webhook(*reparsed.value);
    require(second.value.has_value() == result.value.has_value() && second.error_code == result.error_code &&
                second.errors == result.errors,
            "the verdict does not depend on the spelling of the document");
    return 0;
}

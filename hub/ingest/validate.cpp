#include "hub/ingest/validate.hpp"

#include "hub/ingest/fields.hpp"

#include <boost/json/object.hpp>
#include <boost/json/string.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace hub::ingest {
namespace {

namespace bj = boost::json;
using namespace fields;  // NOLINT(google-build-using-namespace): the validator is made of these readers

constexpr std::string_view kColorRule = "must be # followed by 3 or 6 hex digits";
constexpr std::string_view kPhoneRule = "must be + followed by 6 to 15 digits";

/// The JSON pointer of a nested object's fields, `parent` + "/" + `key` (+ "/" + `index`), for the problems found
/// there: on the stack while short (every pointer of this schema is), so that a body allocates nothing for the
/// paths that only a problem would name.
class Pointer {
public:
    Pointer(std::string_view parent, std::string_view key, std::optional<std::size_t> index = std::nullopt) {
        std::array<char, 24> digits{};
        std::string_view number;
        if (index) number = {digits.data(), std::to_chars(digits.data(), digits.data() + digits.size(), *index).ptr};
        const std::size_t size = parent.size() + 1 + key.size() + (index ? 1 + number.size() : 0);
        if (size > inline_.size()) heap_.resize(size);
        char* const start = size > inline_.size() ? heap_.data() : inline_.data();
        char* p = std::copy(parent.begin(), parent.end(), start);
        *p++ = '/';
        p = std::copy(key.begin(), key.end(), p);
        if (index) {
            *p++ = '/';
            std::copy(number.begin(), number.end(), p);
        }
        view_ = {start, size};
    }
    Pointer(const Pointer&) = delete;  // view_ may point into inline_
    Pointer& operator=(const Pointer&) = delete;

    operator std::string_view() const { return view_; }  // NOLINT(google-explicit-constructor)

private:
    std::array<char, 64> inline_{};
    std::string heap_;
    std::string_view view_;
};

/// An optional object field: the object; null when the field is absent or null, or is not an object (then a problem
/// in `parent`).
const bj::object* optional_object(const Members& o, const Scope& parent, std::string_view key) {
    const bj::value* v = o.find(key);
    if (v == nullptr || v->is_null()) return nullptr;
    const bj::object* object = v->if_object();
    if (object == nullptr) parent.add(key, "must be an object or null");
    return object;
}

void check_car_data(const Members& o, const Scope& parent, std::optional<CarData>& out) {
    const bj::object* object = optional_object(o, parent, "car_data");
    if (object == nullptr) return;
    const Members car(*object);
    const Pointer path(parent.parent, "car_data");
    const Scope scope{parent.problems, path};
    CarData& data = out.emplace();
    data.color = required_form(car, scope, "color", is_color, [] { return kColorRule; }).value_or("");
    data.plate_number = required_text(car, scope, "plate_number", kCarFieldRule).value_or("");
    data.plate_letters = required_text(car, scope, "plate_letters", kCarFieldRule).value_or("");
    data.car_brand = required_text(car, scope, "car_brand", kCarFieldRule).value_or("");
}

void check_customer(const Members& o, const Scope& parent, std::optional<Customer>& out) {
    const bj::object* object = optional_object(o, parent, "customer");
    if (object == nullptr) return;
    const Members customer(*object);
    const Pointer path(parent.parent, "customer");
    const Scope scope{parent.problems, path};
    Customer& data = out.emplace();
    data.name = required_text(customer, scope, "name", kNameRule).value_or("");
    data.phone = required_form(customer, scope, "phone", is_phone, [] { return kPhoneRule; }).value_or("");
    if (const auto address = optional_text(customer, scope, "address", kAddressRule)) data.address.emplace(*address);
}

/// The members of the object `v` is, or none after noting in `scope` that it must be one.
std::optional<Members> members_of(const bj::value& v, const Scope& scope) {
    const bj::object* o = v.if_object();
    if (o == nullptr) {
        scope.add("", "must be an object");
        return std::nullopt;
    }
    return Members(*o);
}

/// Fills `option` (a new one) from `v`.
void check_option(const bj::value& v, const Scope& scope, OrderOption& option) {
    const auto o = members_of(v, scope);
    if (!o) return;
    option.id = required_text(*o, scope, "id", kIdRule).value_or("");
    option.price = required_money(*o, scope, "price").value_or(0);
    option.quantity = required_quantity(*o, scope, "quantity").value_or(0);
}

/// Fills `item` (a new one) from `v`.
void check_item(const bj::value& v, const Scope& scope, OrderItem& item) {
    const auto o = members_of(v, scope);
    if (!o) return;
    item.id = required_text(*o, scope, "id", kIdRule).value_or("");
    item.quantity = required_quantity(*o, scope, "quantity").value_or(0);
    item.price = required_money(*o, scope, "price").value_or(0);
    if (line_too_large(item.price, item.quantity))
        scope.add("", "price × quantity must be at most " + std::to_string(kMaxMoneyUnits));
    item.note = optional_text(*o, scope, "note", kNoteRule).value_or("");

    const bj::value* options = o->find("options");
    if (options == nullptr) {
        return;
    }
    const bj::array* list = options->if_array();
    if (list == nullptr) {
        scope.add("options", "must be an array");
        return;
    }
    if (list->size() > kMaxOptionsPerItem) {
        scope.add("options", "must contain at most " + std::to_string(kMaxOptionsPerItem) + " options");
        return;
    }
    item.options.reserve(list->size());
    for (std::size_t i = 0; i < list->size(); ++i) {
        const Pointer path(scope.parent, "options", i);
        const Scope option_scope{scope.problems, path};
        OrderOption& option = item.options.emplace_back();
        check_option((*list)[i], option_scope, option);
        // Times the item's quantity, an option's price × quantity could pass what 64 bits hold.
        if (line_too_large(option.price * option.quantity, item.quantity))
            option_scope.add(
                "", "price × quantity × the item's quantity must be at most " + std::to_string(kMaxMoneyUnits));
    }
}

void check_schedule(const Members& o, const Scope& scope, OrderCreated& order) {
    std::optional<bool> scheduled;
    if (const bj::value* v = o.find("is_schedule"); v == nullptr) {
        scope.add("is_schedule", "is required");
    } else if (!v->is_int64() || (v->get_int64() != 0 && v->get_int64() != 1)) {
        scope.add("is_schedule", "must be the integer 0 or 1");  // true, 1.0, "1" and 2 alike
    } else {
        scheduled = v->get_int64() == 1;
        order.is_schedule = *scheduled;
    }

    const bj::value* date = o.find("schedule_date");
    const bool date_absent = date == nullptr || date->is_null();
    if (scheduled.has_value() && !*scheduled) {
        if (!date_absent) {
            scope.add("schedule_date", "must be null when is_schedule is 0");
        }
        return;
    }
    if (date_absent) {
        if (scheduled.has_value() && *scheduled) {
            scope.add("schedule_date", "is required when is_schedule is 1");
        }
        return;
    }
    order.schedule_date = check_timestamp(*date, scope, "schedule_date", "must be a string or null");
}

/// Fills `order` (a new one) from `payload`; every problem goes to `problems`.
void check_order_created(const bj::object& payload, Problems& problems, OrderCreated& order) {
    const Members o(payload);
    const Scope scope{problems, "/payload"};
    order.external_id = required_text(o, scope, "id", kIdRule).value_or("");
    order.payment_method = required_text(o, scope, "payment_method", kPaymentMethodRule).value_or("");
    order.order_type = required_enum(o, scope, "order_type", kOrderTypes).value_or("");
    order.note = optional_text(o, scope, "note", kNoteRule).value_or("");
    order.subtotal = required_money(o, scope, "subtotal").value_or(0);
    order.tax = required_money(o, scope, "tax").value_or(0);
    order.discount = required_money(o, scope, "discount").value_or(0);
    order.total = required_money(o, scope, "total").value_or(0);
    check_schedule(o, scope, order);
    check_car_data(o, scope, order.car_data);
    check_customer(o, scope, order.customer);

    const bj::value* items = o.find("items");
    if (items == nullptr) {
        scope.add("items", "is required");
        return;
    }
    const bj::array* list = items->if_array();
    if (list == nullptr) {
        scope.add("items", "must be an array");
        return;
    }
    if (list->empty()) {
        scope.add("items", "must contain at least 1 item");
        return;
    }
    if (list->size() > kMaxItems) {
        scope.add("items", "must contain at most " + std::to_string(kMaxItems) + " items");
        return;
    }
    order.items.reserve(list->size());
    for (std::size_t i = 0; i < list->size(); ++i) {
        const Pointer path(scope.parent, "items", i);
        check_item((*list)[i], Scope{problems, path}, order.items.emplace_back());
    }
}

/// Fills `update` (a new one) from `payload`; every problem goes to `problems`.
void check_order_updated(const bj::object& payload, Problems& problems, OrderUpdated& update) {
    const Members o(payload);
    const Scope scope{problems, "/payload"};
    update.order_id = required_text(o, scope, "order_id", kIdRule).value_or("");
    update.status = required_enum(o, scope, "status", kDeliveryStatuses).value_or("");
}

}  // namespace

ValidationResult validate_webhook(const boost::json::value& body) {
    ValidationResult result;
    validate_webhook(body, result);
    return result;
}

void validate_webhook(const boost::json::value& body, ValidationResult& result) {
    const bj::object* object = body.if_object();
    if (object == nullptr) {
        result.error_code = kErrorNotAnObject;
        result.errors.push_back({"", "must be a JSON object"});
        return;
    }

    const Members root(*object);
    Problems problems;
    const Scope scope{problems, ""};
    Envelope envelope;

    enum class Event { unknown, created, updated };
    Event event = Event::unknown;
    if (const bj::value* v = root.find("event"); v == nullptr) {
        scope.add("event", "is required");
    } else if (!v->is_string()) {
        scope.add("event", "must be a string");
    } else if (v->get_string() == kEventOrderCreated) {
        event = Event::created;
    } else if (v->get_string() == kEventOrderUpdated) {
        event = Event::updated;
    } else {
        scope.add("event", "must be order_created or order_updated");
    }
    if (event != Event::unknown) {
        envelope.event = event == Event::created ? kEventOrderCreated : kEventOrderUpdated;
    }

    std::optional<Timestamp> event_time;
    if (const bj::value* v = root.find("event_time"); v == nullptr) {
        scope.add("event_time", "is required");
    } else {
        event_time = check_timestamp(*v, scope, "event_time");
    }
    envelope.branch_id = required_text(root, scope, "branch_id", kIdRule).value_or("");

    const bj::value* payload_value = root.find("payload");
    const bj::object* payload = payload_value == nullptr ? nullptr : payload_value->if_object();
    if (payload_value == nullptr) {
        scope.add("payload", "is required");
    } else if (payload == nullptr) {
        scope.add("payload", "must be an object");
    }

    // The payload is checked where it is kept (an order is many strings: no moves of it), dropped when refused.
    Validated& value = result.value.emplace();
    if (payload != nullptr && event == Event::created) {
        check_order_created(*payload, problems, value.payload.emplace<OrderCreated>());
    } else if (payload != nullptr && event == Event::updated) {
        check_order_updated(*payload, problems, value.payload.emplace<OrderUpdated>());
    }

    if (event == Event::unknown) {
        result.error_code = kErrorUnknownEvent;
    } else if (!problems.empty()) {
        result.error_code = kErrorValidationFailed;
    } else {
        envelope.event_time = *event_time;
        value.envelope = std::move(envelope);
        return;
    }
    result.value.reset();
    result.errors = problems.take();
}

boost::json::array errors_to_json(const std::vector<FieldError>& errors) {
    bj::array out;
    out.reserve(errors.size());
    for (const FieldError& error : errors) {
        out.push_back(bj::object{{"path", error.path}, {"message", error.message}});
    }
    return out;
}

}  // namespace hub::ingest

#include "hub/ingest/validate.hpp"

#include <boost/json/object.hpp>
#include <boost/json/string.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace hub::ingest {
namespace {

namespace bj = boost::json;

constexpr std::string_view kTimestampMessage =
    "must be a timestamp: YYYY-MM-DD HH:MM:SS or ISO 8601 with T, optional fraction and offset";

// Collects problems; a path is built only when a problem is reported, so valid bodies pay nothing for it.
class Problems {
public:
    /// Records `message` at `parent` + "/" + `key` (`key` empty: at `parent` itself).
    void add(std::string_view parent, std::string_view key, std::string message) {
        if (errors_.size() > kMaxReportedErrors) {
            return;
        }
        if (errors_.size() == kMaxReportedErrors) {
            errors_.push_back(
                {"", "too many errors; only the first " + std::to_string(kMaxReportedErrors) + " are listed"});
            return;
        }
        std::string path;
        path.reserve(parent.size() + 1 + key.size());
        path.append(parent);
        if (!key.empty()) {
            path.push_back('/');
            path.append(key);
        }
        errors_.push_back({std::move(path), std::move(message)});
    }

    bool empty() const { return errors_.empty(); }
    std::vector<FieldError> take() { return std::move(errors_); }

private:
    std::vector<FieldError> errors_;
};

// Where a field sits: the JSON pointer of its object and the problem sink.
struct Scope {
    Problems& problems;
    std::string_view parent;

    void add(std::string_view key, std::string message) const { problems.add(parent, key, std::move(message)); }
};

struct TextRule {
    std::size_t min_bytes;
    std::size_t max_bytes;
};

constexpr TextRule kIdRule{1, kMaxIdBytes};
constexpr TextRule kPaymentMethodRule{0, kMaxPaymentMethodBytes};
constexpr TextRule kNoteRule{0, kMaxNoteBytes};
constexpr TextRule kAddressRule{0, kMaxAddressBytes};
constexpr TextRule kNameRule{0, kMaxNameBytes};
constexpr TextRule kCarFieldRule{0, kMaxCarFieldBytes};

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// '#' and 3 or 6 hex digits: "#fa0", "#1A2B3C".
bool is_color(std::string_view s) {
    if ((s.size() != 1 + 3 && s.size() != 1 + 6) || s[0] != '#') {
        return false;
    }
    for (std::size_t i = 1; i < s.size(); ++i) {
        if (!is_hex(s[i])) {
            return false;
        }
    }
    return true;
}

// E.164 allows at most 15 digits; 6 is the shortest national number seen in practice.
constexpr std::size_t kMinPhoneDigits = 6;
constexpr std::size_t kMaxPhoneDigits = 15;

bool is_phone(std::string_view s) {
    if (s.size() < 1 + kMinPhoneDigits || s.size() > 1 + kMaxPhoneDigits || s[0] != '+') {
        return false;
    }
    for (std::size_t i = 1; i < s.size(); ++i) {
        if (!is_digit(s[i])) {
            return false;
        }
    }
    return true;
}

template <std::size_t N>
bool is_one_of(std::string_view s, const std::array<std::string_view, N>& allowed) {
    for (const std::string_view candidate : allowed) {
        if (s == candidate) {
            return true;
        }
    }
    return false;
}

template <std::size_t N>
std::string one_of_message(const std::array<std::string_view, N>& allowed) {
    std::string message = "must be one of ";
    for (std::size_t i = 0; i < N; ++i) {
        message.append(i == 0 ? "" : ", ").append(allowed[i]);
    }
    return message;
}

// Checks a present value as text under `rule`; reports and returns nullopt when it does not pass.
std::optional<std::string> check_text(const bj::value& v, const Scope& scope, std::string_view key, TextRule rule,
                                      std::string_view type_message = "must be a string") {
    const bj::string* s = v.if_string();
    if (s == nullptr) {
        scope.add(key, std::string(type_message));
        return std::nullopt;
    }
    const std::string_view text(s->data(), s->size());
    if (text.size() < rule.min_bytes) {
        scope.add(key, "must not be empty");
        return std::nullopt;
    }
    if (text.size() > rule.max_bytes) {
        scope.add(key, "must be at most " + std::to_string(rule.max_bytes) + " bytes");
        return std::nullopt;
    }
    if (text.find('\0') != std::string_view::npos) {
        scope.add(key, "must not contain NUL characters");
        return std::nullopt;
    }
    return std::string(text);
}

std::optional<std::string> required_text(const bj::object& o, const Scope& scope, std::string_view key, TextRule rule) {
    const bj::value* v = o.if_contains(key);
    if (v == nullptr) {
        scope.add(key, "is required");
        return std::nullopt;
    }
    return check_text(*v, scope, key, rule);
}

// Absent or null: `out` stays empty; a string: checked under `rule` (a problem is reported, `out` stays
// empty).
void optional_text(const bj::object& o, const Scope& scope, std::string_view key, TextRule rule,
                   std::optional<std::string>& out) {
    const bj::value* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) {
        return;
    }
    out = check_text(*v, scope, key, rule, "must be a string or null");
}

/// A required string field of a fixed form: its text when `fits(text)`, else nullopt and a problem (absent, not a
/// string, or `rule()`, the form in words).
template <class Fits, class Rule>
std::optional<std::string> required_form(const bj::object& o, const Scope& scope, std::string_view key, Fits fits,
                                         Rule rule) {
    const bj::value* v = o.if_contains(key);
    if (v == nullptr) {
        scope.add(key, "is required");
        return std::nullopt;
    }
    const bj::string* s = v->if_string();
    if (s == nullptr) {
        scope.add(key, "must be a string");
        return std::nullopt;
    }
    const std::string_view text(s->data(), s->size());
    if (!fits(text)) {
        scope.add(key, std::string(rule()));
        return std::nullopt;
    }
    return std::string(text);
}

template <std::size_t N>
std::optional<std::string> required_enum(const bj::object& o, const Scope& scope, std::string_view key,
                                         const std::array<std::string_view, N>& allowed) {
    return required_form(
        o, scope, key, [&allowed](std::string_view text) { return is_one_of(text, allowed); },
        [&allowed] { return one_of_message(allowed); });
}

std::optional<std::int64_t> required_quantity(const bj::object& o, const Scope& scope, std::string_view key) {
    const bj::value* v = o.if_contains(key);
    if (v == nullptr) {
        scope.add(key, "is required");
        return std::nullopt;
    }
    if (!v->is_int64() && !v->is_uint64()) {
        scope.add(key, "must be an integer");
        return std::nullopt;
    }
    // A uint64 value is above INT64_MAX, hence above the bound.
    if (v->is_uint64() || v->get_int64() < 1 || v->get_int64() > kMaxQuantity) {
        scope.add(key, "must be an integer from 1 to " + std::to_string(kMaxQuantity));
        return std::nullopt;
    }
    return v->get_int64();
}

// Rounds a finite double in [0, kMaxMoneyUnits] to thousandths, half away from zero, working on the shortest
// decimal text that round-trips the double: that text is what the partner wrote, so 20.0005 (stored as
// 20.000499999999998...) still rounds up.
Money round_to_thousandths(double d) {
    if (d == 0) {
        return 0;  // also -0.0, whose text would carry a sign
    }
    // The longest shortest-fixed text of a double below 1e9 is a subnormal: "0." + 323 zeros + digits.
    char buffer[400];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::fixed);
    if (ec != std::errc{}) {
        return static_cast<Money>(std::llround(d * 1000));  // unreachable with this buffer
    }
    const char* p = buffer;
    Money units = 0;
    for (; p != end && *p != '.'; ++p) {
        units = units * 10 + (*p - '0');
    }
    Money fraction = 0;
    int digits = 0;
    bool round_up = false;
    if (p != end) {
        ++p;
        for (; p != end && digits < 4; ++p, ++digits) {
            if (digits < 3) {
                fraction = fraction * 10 + (*p - '0');
            } else {
                round_up = *p >= '5';
            }
        }
    }
    for (; digits < 3; ++digits) {
        fraction *= 10;
    }
    return units * 1000 + fraction + (round_up ? 1 : 0);
}

// Converts a JSON number to Money; on failure returns the problem as a message.
std::variant<Money, std::string_view> convert_money(const bj::value& v) {
    static constexpr std::string_view kNegative = "must not be negative";
    static constexpr std::string_view kTooLarge = "must be at most 1000000000";
    static_assert(kMaxMoneyUnits == 1'000'000'000, "update kTooLarge");
    switch (v.kind()) {
        case bj::kind::int64: {
            const std::int64_t i = v.get_int64();
            if (i < 0) {
                return kNegative;
            }
            if (i > kMaxMoneyUnits) {
                return kTooLarge;
            }
            return static_cast<Money>(i * 1000);
        }
        case bj::kind::uint64: return kTooLarge;  // Boost.JSON uses uint64 only above INT64_MAX
        case bj::kind::double_: {
            const double d = v.get_double();
            if (!std::isfinite(d)) {
                return std::string_view("must be a finite number");
            }
            if (d < 0) {
                return kNegative;
            }
            if (d > static_cast<double>(kMaxMoneyUnits)) {
                return kTooLarge;
            }
            return round_to_thousandths(d);
        }
        default: return std::string_view("must be a number");
    }
}

std::optional<Money> required_money(const bj::object& o, const Scope& scope, std::string_view key) {
    const bj::value* v = o.if_contains(key);
    if (v == nullptr) {
        scope.add(key, "is required");
        return std::nullopt;
    }
    auto converted = convert_money(*v);
    if (const auto* problem = std::get_if<std::string_view>(&converted)) {
        scope.add(key, std::string(*problem));
        return std::nullopt;
    }
    return std::get<Money>(converted);
}

std::optional<Timestamp> check_timestamp(const bj::value& v, const Scope& scope, std::string_view key,
                                         std::string_view type_message = "must be a string") {
    const bj::string* s = v.if_string();
    if (s == nullptr) {
        scope.add(key, std::string(type_message));
        return std::nullopt;
    }
    auto ts = parse_timestamp(std::string_view(s->data(), s->size()));
    if (!ts) {
        scope.add(key, std::string(kTimestampMessage));
    }
    return ts;
}

constexpr std::string_view kColorRule = "must be # followed by 3 or 6 hex digits";
constexpr std::string_view kPhoneRule = "must be + followed by 6 to 15 digits";

/// An optional object field: the object and the JSON pointer of its fields; no object when the field is absent or
/// null, or is not an object (then a problem in `parent`).
struct OptionalObject {
    const bj::object* object = nullptr;
    std::string path;
};

OptionalObject optional_object(const bj::object& o, const Scope& parent, std::string_view key) {
    const bj::value* v = o.if_contains(key);
    if (v == nullptr || v->is_null()) return {};
    const bj::object* object = v->if_object();
    if (object == nullptr) {
        parent.add(key, "must be an object or null");
        return {};
    }
    return {object, std::string(parent.parent) + "/" + std::string(key)};
}

std::optional<CarData> check_car_data(const bj::object& o, const Scope& parent) {
    const OptionalObject field = optional_object(o, parent, "car_data");
    if (field.object == nullptr) return std::nullopt;
    const bj::object* car = field.object;
    const Scope scope{parent.problems, field.path};
    CarData data;
    data.color = required_form(*car, scope, "color", is_color, [] { return kColorRule; }).value_or("");
    data.plate_number = required_text(*car, scope, "plate_number", kCarFieldRule).value_or("");
    data.plate_letters = required_text(*car, scope, "plate_letters", kCarFieldRule).value_or("");
    data.car_brand = required_text(*car, scope, "car_brand", kCarFieldRule).value_or("");
    return data;
}

std::optional<Customer> check_customer(const bj::object& o, const Scope& parent) {
    const OptionalObject field = optional_object(o, parent, "customer");
    if (field.object == nullptr) return std::nullopt;
    const bj::object* customer = field.object;
    const Scope scope{parent.problems, field.path};
    Customer data;
    data.name = required_text(*customer, scope, "name", kNameRule).value_or("");
    data.phone = required_form(*customer, scope, "phone", is_phone, [] { return kPhoneRule; }).value_or("");
    optional_text(*customer, scope, "address", kAddressRule, data.address);
    return data;
}

// The POS order carries line totals (product.md section 6): price × quantity per item, and option price × option
// quantity × item quantity per modifier. Each is money, so it has the bound of an amount, in thousandths.
constexpr Money kMaxLineTotal = kMaxMoneyUnits * 1000;

/// True when `amount` × `quantity` passes kMaxLineTotal, computed without overflow (`amount` is below 10^16).
bool line_too_large(Money amount, std::int64_t quantity) { return quantity > 0 && amount > kMaxLineTotal / quantity; }

/// The object `v` is, or null after noting in `scope` that it must be one.
const bj::object* object_in(const bj::value& v, const Scope& scope) {
    const bj::object* o = v.if_object();
    if (o == nullptr) scope.add("", "must be an object");
    return o;
}

OrderOption check_option(const bj::value& v, const Scope& scope) {
    OrderOption option;
    const bj::object* o = object_in(v, scope);
    if (o == nullptr) return option;
    option.id = required_text(*o, scope, "id", kIdRule).value_or("");
    option.price = required_money(*o, scope, "price").value_or(0);
    option.quantity = required_quantity(*o, scope, "quantity").value_or(0);
    return option;
}

OrderItem check_item(const bj::value& v, const Scope& scope) {
    OrderItem item;
    const bj::object* o = object_in(v, scope);
    if (o == nullptr) return item;
    item.id = required_text(*o, scope, "id", kIdRule).value_or("");
    item.quantity = required_quantity(*o, scope, "quantity").value_or(0);
    item.price = required_money(*o, scope, "price").value_or(0);
    if (line_too_large(item.price, item.quantity))
        scope.add("", "price × quantity must be at most " + std::to_string(kMaxMoneyUnits));
    std::optional<std::string> note;
    optional_text(*o, scope, "note", kNoteRule, note);
    item.note = std::move(note).value_or("");

    const bj::value* options = o->if_contains("options");
    if (options == nullptr) {
        return item;
    }
    const bj::array* list = options->if_array();
    if (list == nullptr) {
        scope.add("options", "must be an array");
        return item;
    }
    if (list->size() > kMaxOptionsPerItem) {
        scope.add("options", "must contain at most " + std::to_string(kMaxOptionsPerItem) + " options");
        return item;
    }
    item.options.reserve(list->size());
    std::string path;
    for (std::size_t i = 0; i < list->size(); ++i) {
        path.assign(scope.parent).append("/options/").append(std::to_string(i));
        const Scope option_scope{scope.problems, path};
        item.options.push_back(check_option((*list)[i], option_scope));
        const OrderOption& option = item.options.back();
        // Times the item's quantity, an option's price × quantity could pass what 64 bits hold.
        if (line_too_large(option.price * option.quantity, item.quantity))
            option_scope.add(
                "", "price × quantity × the item's quantity must be at most " + std::to_string(kMaxMoneyUnits));
    }
    return item;
}

void check_schedule(const bj::object& o, const Scope& scope, OrderCreated& order) {
    std::optional<bool> scheduled;
    if (const bj::value* v = o.if_contains("is_schedule"); v == nullptr) {
        scope.add("is_schedule", "is required");
    } else if (!v->is_int64() || (v->get_int64() != 0 && v->get_int64() != 1)) {
        scope.add("is_schedule", "must be the integer 0 or 1");  // true, 1.0, "1" and 2 alike
    } else {
        scheduled = v->get_int64() == 1;
        order.is_schedule = *scheduled;
    }

    const bj::value* date = o.if_contains("schedule_date");
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

OrderCreated check_order_created(const bj::object& o, Problems& problems) {
    const Scope scope{problems, "/payload"};
    OrderCreated order;
    order.external_id = required_text(o, scope, "id", kIdRule).value_or("");
    order.payment_method = required_text(o, scope, "payment_method", kPaymentMethodRule).value_or("");
    order.order_type = required_enum(o, scope, "order_type", kOrderTypes).value_or("");
    std::optional<std::string> note;
    optional_text(o, scope, "note", kNoteRule, note);
    order.note = std::move(note).value_or("");
    order.subtotal = required_money(o, scope, "subtotal").value_or(0);
    order.tax = required_money(o, scope, "tax").value_or(0);
    order.discount = required_money(o, scope, "discount").value_or(0);
    order.total = required_money(o, scope, "total").value_or(0);
    check_schedule(o, scope, order);
    order.car_data = check_car_data(o, scope);
    order.customer = check_customer(o, scope);

    const bj::value* items = o.if_contains("items");
    if (items == nullptr) {
        scope.add("items", "is required");
        return order;
    }
    const bj::array* list = items->if_array();
    if (list == nullptr) {
        scope.add("items", "must be an array");
        return order;
    }
    if (list->empty()) {
        scope.add("items", "must contain at least 1 item");
        return order;
    }
    if (list->size() > kMaxItems) {
        scope.add("items", "must contain at most " + std::to_string(kMaxItems) + " items");
        return order;
    }
    order.items.reserve(list->size());
    std::string path;
    for (std::size_t i = 0; i < list->size(); ++i) {
        path.assign("/payload/items/").append(std::to_string(i));
        order.items.push_back(check_item((*list)[i], Scope{problems, path}));
    }
    return order;
}

OrderUpdated check_order_updated(const bj::object& o, Problems& problems) {
    const Scope scope{problems, "/payload"};
    OrderUpdated update;
    update.order_id = required_text(o, scope, "order_id", kIdRule).value_or("");
    update.status = required_enum(o, scope, "status", kDeliveryStatuses).value_or("");
    return update;
}

}  // namespace

std::optional<Money> to_money(const boost::json::value& number) {
    auto converted = convert_money(number);
    if (const Money* amount = std::get_if<Money>(&converted)) {
        return *amount;
    }
    return std::nullopt;
}

std::string format_money(Money amount) {
    const bool negative = amount < 0;
    // Work on the magnitude as unsigned so that INT64_MIN cannot overflow.
    const auto magnitude = negative ? 0 - static_cast<std::uint64_t>(amount) : static_cast<std::uint64_t>(amount);
    char buffer[32];
    const int n = std::snprintf(buffer, sizeof buffer, "%s%llu.%03llu", negative ? "-" : "",
                                static_cast<unsigned long long>(magnitude / 1000),
                                static_cast<unsigned long long>(magnitude % 1000));
    return {buffer, static_cast<std::size_t>(n)};
}

ValidationResult validate_webhook(const boost::json::value& body) {
    ValidationResult result;
    const bj::object* root = body.if_object();
    if (root == nullptr) {
        result.error_code = kErrorNotAnObject;
        result.errors.push_back({"", "must be a JSON object"});
        return result;
    }

    Problems problems;
    const Scope scope{problems, ""};
    Envelope envelope;

    enum class Event { unknown, created, updated };
    Event event = Event::unknown;
    if (const bj::value* v = root->if_contains("event"); v == nullptr) {
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
    if (const bj::value* v = root->if_contains("event_time"); v == nullptr) {
        scope.add("event_time", "is required");
    } else {
        event_time = check_timestamp(*v, scope, "event_time");
    }
    envelope.branch_id = required_text(*root, scope, "branch_id", kIdRule).value_or("");

    const bj::value* payload_value = root->if_contains("payload");
    const bj::object* payload = payload_value == nullptr ? nullptr : payload_value->if_object();
    if (payload_value == nullptr) {
        scope.add("payload", "is required");
    } else if (payload == nullptr) {
        scope.add("payload", "must be an object");
    }

    std::optional<std::variant<OrderCreated, OrderUpdated>> data;
    if (payload != nullptr && event == Event::created) {
        data.emplace(check_order_created(*payload, problems));
    } else if (payload != nullptr && event == Event::updated) {
        data.emplace(check_order_updated(*payload, problems));
    }

    if (event == Event::unknown) {
        result.error_code = kErrorUnknownEvent;
    } else if (!problems.empty()) {
        result.error_code = kErrorValidationFailed;
    } else {
        envelope.event_time = *event_time;
        result.value = Validated{std::move(envelope), std::move(*data)};
        return result;
    }
    result.errors = problems.take();
    return result;
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

#include "pos/logic/order_request.hpp"

#include <array>
#include <cmath>
#include <utility>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "common/text/names.hpp"
#include "pos/logic/text.hpp"

namespace pos {
namespace {

namespace json = boost::json;

// The wire names of OrderStatus, in its order.
constexpr std::array<std::string_view, 6> kStatusNames = {"PENDING",  "ACCEPTED", "PREPARING",
                                                          "CANCELED", "REJECTED", "TIME_OUT"};

// Laravel shows `branch_id` as "branch id" and keeps dotted paths as they are.
std::string attribute(std::string key) {
    for (char& c : key) {
        if (c == '_') {
            c = ' ';
        }
    }
    return key;
}

// Reads the fields of one JSON object and records problems under `<prefix>.<field>`.
class FieldReader {
public:
    FieldReader(const json::object& object, std::string prefix, ValidationErrors& errors)
        : object_(object), prefix_(std::move(prefix)), errors_(errors) {}

    std::string key(std::string_view field) const {
        return prefix_.empty() ? std::string(field) : prefix_ + "." + std::string(field);
    }

    // The field's value, or nullptr when it is absent or null (Laravel treats both as missing).
    const json::value* find(std::string_view field) const {
        const json::value* value = object_.if_contains(field);
        return value != nullptr && !value->is_null() ? value : nullptr;
    }

    // The field's value when it is present and `is_kind` holds for it; nullptr when it is absent, or (`message`
    // recorded) of another kind.
    const json::value* find_kind(std::string_view field, bool (json::value::*is_kind)() const noexcept,
                                 std::string message) {
        const json::value* value = find(field);
        if (value != nullptr && !(value->*is_kind)()) {
            fail(field, std::move(message));
            return nullptr;
        }
        return value;
    }

    // Records `message` with Laravel's `:attribute` placeholder replaced by the field's display name.
    void fail(std::string_view field, std::string message) {
        const std::string name = key(field);
        const std::size_t at = message.find(":attribute");
        if (at != std::string::npos) {
            message.replace(at, std::string_view(":attribute").size(), attribute(name));
        }
        add_error(errors_, name, std::move(message));
    }

    void fail_required(std::string_view field) { fail(field, "The :attribute field is required."); }

    std::string required_string(std::string_view field, std::size_t max_length) {
        const json::value* value = find(field);
        if (value == nullptr) {
            fail_required(field);
            return {};
        }
        if (!value->is_string()) {
            fail(field, "The :attribute must be a string.");
            return {};
        }
        const std::string_view text = value->get_string();
        if (is_blank(text)) {
            fail_required(field);
            return {};
        }
        return checked_length(field, text, max_length);
    }

    std::optional<std::string> optional_string(std::string_view field, std::size_t max_length) {
        const json::value* value = find_kind(field, &json::value::is_string, "The :attribute must be a string.");
        if (value == nullptr) {
            return std::nullopt;
        }
        return checked_length(field, value->get_string(), max_length);
    }

    Money required_money(std::string_view field) {
        const json::value* value = find(field);
        if (value == nullptr) {
            fail_required(field);
            return 0;
        }
        if (!value->is_number()) {
            fail(field, "The :attribute must be a number.");
            return 0;
        }
        const double approximate = value->to_number<double>();
        if (std::isnan(approximate)) {
            fail(field, "The :attribute must be a number.");
            return 0;
        }
        if (approximate < 0) {
            fail(field, "The :attribute must be at least 0.");
            return 0;
        }
        const std::optional<Money> money = money_from_json(*value);
        if (!money) {
            fail(field, "The :attribute must not be greater than " + format_money(kMaxMoney) + ".");
            return 0;
        }
        return *money;
    }

    std::int64_t required_quantity(std::string_view field) {
        const json::value* value = find(field);
        if (value == nullptr) {
            fail_required(field);
            return 0;
        }
        double number = 0;
        if (value->is_int64()) {
            number = static_cast<double>(value->get_int64());
        } else if (value->is_uint64()) {
            number = static_cast<double>(value->get_uint64());
        } else if (value->is_double() && std::isfinite(value->get_double()) &&
                   std::trunc(value->get_double()) == value->get_double()) {
            number = value->get_double();
        } else {
            fail(field, "The :attribute must be an integer.");
            return 0;
        }
        if (number < 1) {
            fail(field, "The :attribute must be at least 1.");
            return 0;
        }
        if (number > static_cast<double>(kMaxQuantity)) {
            fail(field, "The :attribute must not be greater than " + std::to_string(kMaxQuantity) + ".");
            return 0;
        }
        return static_cast<std::int64_t>(number);
    }

    // The field as an array of at most `max_items`; nullptr (error recorded) when it is something else.
    const json::array* array(std::string_view field, std::size_t max_items) {
        const json::value* value = find_kind(field, &json::value::is_array, "The :attribute must be an array.");
        if (value == nullptr) {
            return nullptr;
        }
        if (value->get_array().size() > max_items) {
            fail(field, "The :attribute must not have more than " + std::to_string(max_items) + " items.");
            return nullptr;
        }
        return &value->get_array();
    }

    ValidationErrors& errors() { return errors_; }

private:
    std::string checked_length(std::string_view field, std::string_view text, std::size_t max_length) {
        if (utf8_length(text) > max_length) {
            fail(field, "The :attribute must not be greater than " + std::to_string(max_length) + " characters.");
            return {};
        }
        return std::string(text);
    }

    const json::object& object_;
    std::string prefix_;
    ValidationErrors& errors_;
};

// An array element that must be an object; nullptr (error recorded) otherwise.
const json::object* element_object(const json::value& element, const std::string& key, ValidationErrors& errors) {
    if (!element.is_object()) {
        add_error(errors, key, "The " + attribute(key) + " must be an object.");
        return nullptr;
    }
    return &element.get_object();
}

/// The fields a product line and a modifier share: id, quantity, total and note.
template <class Line>
void read_line(FieldReader& reader, Line& line) {
    line.id = reader.required_string("id", kMaxIdLength);
    line.quantity = reader.required_quantity("quantity");
    line.total = reader.required_money("total");
    line.note = reader.optional_string("note", kMaxNoteLength);
}

OrderModifier read_modifier(const json::object& object, const std::string& prefix, ValidationErrors& errors) {
    FieldReader reader(object, prefix, errors);
    OrderModifier modifier;
    read_line(reader, modifier);
    return modifier;
}

OrderProduct read_product(const json::object& object, const std::string& prefix, ValidationErrors& errors) {
    FieldReader reader(object, prefix, errors);
    OrderProduct product;
    read_line(reader, product);
    if (const json::array* modifiers = reader.array("modifiers", kMaxModifiers)) {
        for (std::size_t i = 0; i < modifiers->size(); ++i) {
            const std::string key = reader.key("modifiers") + "." + std::to_string(i);
            // A placeholder keeps later modifiers at their request positions in the draft.
            const json::object* modifier = element_object((*modifiers)[i], key, errors);
            product.modifiers.push_back(modifier != nullptr ? read_modifier(*modifier, key, errors) : OrderModifier{});
        }
    }
    return product;
}

std::optional<OrderCustomer> read_customer(FieldReader& reader) {
    const json::value* value =
        reader.find_kind("customer", &json::value::is_object, "The :attribute must be an object.");
    if (value == nullptr) {
        return std::nullopt;
    }
    FieldReader customer_reader(value->get_object(), "customer", reader.errors());
    OrderCustomer customer;
    customer.name = customer_reader.optional_string("name", kMaxIdLength);
    customer.phone = customer_reader.optional_string("phone", kMaxPhoneLength);
    return customer;
}

OrderStatus read_status(FieldReader& reader) {
    const json::value* value = reader.find_kind("status", &json::value::is_string, "The :attribute must be a string.");
    if (value == nullptr) {
        return OrderStatus::pending;
    }
    const auto status = parse_order_status(value->get_string());
    if (!status) {
        reader.fail("status", "The selected :attribute is invalid.");
        return OrderStatus::pending;
    }
    return *status;
}

}  // namespace

std::string_view to_string(OrderStatus status) {
    const std::string_view name = common::text::name_of(kStatusNames, status);
    return name.empty() ? "PENDING" : name;
}

std::optional<OrderStatus> parse_order_status(std::string_view name) {
    return common::text::value_named<OrderStatus>(kStatusNames, name);
}

ParsedOrderRequest parse_order_request(const boost::json::value& body) {
    ParsedOrderRequest result;
    if (!body.is_object()) {
        add_error(result.errors, "body", "The request body must be a JSON object.");
        return result;
    }
    FieldReader reader(body.get_object(), "", result.errors);
    OrderRequest order;
    order.branch_id = reader.required_string("branch_id", kMaxIdLength);
    order.brand_id = reader.required_string("brand_id", kMaxIdLength);
    order.partner_reference = reader.required_string("partner_reference", kMaxIdLength);
    order.note = reader.optional_string("note", kMaxNoteLength);
    order.total = reader.required_money("total");
    order.subtotal = reader.required_money("subtotal");
    order.tax = reader.required_money("tax");
    order.status = read_status(reader);
    order.customer = read_customer(reader);

    // Laravel's `required` refuses an empty array as well as a missing one.
    const json::array* products = reader.array("products", kMaxProducts);
    if (products == nullptr || products->empty()) {
        if (!result.errors.contains("products")) {
            reader.fail_required("products");
        }
    } else {
        for (std::size_t i = 0; i < products->size(); ++i) {
            const std::string key = "products." + std::to_string(i);
            const json::object* product = element_object((*products)[i], key, result.errors);
            order.products.push_back(product != nullptr ? read_product(*product, key, result.errors) : OrderProduct{});
        }
    }

    if (result.errors.empty()) {
        result.order = std::move(order);
    } else {
        result.draft = std::move(order);
    }
    return result;
}

}  // namespace pos

#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "pos/logic/money.hpp"
#include "pos/logic/validation_errors.hpp"

namespace pos {

/// Longest id, partner reference, customer name accepted (characters), the classic VARCHAR(191) of Laravel.
inline constexpr std::size_t kMaxIdLength = 191;
/// Longest note (order, product line or modifier) accepted, in characters.
inline constexpr std::size_t kMaxNoteLength = 2000;
/// Longest customer phone accepted, in characters.
inline constexpr std::size_t kMaxPhoneLength = 50;
/// Most product lines in one order.
inline constexpr std::size_t kMaxProducts = 500;
/// Most modifiers on one product line.
inline constexpr std::size_t kMaxModifiers = 100;
/// Largest quantity of a product line or modifier.
inline constexpr std::int64_t kMaxQuantity = 100'000;

/// The initial status of a POS order (interface 3.1).
enum class OrderStatus { pending, accepted, preparing, canceled, rejected, time_out };

/// The wire name of `status` ("PENDING", "TIME_OUT", ...).
std::string_view to_string(OrderStatus status);

/// The status named `name` (exact, upper case); nullopt for anything else.
std::optional<OrderStatus> parse_order_status(std::string_view name);

/// `customer` of the order; both fields optional.
struct OrderCustomer {
    std::optional<std::string> name;
    std::optional<std::string> phone;
};

/// One entry of `products[].modifiers`.
struct OrderModifier {
    std::string id;
    std::int64_t quantity = 0;
    Money total = 0;
    std::optional<std::string> note;
};

/// One entry of `products`.
struct OrderProduct {
    std::string id;
    std::int64_t quantity = 0;
    Money total = 0;
    std::optional<std::string> note;
    std::vector<OrderModifier> modifiers;
};

/// A validated `POST /api/orders` body (interface 2.1). Strings are kept exactly as sent.
struct OrderRequest {
    std::string branch_id;
    std::string brand_id;
    std::string partner_reference;
    std::optional<std::string> note;
    Money total = 0;
    Money subtotal = 0;
    Money tax = 0;
    OrderStatus status = OrderStatus::pending;
    std::optional<OrderCustomer> customer;
    std::vector<OrderProduct> products;
};

/// The outcome of parse_order_request: `order` is set exactly when `errors` is empty.
struct ParsedOrderRequest {
    std::optional<OrderRequest> order;
    ValidationErrors errors;
    /// When `errors` is not empty: every field that could be read, with products and modifiers at their request
    /// positions (an entry that failed a rule is left empty, e.g. an empty id), so that the menu check can report
    /// its problems in the same answer. Empty otherwise.
    OrderRequest draft;
};

/// Validates an already parsed request body against interface 2.1 and returns the typed order or every
/// problem at once, with Laravel's keys and wording ("The branch id field is required."). A body that is not
/// a JSON object gives only `{"body": ["The request body must be a JSON object."]}`. Unknown fields are
/// ignored. Type-strict: numbers sent as strings are refused; an integral float such as 2.0 counts as an
/// integer. Per field only the first failing rule is reported. Does not compare totals with the lines (the
/// hub derives them from platform data that may carry discounts). Pure; thread-safe.
ParsedOrderRequest parse_order_request(const boost::json::value& body);

}  // namespace pos

#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <pqxx/connection_base>
#include <span>
#include <string>
#include <vector>

#include "pos/logic/order_request.hpp"
#include "pos/logic/validation_errors.hpp"

namespace pos::store {

/// A `POST /api/orders` request after authentication and request validation.
struct OrderSubmission {
    std::string token_brand;                ///< the brand of the bearer token
    std::optional<std::string> body_brand;  ///< the body's `brand_id` when it is a string (even if invalid)
    ParsedOrderRequest parsed;              ///< parse_order_request of the body
    std::string raw_body;                   ///< stored as jsonb
};

/// How submit_order answered.
enum class SubmitOutcome { created, existing, forbidden, invalid };

/// The answer of submit_order: `order_id` for created and existing, `errors` for invalid.
struct SubmitResult {
    SubmitOutcome outcome = SubmitOutcome::invalid;
    std::string order_id;
    ValidationErrors errors;
};

/// Decides and stores one order, in one transaction:
/// - `brand_id` of another brand than the token's: forbidden when that brand exists, else invalid with
///   "The selected brand id is invalid." added to the request's errors;
/// - a valid request whose partner_reference the brand already used: existing, with the first order's id (even
///   if the menu changed since), nothing written;
/// - request errors and menu errors (check_order_against_menu on the order or its draft) together: invalid;
/// - otherwise the order, its lines and modifiers, its status and the raw body are stored: created. Concurrent
///   identical submissions store one order (INSERT ... ON CONFLICT DO NOTHING, then read the winner's id) and
///   all answer with its id.
SubmitResult submit_order(pqxx::connection_base& c, const OrderSubmission& submission);

/// Decides and stores many submissions at once (the intake's group commit), each with the answer submit_order
/// would give it alone: the repeated references and the menu they name are read in one statement, and the orders
/// to store are written with their lines and modifiers in one statement and one commit. Two submissions of the
/// batch with the same reference store one order and both answer with its id. When a statement fails for a
/// reason other than the store being unavailable (a body PostgreSQL refuses, say), the submissions not yet
/// answered are decided one by one with submit_order; the one that fails alone gets `errors[k]`. When the store
/// becomes unavailable, every submission not answered yet gets that error (common::db::is_unavailable); the ones
/// answered before keep their answers (their orders are stored).
void submit_orders(pqxx::connection_base& c, std::span<const OrderSubmission> submissions,
                   std::span<SubmitResult> results, std::span<std::exception_ptr> errors);

/// One received order as `orders list` shows it.
struct OrderSummary {
    std::string id;
    std::string created_at;  ///< UTC, ISO 8601 with milliseconds
    std::string brand_id;
    std::string branch_id;
    std::string partner_reference;
    std::string status;
    std::string total;  ///< decimal text, three fraction digits
    std::size_t lines = 0;
    std::string json;  ///< the whole order with its lines and modifiers, as a JSON object text
};

/// The newest `limit` orders, newest first.
std::vector<OrderSummary> list_orders(pqxx::connection_base& c, std::size_t limit);

}  // namespace pos::store

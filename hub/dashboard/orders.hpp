#pragma once

// The JSON shapes of orders, shared by the API and the event feed (their SQL: hub/dashboard/queries.hpp).

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace pqxx {
class row;
class transaction_base;
}  // namespace pqxx

namespace hub::dashboard {

/// The order summary of a row with the columns of sql::kSummaryColumns.
boost::json::object summary_json(const pqxx::row& r);

/// What is wrong with an order's delivery to the POS, for the board: "rejected", "unreachable" (dead or
/// retrying after errors), "auth_failed", or "" when nothing is.
std::string problem_of(std::string_view job_state, int attempts, std::string_view last_error);

/// The list filters of GET /api/dashboard/orders.
enum class Filter { all, today, active, problems };
std::optional<Filter> parse_filter(std::string_view text);

/// True when `text` is a real time in ISO 8601 with an offset, as GET orders takes for `since`:
/// `YYYY-MM-DDTHH:MM[:SS[.ffffff]](Z|+HH:MM|-HH:MM)`, a date that exists (no 2026-02-30), hours 0 to 23, minutes and
/// seconds 0 to 59, an offset of at most 15:59 (PostgreSQL's bound) and a year from 1.
bool valid_since(std::string_view text);

/// Every detail of one order: items with options, customer (phone masked unless `reveal_phone`), car, schedule,
/// status timeline and POS attempts; nullopt when there is no such order in the user's scope.
std::optional<boost::json::object> order_detail(pqxx::transaction_base& tx, const std::string& order_id,
                                                const std::string& user_id, bool reveal_phone);

}  // namespace hub::dashboard

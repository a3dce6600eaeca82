#pragma once

// The dashboard's SQL and the JSON shapes of orders, shared by the API and the event feed.

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace pqxx {
class row;
class transaction_base;
}  // namespace pqxx

namespace hub::dashboard {

/// A SQL expression for the ISO 8601 text (UTC, milliseconds, `Z`) of the timestamptz `column`; null stays null.
std::string iso(const std::string& column);

/// Columns of an order summary (alias o = hub.orders, p = hub.partners, j = hub.forward_jobs); kSummaryWidth of them.
extern const std::string kSummaryColumns;
/// FROM clause joining o, p and j.
extern const std::string kSummaryFrom;
inline constexpr int kSummaryWidth = 15;

/// The summary at columns [first, first + kSummaryWidth) of `r`.
boost::json::object summary_json(const pqxx::row& r, int first);

/// What is wrong with an order's delivery to the POS, for the board: "rejected", "unreachable" (dead or
/// retrying after errors), "auth_failed", or "" when nothing is.
std::string problem_of(std::string_view job_state, int attempts, std::string_view last_error);

/// A SQL condition true for branch ids the user `$n` may see (`column IN (...)`).
std::string in_scope(const std::string& column, const std::string& user_param);

/// The list filters of GET /api/dashboard/orders.
enum class Filter { all, today, active, problems };
std::optional<Filter> parse_filter(std::string_view text);

/// Every detail of one order: items with options, customer (phone masked unless `reveal_phone`), car, schedule,
/// status timeline and POS attempts; nullopt when there is no such order in the user's scope.
std::optional<boost::json::object> order_detail(pqxx::transaction_base& tx, const std::string& order_id,
                                                const std::string& user_id, bool reveal_phone);

}  // namespace hub::dashboard

#pragma once

// Orders as the operator sees them, for `orderhub order ...`, `orderhub audit ORDER_ID` and the operator HTTP API
// (hub/admin/refusal.hpp). Resending is hub/forward/resend.hpp.
//
// Decisions:
//   - Lists are newest first (hub order ids are UUIDv7: their order is the order of arrival); `before` continues a
//     list after the last id of the previous page.
//   - `state` matches the forwarding job's state or the delivery status.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <cstdint>
#include <string>

namespace pqxx {
class row;
class transaction_base;
}  // namespace pqxx

namespace hub::admin {

/// Which orders to list.
struct OrderFilter {
    std::string branch;  ///< empty: any
    std::string state;   ///< empty: any
    std::string before;  ///< empty: from the newest; else only ids below it
    std::int64_t limit = 100;
};

/// Orders, newest first: id, partner, external_id, branch_id, total, delivery_status, forwarding, created_at, test
/// (an operator's test order: hub/admin/order_create_rules.hpp).
/// Refusals: invalid limit (1..100000).
boost::json::array list_orders(pqxx::transaction_base& tx, const OrderFilter& filter);

/// The one row `sql` (with the order id as $1) reads about order `id`. Refusals: not_found (no row).
pqxx::row order_row(pqxx::transaction_base& tx, const std::string& sql, const std::string& id);

/// One order with its items, options and forwarding state. Refusals: not_found.
boost::json::object show_order(pqxx::transaction_base& tx, const std::string& id);

/// The hub order id of `given`: itself, or the order the platform order id `given` names when exactly one partner
/// used it. Refusals: not_found; conflict when several partners used it.
std::string resolve_order_id(pqxx::transaction_base& tx, const std::string& given);

/// The status log of order `id`, oldest first (empty for an unknown id).
boost::json::array order_audit(pqxx::transaction_base& tx, const std::string& id);

}  // namespace hub::admin
